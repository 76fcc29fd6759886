package inpaint

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// fillDir keeps the synthetic tests' fills for a look; by default nothing is written.
var fillDir = flag.String("fill-dir", "", "write the synthetic tests' fills (stripes.png, diag.png) into this existing folder")

func saveFill(t *testing.T, name string, out *imaging.Image) {
	t.Helper()
	if *fillDir != "" {
		writePNG(t, filepath.Join(*fillDir, name), out.ToNRGBA())
	}
}

// stripes is a w×h image of horizontal bands of period 24 px (dark and light halves)
// with mild noise, so that any fill can be checked row by row.
func stripes(w, h int, seed uint64) *imaging.Image {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := imaging.New(w, h, 3)
	for y := 0; y < h; y++ {
		base := float32(0.1)
		if (y/12)%2 == 1 {
			base = 0.6
		}
		for x := 0; x < w; x++ {
			for c := 0; c < 3; c++ {
				m.Set(x, y, c, base*(0.9+0.1*float32(c))+float32(rng.NormFloat64()*0.01))
			}
		}
	}
	return m
}

func rectMask(w, h int, r [4]int) *imaging.Image {
	m := imaging.New(w, h, 1)
	for y := r[1]; y < r[3]; y++ {
		for x := r[0]; x < r[2]; x++ {
			m.Pix[y*w+x] = 1
		}
	}
	return m
}

// TestStripesContinueAcrossHole: horizontal bands cut by a square hole must come back
// as bands at the same rows, not as a blend of the two tones.
func TestStripesContinueAcrossHole(t *testing.T) {
	w, h := 320, 240
	img := stripes(w, h, 1)
	hole := [4]int{120, 70, 200, 170}
	mask := rectMask(w, h, hole)
	out, err := Erase(context.Background(), blank(img, mask), mask, Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	bad, n := 0, 0
	for y := hole[1]; y < hole[3]; y++ {
		if y%12 == 0 || y%12 == 11 { // band edges: allow a pixel of softness
			continue
		}
		for x := hole[0]; x < hole[2]; x++ {
			n++
			if math.Abs(float64(out.At(x, y, 1)-img.At(x, y, 1))) > 0.1 {
				bad++
			}
		}
	}
	saveFill(t, "stripes.png", out)
	if frac := float64(bad) / float64(n); frac > 0.02 {
		t.Fatalf("%.1f%% of the hole's band pixels have the wrong tone", 100*frac)
	}
}

// diagonal is a w×h image split by a straight edge through (cx, cy) at angle a, with
// fine noise texture on both sides.
func diagonal(w, h int, a float64, seed uint64) (*imaging.Image, func(x, y int) bool) {
	rng := rand.New(rand.NewPCG(seed, 2))
	cx, cy := float64(w)/2, float64(h)/2
	nx, ny := -math.Sin(a), math.Cos(a)
	side := func(x, y int) bool { return (float64(x)-cx)*nx+(float64(y)-cy)*ny > 0 }
	m := imaging.New(w, h, 3)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			base := [3]float32{0.5, 0.35, 0.2}
			if side(x, y) {
				base = [3]float32{0.15, 0.25, 0.5}
			}
			nz := float32(rng.NormFloat64() * 0.03)
			for c := 0; c < 3; c++ {
				m.Set(x, y, c, base[c]+nz)
			}
		}
	}
	return m, side
}

// TestDiagonalEdgeContinues: a straight edge between two textures crossing the hole
// must cross the fill too: away from the edge, fill pixels keep their side's colour.
func TestDiagonalEdgeContinues(t *testing.T) {
	w, h := 360, 270
	img, side := diagonal(w, h, 0.5, 4)
	hole := [4]int{130, 85, 230, 185}
	mask := rectMask(w, h, hole)
	out, err := Erase(context.Background(), blank(img, mask), mask, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	cx, cy := float64(w)/2, float64(h)/2
	bad, n := 0, 0
	for y := hole[1]; y < hole[3]; y++ {
		for x := hole[0]; x < hole[2]; x++ {
			d := (float64(x)-cx)*-math.Sin(0.5) + (float64(y)-cy)*math.Cos(0.5)
			if math.Abs(d) < 3 {
				continue
			}
			n++
			blue := out.At(x, y, 2) > out.At(x, y, 0)
			if blue != side(x, y) {
				bad++
			}
		}
	}
	saveFill(t, "diag.png", out)
	if frac := float64(bad) / float64(n); frac > 0.03 {
		t.Fatalf("%.1f%% of the hole is on the wrong side of the edge", 100*frac)
	}
}
