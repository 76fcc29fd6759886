package align_test

import (
	"context"
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
)

func TestEstimateKnownShift(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size photo")
	}
	ref := loadPhoto(t, "brackets", "library_phone", "20240401_185036.JPG")
	for _, d := range [][2]float64{{0.25, 0}, {0.5, 0.5}, {-9.7, 5.15}, {3.3, -1.7}} {
		moved := warp(t, ref, align.Transform{M: align.Translation(d[0], d[1])})
		dark := imaging.New(moved.W(), moved.H(), 3)
		for i, v := range moved.Pix {
			dark.Pix[i] = v * 0.3
		}
		ts, err := align.Estimate(context.Background(), []*imaging.Image{ref, dark}, 0, align.Options{})
		if err != nil {
			t.Fatal(err)
		}
		x, y := ts[1].M.Apply(2000, 1100)
		ex, ey := x-2000+d[0], y-1100+d[1] // the bracket shows reference point q at q-d
		t.Logf("shift %v: %v %d matches, error (%.3f, %.3f)", d, ts[1].Model, ts[1].Matches, ex, ey)
		if math.Hypot(ex, ey) > 0.1 {
			t.Errorf("shift %v: error (%.3f, %.3f)", d, ex, ey)
		}
	}
}

func TestEstimateKnownHomography(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size photo")
	}
	ref := loadPhoto(t, "brackets", "library_phone", "20240401_185036.JPG")
	th := 0.3 * math.Pi / 180
	s := 1.002
	m := align.Mat3{s * math.Cos(th), -s * math.Sin(th), 4.3, s * math.Sin(th), s * math.Cos(th), -2.6, 1e-7, -2e-7, 1}
	moved := warp(t, ref, align.Transform{M: m})
	for i := range moved.Pix {
		moved.Pix[i] *= 0.3
	}
	inv, _ := m.Inverse()
	ts, err := align.Estimate(context.Background(), []*imaging.Image{ref, moved}, 0, align.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("model %v matches %d residual %.3f", ts[1].Model, ts[1].Matches, ts[1].Residual)
	for _, p := range [][2]float64{{0, 0}, {4031, 0}, {0, 2267}, {4031, 2267}, {2000, 1100}} {
		wx, wy := inv.Apply(p[0], p[1])
		x, y := ts[1].M.Apply(p[0], p[1])
		if ts[1].Mesh != nil {
			dx, dy := ts[1].Mesh.At(p[0], p[1])
			x, y = x+dx, y+dy
		}
		t.Logf("at %v error (%.3f, %.3f)", p, x-wx, y-wy)
		if math.Hypot(x-wx, y-wy) > 0.15 {
			t.Errorf("at %v error (%.3f, %.3f)", p, x-wx, y-wy)
		}
	}
}
