package inpaint

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// TestPerceptualRoundTrip: the colour offsets' encoding inverts within a quarter of an
// 8-bit code over 0..1, exactly enough above it (highlights keep their level), maps
// what falls below 0 to black, and leaves alpha linear.
func TestPerceptualRoundTrip(t *testing.T) {
	l := &level{nc: 4, cc: 3}
	for i := 0; i <= 4096; i++ {
		v := float32(i) / 4096
		back := l.fromPerceptual(0, l.toPerceptual(0, v))
		if d := math.Abs(float64(imaging.LinearToSRGB(back)-imaging.LinearToSRGB(v))) * 255; d > 0.25 {
			t.Fatalf("%v came back as %v, %.2f codes off", v, back, d)
		}
	}
	for _, v := range []float32{1, 1.5, 4, 20} {
		if back := l.fromPerceptual(1, l.toPerceptual(1, v)); math.Abs(float64(back-v)) > 1e-4*float64(v) {
			t.Fatalf("highlight %v came back as %v", v, back)
		}
	}
	// The encoding rises everywhere, so an offset's sign is kept.
	prev := l.toPerceptual(2, -0.01)
	for _, v := range []float32{0, 0.001, 0.01, 0.5, 0.999, 1, 1.001, 2} {
		e := l.toPerceptual(2, v)
		if !(e > prev) {
			t.Fatalf("encoding of %v (%v) is not above the previous value's (%v)", v, e, prev)
		}
		prev = e
	}
	if v := l.fromPerceptual(0, -0.2); v != 0 {
		t.Fatalf("an encoded value below 0 decodes to %v, want 0", v)
	}
	if e := l.toPerceptual(3, 0.3); e != 0.3 {
		t.Fatalf("alpha 0.3 encoded as %v, want it left linear", e)
	}
	if v := l.fromPerceptual(3, 0.7); v != 0.7 {
		t.Fatalf("alpha 0.7 decoded as %v", v)
	}
}
