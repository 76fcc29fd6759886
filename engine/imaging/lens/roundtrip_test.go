package lens

import (
	"context"
	"math"
	"sync/atomic"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/flowtest"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

// straightPhotos are listing photos shot or processed straight: their lines are the
// reference that a simulated lens bends and the correction must restore.
var straightPhotos = [][]string{
	{"interiors", "houses_109_bedroom.jpg"},
}

// TestCorrectionUndoesLens renders each lens's distortion, TCA and vignetting onto
// straight photos with lensfun's own model and checks that the correction takes the
// geometry back: the displacement left after an affine registration is at most a
// fifth of the distorted photo's.
func TestCorrectionUndoesLens(t *testing.T) {
	needDB(t)
	for _, rel := range straightPhotos {
		src := imagingtest.LoadPhoto(t, rel...)
		for _, l := range estateLenses {
			sim, err := Simulate(l.shot, src.W(), src.H())
			if err != nil {
				t.Fatalf("%s: %v", l.name, err)
			}
			dist, err := sim.Apply(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Prepare(l.shot, src.W(), src.H())
			if err != nil {
				t.Fatalf("%s: %v", l.name, err)
			}
			fixed, err := c.Apply(context.Background(), dist)
			if err != nil {
				t.Fatal(err)
			}
			before := flowtest.Residual(src, dist)
			after := flowtest.Residual(src, fixed)
			t.Logf("%s %s: p95 %.3f%% -> %.3f%% of the diagonal (median %.3f%% -> %.3f%%, %d/%d px)",
				rel[1], l.name, before.P95, after.P95, before.Median, after.Median, before.Pixels, after.Pixels)
			if after.P95 > 0.2*before.P95 {
				t.Errorf("%s %s: %.3f%% left of %.3f%%", rel[1], l.name, after.P95, before.P95)
			}
		}
	}
}

// TestApplyKeepsStorage: brackets held as 8- or 16-bit codes are corrected in their
// own storage, to the float result within their precision.
func TestApplyKeepsStorage(t *testing.T) {
	needDB(t)
	src := imagingtest.LoadPhoto(t, straightPhotos[0]...)
	c, err := Prepare(estateLenses[0].shot, src.W(), src.H())
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.Apply(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	n8 := src.Narrow() // a decoded JPEG: exact 8-bit codes
	n16 := &imaging.Image{Pix16: make([]uint16, len(src.Pix)), Stride: src.Stride, C: 3, Rect: src.Rect}
	for y := 0; y < src.H(); y++ {
		n16.PutLinearRow(y, src.Row(y))
	}
	for _, in := range []*imaging.Image{n8, n16} {
		got, err := c.Apply(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if got.IsNarrow() != true || (in.Pix8 != nil) != (got.Pix8 != nil) {
			t.Fatalf("storage changed: 8-bit in %v, out %v", in.Pix8 != nil, got.Pix8 != nil)
		}
		tol := float32(1.0 / 255)
		if in.Pix16 != nil {
			tol = 1.0 / 4096
		}
		a, b := make([]float32, src.W()*3), make([]float32, src.W()*3)
		worst := float32(0)
		for y := 0; y < src.H(); y++ {
			ra, rb := got.EncodedRow(y, a), want.EncodedRow(y, b)
			for i := range ra {
				worst = max(worst, abs32(ra[i]-rb[i]))
			}
		}
		if worst > tol {
			t.Errorf("8-bit %v: differs from float by %.5f (encoded)", in.Pix8 != nil, worst)
		}
	}
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// TestMaxScaleBoundsStretch checks MaxScale against the map itself: no two
// neighbouring output pixels come from source points closer than 1/MaxScale.
func TestMaxScaleBoundsStretch(t *testing.T) {
	needDB(t)
	for _, l := range estateLenses {
		c, err := Prepare(l.shot, 600, 400)
		if err != nil {
			t.Fatalf("%s: %v", l.name, err)
		}
		s := c.MaxScale()
		if s < 1 || s > 3 {
			t.Fatalf("%s: MaxScale %g", l.name, s)
		}
		m := make([]float32, c.W*7)
		gr := make([]float32, c.gw*7)
		prev := make([]float32, c.W*7)
		for y := range c.H {
			c.mapRow(y, gr, m)
			for x := 1; x < c.W; x++ {
				if d := math.Hypot(float64(m[x*7+2]-m[(x-1)*7+2]), float64(m[x*7+3]-m[(x-1)*7+3])); d*s < 0.999 {
					t.Fatalf("%s: at (%d, %d) neighbours come from %g px apart, MaxScale %g", l.name, x, y, d, s)
				}
				if y > 0 {
					if d := math.Hypot(float64(m[x*7+2]-prev[x*7+2]), float64(m[x*7+3]-prev[x*7+3])); d*s < 0.999 {
						t.Fatalf("%s: at (%d, %d) rows come from %g px apart, MaxScale %g", l.name, x, y, d, s)
					}
				}
			}
			copy(prev, m)
		}
		t.Logf("%s: MaxScale %.4f", l.name, s)
	}
}

// TestMapMatchesApply: Map says where Apply takes green from, and its gain: a frame
// whose green is its x coordinate (and blue its y) comes out as Map's positions.
func TestMapMatchesApply(t *testing.T) {
	needDB(t)
	w, h := 300, 200
	src := imaging.New(w, h, 3)
	for y := range h {
		row := src.Row(y)
		for x := range w {
			row[x*3], row[x*3+1], row[x*3+2] = 1, float32(x), float32(y)
		}
	}
	c, err := Prepare(estateLenses[0].shot, w, h)
	if err != nil {
		t.Fatal(err)
	}
	var rows atomic.Int32
	out, err := c.ApplyRows(context.Background(), src, func(int, []float32) { rows.Add(1) })
	if err != nil {
		t.Fatal(err)
	}
	if int(rows.Load()) != h {
		t.Fatalf("%d rows reported, want %d", rows.Load(), h)
	}
	for _, p := range [][2]int{{0, 0}, {150, 100}, {37, 181}, {299, 199}, {250, 20}} {
		sx, sy, g := c.Map(float64(p[0]), float64(p[1]))
		px := out.Row(p[1])[p[0]*3 : p[0]*3+3]
		// Blue comes from a little elsewhere (the chromatic aberration).
		if math.Abs(float64(px[0])-g) > 1e-3 || math.Abs(float64(px[1])/g-sx) > 0.02 || math.Abs(float64(px[2])/g-sy) > 0.5 {
			t.Errorf("at %v: Apply gives gain %g, green from x %g, blue from y %g; Map %g, %g, %g",
				p, px[0], px[1]/px[0], px[2]/px[0], g, sx, sy)
		}
	}
}
