package inpaint

import (
	"context"
	"math"
	"testing"
)

// TestExtrapolateContinuesPatterns: the border extrapolation carries oblique stripes
// and a soft straight edge into the first pixel of a round hole, at least three times closer
// to the hidden truth than the nearest photo pixel is.
func TestExtrapolateContinuesPatterns(t *testing.T) {
	const w, h = 128, 128
	angle := 30 * math.Pi / 180
	patterns := map[string]func(x, y float64) float64{
		"stripes": func(x, y float64) float64 {
			return 0.5 + 0.25*math.Sin(2*math.Pi*(x*math.Cos(angle)+y*math.Sin(angle))/11)
		},
		"edge": func(x, y float64) float64 {
			d := (x-64)*math.Cos(angle) - (y-64)*math.Sin(angle)
			return 0.2 + 0.6/(1+math.Exp(-d/0.8))
		},
	}
	for name, f := range patterns {
		t.Run(name, func(t *testing.T) {
			truth := make([]float32, w*h)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					truth[y*w+x] = float32(f(float64(x), float64(y)))
				}
			}
			l := newLevel(w, h, 1, patchR, false)
			alpha := make([]float32, w*h)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					if dx, dy := float64(x-64), float64(y-64); dx*dx+dy*dy < 30*30 {
						l.hole[y*w+x] = true
						alpha[y*w+x] = 1
					}
				}
			}
			if err := l.prepare(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			got := map[int]float32{}
			src := func(i int) float32 { return truth[i] }
			apply := func(i int, m, v float32) {
				// The first ring: a photo pixel beside it, straight or diagonal
				// (chamfer distance 3 or 4).
				if l.depth[i] <= 4 {
					got[i] = v
				}
			}
			if err := l.extrapolate(context.Background(), alpha, 0, src, apply); err != nil {
				t.Fatal(err)
			}
			var errModel, errNear float64
			for i, v := range got {
				errModel += math.Abs(float64(v - truth[i]))
				// The nearest photo pixel: a known 8-neighbour.
				near := math.Inf(1)
				for _, j := range []int{i - 1, i + 1, i - w, i + w, i - w - 1, i - w + 1, i + w - 1, i + w + 1} {
					if !l.hole[j] {
						near = math.Min(near, math.Abs(float64(truth[j]-truth[i])))
					}
				}
				if math.IsInf(near, 1) {
					t.Fatalf("pixel %d of the first ring has no photo pixel beside it", i)
				}
				errNear += near
			}
			if len(got) < 150 {
				t.Fatalf("the model reached %d pixels of the hole's first ring, want all of it", len(got))
			}
			errModel /= float64(len(got))
			errNear /= float64(len(got))
			t.Logf("%d border pixels: mean error %.4f, nearest photo pixel %.4f", len(got), errModel, errNear)
			if errModel > errNear/3 {
				t.Errorf("mean error %.4f, want under a third of the nearest photo pixel's %.4f", errModel, errNear)
			}
		})
	}
}
