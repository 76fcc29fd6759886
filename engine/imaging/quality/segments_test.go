package quality

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// rotateImage rotates m by deg degrees about its centre (bilinear, edges repeated).
func rotateImage(m *imaging.Image, deg float64) *imaging.Image {
	out := imaging.New(m.W(), m.H(), m.C)
	th := deg * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	cx, cy := float64(m.W()-1)/2, float64(m.H()-1)/2
	for y := 0; y < m.H(); y++ {
		for x := 0; x < m.W(); x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			sx := math.Min(math.Max(cx+c*dx+s*dy, 0), float64(m.W()-1))
			sy := math.Min(math.Max(cy-s*dx+c*dy, 0), float64(m.H()-1))
			x0, y0 := int(sx), int(sy)
			x1, y1 := min(x0+1, m.W()-1), min(y0+1, m.H()-1)
			tx, ty := float32(sx-float64(x0)), float32(sy-float64(y0))
			for k := 0; k < m.C; k++ {
				a := m.At(x0, y0, k) + tx*(m.At(x1, y0, k)-m.At(x0, y0, k))
				b := m.At(x0, y1, k) + tx*(m.At(x1, y1, k)-m.At(x0, y1, k))
				out.Set(x, y, k, a+ty*(b-a))
			}
		}
	}
	return out
}

func TestSegmentsOnInterior(t *testing.T) {
	img := loadPhoto(t, "interiors", "houses_162_bedroom.jpg")
	segs := Segments(img, SegmentOptions{})
	if len(segs) < 30 {
		t.Fatalf("found %d segments in a furnished room", len(segs))
	}
	var long int
	for _, s := range segs {
		for _, v := range []float64{s.X0, s.X1} {
			if v < -1 || v > float64(img.W()) {
				t.Fatalf("segment %+v outside the image", s)
			}
		}
		if d := math.Hypot(s.X1-s.X0, s.Y1-s.Y0); math.Abs(d-s.Length) > 1.5 {
			t.Fatalf("segment %+v: endpoints %.1f apart, length %.1f", s, d, s.Length)
		}
		if s.Length > 100 {
			long++
		}
	}
	tilt, ok := VerticalTilt(segs, TiltOptions{})
	t.Logf("%d segments (%d longer than 100 px); vertical tilt %.2f° from %d segments", len(segs), long, tilt.Degrees, tilt.Segments)
	if !ok || tilt.Segments < 10 {
		t.Fatalf("too few vertical segments: %+v", tilt)
	}
	// The test photo notes say its near-vertical lines lean by a median 0.7°.
	if math.Abs(math.Abs(tilt.Degrees)-0.7) > 0.5 {
		t.Errorf("median tilt %.2f°, the photo's lines lean about 0.7°", tilt.Degrees)
	}
}

func TestVerticalTiltFollowsRotation(t *testing.T) {
	img := loadPhoto(t, "interiors", "houses_162_bedroom.jpg")
	base, _ := VerticalTilt(Segments(img, SegmentOptions{}), TiltOptions{})
	for _, deg := range []float64{-4, 3} {
		r := rotateImage(img, deg)
		got, ok := VerticalTilt(Segments(r, SegmentOptions{}), TiltOptions{})
		if !ok {
			t.Fatalf("rotated %v°: no vertical segments", deg)
		}
		change := got.Degrees - base.Degrees
		t.Logf("rotated %+.0f°: tilt %.2f° (change %.2f°)", deg, got.Degrees, change)
		if math.Abs(math.Abs(change)-math.Abs(deg)) > 0.6 {
			t.Errorf("rotating by %v° changed the tilt by %.2f°", deg, change)
		}
	}
}
