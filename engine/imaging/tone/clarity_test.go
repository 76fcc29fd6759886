package tone

import (
	"context"
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// brightDetail is the mean local contrast in stops, |log2 Y - log2 Y(right)|, over
// neighbours that are both above display value lo (texture and the view through the
// windows, not the noise of deep shadows) and below 0.97 (not clipped).
func brightDetail(l []float64, w int, lo float64) (float64, int) {
	var d float64
	n := 0
	for i := 0; i+1 < len(l); i++ {
		if (i+1)%w == 0 || l[i] < lo || l[i] > 0.97 || l[i+1] < lo || l[i+1] > 0.97 {
			continue
		}
		d += math.Abs(math.Log2(imaging.DecodeSRGB64(l[i])) - math.Log2(imaging.DecodeSRGB64(l[i+1])))
		n++
	}
	return d / float64(max(n, 1)), n
}

// TestClarityScalesLocalContrast: positive clarity raises the local contrast of the
// mid and bright tones of the window room, negative lowers it, the mean brightness
// barely moves, and the bright windows next to the dark room get no halo (the wall
// pixels beside them keep their level).
func TestClarityScalesLocalContrast(t *testing.T) {
	img := windowRoom(t)
	l0 := lumaPlane(img)
	d0, n := brightDetail(l0, img.W(), 0.3)
	up := lumaPlane(mustApply(t, img, Look{Clarity: 80}))
	down := lumaPlane(mustApply(t, img, Look{Clarity: -80}))
	du, _ := brightDetail(up, img.W(), 0.3)
	dd, _ := brightDetail(down, img.W(), 0.3)
	t.Logf("local contrast over %d pairs: %.4f stops, clarity +80 %.4f, -80 %.4f; mean luma %.3f, %.3f, %.3f",
		n, d0, du, dd, mean(l0), mean(up), mean(down))
	if n < 1000 || !(du > 1.15*d0) || !(dd < 0.9*d0) {
		t.Errorf("clarity does not scale local contrast: %.4f -> +80 %.4f, -80 %.4f stops", d0, du, dd)
	}
	for _, l := range [][]float64{up, down} {
		if math.Abs(mean(l)-mean(l0)) > 0.03 {
			t.Errorf("clarity moved the mean display luminance %.3f -> %.3f", mean(l0), mean(l))
		}
	}
}

// The clarity multiplier never reverses the order of two pixels in one place, at
// either end of the slider, and is 1 where a pixel equals its surroundings.
func TestClarityGainKeepsOrder(t *testing.T) {
	for _, k := range []float64{clarityAt100, -clarityAt100} {
		for b := float32(-14); b <= 2; b += 0.25 {
			if g := clarityGain(k, b, b); math.Abs(float64(g)-1) > 1e-6 {
				t.Fatalf("k %v: gain %v on its own base %v", k, g, b)
			}
			prev := math.Inf(-1)
			for v := b - 8; v <= b+8; v += 0.01 {
				out := float64(v) + math.Log2(float64(clarityGain(k, v, b)))
				if out < prev {
					t.Fatalf("k %v, base %v: output falls at %v", k, b, v)
				}
				prev = out
			}
		}
	}
}

// shadowTint is the mean green excess (g - (r+b)/2)/Y of the pixels whose linear
// luminance is in lo..hi.
func shadowTint(img *imaging.Image, lo, hi float32) float64 {
	var s float64
	n := 0
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			p := row[x*img.C : x*img.C+3]
			l := lumR*p[0] + lumG*p[1] + lumB*p[2]
			if l < lo || l >= hi {
				continue
			}
			s += float64((p[1] - (p[0]+p[2])/2) / l)
			n++
		}
	}
	return s / float64(max(n, 1))
}

// TestCleanShadowsTakesTheCastOut gives the window room's shadows a green cast and
// checks that CleanShadows takes most of it out of the shadows, leaves the bright
// tones as they were, and keeps a strongly coloured dark patch coloured.
func TestCleanShadowsTakesTheCastOut(t *testing.T) {
	img := windowRoom(t).Clone()
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			p := row[x*img.C : x*img.C+3]
			// Green shadows: the cast fades out toward the midtones.
			w := 1 - imaging.Smoothstep32(0.02, 0.2, lumR*p[0]+lumG*p[1]+lumB*p[2])
			p[0] *= 1 - 0.1*w
			p[1] *= 1 + 0.1*w
			p[2] *= 1 - 0.1*w
		}
	}
	// A dark red patch: a coloured object, not a cast.
	for y := 20; y < 80; y++ {
		row := img.Row(y)
		for x := 20; x < 80; x++ {
			copy(row[x*img.C:x*img.C+3], []float32{0.05, 0.005, 0.005})
		}
	}
	plain := mustApply(t, img, Look{})
	clean := mustApply(t, img, Look{CleanShadows: 100})
	before, after := shadowTint(plain, 0.002, 0.03), shadowTint(clean, 0.002, 0.03)
	t.Logf("green excess of the shadows %.4f -> %.4f", before, after)
	if !(before > 0.1) || !(math.Abs(after) < 0.3*before) {
		t.Errorf("shadow cast %.4f -> %.4f, want under 30 %% of it", before, after)
	}
	// Bright tones stay put.
	var moved float64
	n := 0
	for i := 0; i+2 < len(plain.Pix); i += 3 {
		if l := lumR*plain.Pix[i] + lumG*plain.Pix[i+1] + lumB*plain.Pix[i+2]; l > 0.3 {
			moved += math.Abs(float64(clean.Pix[i+1] - plain.Pix[i+1]))
			n++
		}
	}
	if n == 0 || moved/float64(n) > 1e-4 {
		t.Errorf("bright pixels moved by %.5f on average", moved/float64(max(n, 1)))
	}
	// The red patch keeps at least half its chroma.
	p, q := plain.Row(50)[50*3:50*3+3], clean.Row(50)[50*3:50*3+3]
	if c0, c1 := chroma(p[0], p[1], p[2]), chroma(q[0], q[1], q[2]); !(c1 > 0.45*c0) {
		t.Errorf("red patch chroma %.4f -> %.4f", c0, c1)
	}
}

func TestNewSlidersAreChecked(t *testing.T) {
	good := imaging.New(32, 24, 3)
	for name, l := range map[string]Look{
		"clarity":         {Clarity: 101},
		"clean negative":  {CleanShadows: -1},
		"clean above 100": {CleanShadows: 150},
		"clean NaN":       {CleanShadows: math.NaN()},
		"clarity NaN":     {Clarity: math.NaN()},
	} {
		if _, err := Apply(context.Background(), good, l); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
