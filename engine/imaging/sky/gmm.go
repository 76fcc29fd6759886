package sky

import (
	"cmp"
	"math"
	"slices"
)

// gmm is a Gaussian mixture over CIELAB colours: the per-image colour model of sky
// and of everything else, learnt from confident pixels.
type gmm struct {
	comps []gauss
}

type gauss struct {
	weight float64
	mean   [3]float64
	inv    [9]float64 // inverse covariance
	logNrm float64    // log(weight) - log((2*pi)^(3/2) * sqrt(det))
}

// gmmMaxSamples bounds the fitting cost; colours repeat heavily in a photo.
const gmmMaxSamples = 8000

// covFloor is added to the covariance diagonal (Lab units squared) so that flat,
// clipped skies do not give a degenerate, infinitely confident component.
const covFloor = 4.0

// fitGMM fits k components to the Lab colours of the pixels listed in idx. It is
// deterministic: initial centres are luminance quantiles, then k-means and a few
// hard-assignment EM rounds.
func fitGMM(lab []float32, idx []int32, k int) *gmm {
	step := max(1, len(idx)/gmmMaxSamples)
	pts := make([][3]float64, 0, len(idx)/step+1)
	for i := 0; i < len(idx); i += step {
		o := int(idx[i]) * 3
		pts = append(pts, [3]float64{float64(lab[o]), float64(lab[o+1]), float64(lab[o+2])})
	}
	if len(pts) == 0 {
		return nil
	}
	k = min(k, len(pts))
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pts[a][0], pts[b][0]) })
	centres := make([][3]float64, k)
	for c := range centres {
		centres[c] = pts[order[(2*c+1)*len(pts)/(2*k)]]
	}
	assign := make([]int, len(pts))
	for iter := 0; iter < 6; iter++ {
		for i, p := range pts {
			best, bd := 0, math.Inf(1)
			for c, m := range centres {
				d := sq(p[0]-m[0]) + sq(p[1]-m[1]) + sq(p[2]-m[2])
				if d < bd {
					best, bd = c, d
				}
			}
			assign[i] = best
		}
		centres = meansOf(pts, assign, centres)
	}
	g := estimate(pts, assign, k)
	for iter := 0; iter < 3; iter++ {
		for i, p := range pts {
			best, bl := 0, math.Inf(-1)
			for c := range g.comps {
				if l := g.comps[c].logPdf(p); l > bl {
					best, bl = c, l
				}
			}
			assign[i] = best
		}
		g = estimate(pts, assign, len(g.comps))
	}
	return g
}

func sq(v float64) float64 { return v * v }

func meansOf(pts [][3]float64, assign []int, prev [][3]float64) [][3]float64 {
	sum := make([][3]float64, len(prev))
	n := make([]int, len(prev))
	for i, p := range pts {
		c := assign[i]
		n[c]++
		for j := range 3 {
			sum[c][j] += p[j]
		}
	}
	for c := range sum {
		if n[c] == 0 {
			sum[c] = prev[c] // an empty cluster keeps its centre
			continue
		}
		for j := range 3 {
			sum[c][j] /= float64(n[c])
		}
	}
	return sum
}

// estimate builds the mixture from a hard assignment; empty components are dropped.
func estimate(pts [][3]float64, assign []int, k int) *gmm {
	type acc struct {
		n    float64
		s    [3]float64
		ss   [9]float64
		used bool
	}
	a := make([]acc, k)
	for i, p := range pts {
		c := &a[assign[i]]
		c.n++
		c.used = true
		for r := range 3 {
			c.s[r] += p[r]
			for q := range 3 {
				c.ss[r*3+q] += p[r] * p[q]
			}
		}
	}
	g := &gmm{}
	for _, c := range a {
		if !c.used {
			continue
		}
		var m [3]float64
		for r := range 3 {
			m[r] = c.s[r] / c.n
		}
		var cov [9]float64
		for r := range 3 {
			for q := range 3 {
				cov[r*3+q] = c.ss[r*3+q]/c.n - m[r]*m[q]
			}
			cov[r*3+r] += covFloor
		}
		inv, det := invert3(cov)
		if det <= 0 {
			continue
		}
		w := c.n / float64(len(pts))
		g.comps = append(g.comps, gauss{
			weight: w, mean: m, inv: inv,
			logNrm: math.Log(w) - 1.5*math.Log(2*math.Pi) - 0.5*math.Log(det),
		})
	}
	return g
}

func (c *gauss) logPdf(p [3]float64) float64 {
	d0, d1, d2 := p[0]-c.mean[0], p[1]-c.mean[1], p[2]-c.mean[2]
	m := d0*(c.inv[0]*d0+c.inv[1]*d1+c.inv[2]*d2) +
		d1*(c.inv[3]*d0+c.inv[4]*d1+c.inv[5]*d2) +
		d2*(c.inv[6]*d0+c.inv[7]*d1+c.inv[8]*d2)
	return c.logNrm - 0.5*m
}

// logLik approximates the log density of the mixture at a Lab colour by its most
// likely component (as GrabCut does): within a fraction of a nat of the full sum for
// separated components, and free of exp/log in the per-pixel loop.
func (g *gmm) logLik(l, a, b float32) float64 {
	p := [3]float64{float64(l), float64(a), float64(b)}
	best := -1e3
	for c := range g.comps {
		best = max(best, g.comps[c].logPdf(p))
	}
	return best
}

// invert3 inverts a 3x3 matrix, returning its determinant too (0 when singular).
func invert3(m [9]float64) ([9]float64, float64) {
	det := m[0]*(m[4]*m[8]-m[5]*m[7]) - m[1]*(m[3]*m[8]-m[5]*m[6]) + m[2]*(m[3]*m[7]-m[4]*m[6])
	if det == 0 || math.IsNaN(det) {
		return [9]float64{}, 0
	}
	id := 1 / det
	return [9]float64{
		(m[4]*m[8] - m[5]*m[7]) * id, (m[2]*m[7] - m[1]*m[8]) * id, (m[1]*m[5] - m[2]*m[4]) * id,
		(m[5]*m[6] - m[3]*m[8]) * id, (m[0]*m[8] - m[2]*m[6]) * id, (m[2]*m[3] - m[0]*m[5]) * id,
		(m[3]*m[7] - m[4]*m[6]) * id, (m[1]*m[6] - m[0]*m[7]) * id, (m[0]*m[4] - m[1]*m[3]) * id,
	}, det
}
