package quality

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// shiftImage returns m sampled at (x - dx, y - dy) bilinearly (edges repeated), so the
// content moves by (+dx, +dy).
func shiftImage(m *imaging.Image, dx, dy float64) *imaging.Image {
	out := imaging.New(m.W(), m.H(), m.C)
	for y := 0; y < m.H(); y++ {
		for x := 0; x < m.W(); x++ {
			sx := math.Min(math.Max(float64(x)-dx, 0), float64(m.W()-1))
			sy := math.Min(math.Max(float64(y)-dy, 0), float64(m.H()-1))
			x0, y0 := int(sx), int(sy)
			x1, y1 := min(x0+1, m.W()-1), min(y0+1, m.H()-1)
			tx, ty := float32(sx-float64(x0)), float32(sy-float64(y0))
			for c := 0; c < m.C; c++ {
				a := m.At(x0, y0, c) + tx*(m.At(x1, y0, c)-m.At(x0, y0, c))
				b := m.At(x0, y1, c) + tx*(m.At(x1, y1, c)-m.At(x0, y1, c))
				out.Set(x, y, c, a+ty*(b-a))
			}
		}
	}
	return out
}

func TestMisalignmentFindsKnownShift(t *testing.T) {
	// A real bracket against a shifted, darker copy of itself.
	a := shrink(loadPhoto(t, "brackets", "library_phone", "20240401_185036.JPG"), 4)
	for _, d := range [][2]float64{{0, 0}, {0.3, -0.2}, {2.5, 1.25}, {-4.7, 3.1}} {
		b := shiftImage(a, d[0], d[1])
		for i := range b.Pix {
			b.Pix[i] *= 0.25 // two stops darker
		}
		m, err := MeasureMisalignment(a, b, MisalignOptions{Tile: 256})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("shift %v: global %+v max %.3f", d, m.Global, m.Max)
		if e := math.Hypot(m.Global.DX-d[0], m.Global.DY-d[1]); e > 0.08 {
			t.Errorf("shift %v: measured (%.3f, %.3f), error %.3f px", d, m.Global.DX, m.Global.DY, e)
		}
		for i, s := range m.Tiles {
			if s.Peak >= minPeak && math.Hypot(s.DX-d[0], s.DY-d[1]) > 0.15 {
				t.Errorf("shift %v: tile %d measured (%.3f, %.3f)", d, i, s.DX, s.DY)
			}
		}
	}
}
