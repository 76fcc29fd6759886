package sky

import (
	"math/rand/v2"
	"testing"
)

// bruteCut enumerates every labelling of a tiny grid and returns the minimum energy.
func bruteCut(w, h int, costS, costT []float32, pair map[[2]int]float32) float64 {
	n := w * h
	best := 1e300
	for mask := 0; mask < 1<<n; mask++ {
		e := 0.0
		for p := 0; p < n; p++ {
			if mask>>p&1 == 1 {
				e += float64(costS[p])
			} else {
				e += float64(costT[p])
			}
		}
		for k, c := range pair {
			if (mask >> k[0] & 1) != (mask >> k[1] & 1) {
				e += float64(c)
			}
		}
		best = min(best, e)
	}
	return best
}

func TestMaxflowMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := 0; trial < 300; trial++ {
		w, h := 1+rng.IntN(4), 1+rng.IntN(3)
		n := w * h
		g := newCutGraph(w, h)
		costS, costT := make([]float32, n), make([]float32, n)
		pair := map[[2]int]float32{}
		for p := 0; p < n; p++ {
			costS[p], costT[p] = float32(rng.IntN(20)), float32(rng.IntN(20))
			g.setTerminal(p, costS[p], costT[p])
			for d := 0; d < gridK; d += 2 { // each undirected edge once
				q := g.neighbour(int32(p), d)
				if q < 0 {
					continue
				}
				c := float32(rng.IntN(12))
				g.setPair(p, d, c)
				pair[[2]int{p, int(q)}] = c
			}
		}
		g.solve()
		e := 0.0
		for p := 0; p < n; p++ {
			if g.sourceSide(p) {
				e += float64(costS[p])
			} else {
				e += float64(costT[p])
			}
		}
		for k, c := range pair {
			if g.sourceSide(k[0]) != g.sourceSide(k[1]) {
				e += float64(c)
			}
		}
		if want := bruteCut(w, h, costS, costT, pair); e != want {
			t.Fatalf("trial %d (%dx%d): cut energy %v, minimum %v", trial, w, h, e, want)
		}
	}
}
