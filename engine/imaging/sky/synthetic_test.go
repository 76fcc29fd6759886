package sky

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// scene draws an outdoor test picture: a smooth overcast sky over dark, textured ground
// whose skyline is a wave, anti-aliased, so the true sky coverage of every pixel is
// known. It returns the image and that coverage.
func scene(w, h int, sky [3]float32) (*imaging.Image, []float32) {
	img := imaging.New(w, h, 3)
	alpha := make([]float32, w*h)
	ground := [3]float32{0.12, 0.05, 0.025}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			line := float64(h)*0.45 + float64(h)*0.08*math.Sin(float64(x)/float64(w)*9)
			// Coverage of the pixel by sky: the part of [y, y+1) above the line.
			a := float32(math.Max(0, math.Min(1, line-float64(y))))
			alpha[y*w+x] = a
			// Ground texture: a deterministic pattern of bright and dark specks.
			t := float32(hash2(int32(x), int32(y), 99)&255)/255*0.6 + 0.7
			lift := 1 - 0.15*float32(y)/float32(h) // the sky darkens a little upwards
			for c := 0; c < 3; c++ {
				s := sky[c] * lift
				img.Set(x, y, c, a*s+(1-a)*ground[c]*t)
			}
		}
	}
	return img, alpha
}

var overcastSky = [3]float32{0.78, 0.8, 0.84}

func TestSegmentSyntheticScene(t *testing.T) {
	img, alpha := scene(480, 320, overcastSky)
	matte, res, err := Segment(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found {
		t.Fatalf("no sky found: %s", res.Reason)
	}
	inter, union := 0, 0
	var errSum float64
	for p, a := range alpha {
		m := matte.Pix[p]
		if m >= 0.5 && a >= 0.5 {
			inter++
		}
		if m >= 0.5 || a >= 0.5 {
			union++
		}
		errSum += math.Abs(float64(m - a))
	}
	iou := float64(inter) / float64(union)
	mae := errSum / float64(len(alpha))
	if iou < 0.98 || mae > 0.02 {
		t.Errorf("IoU %.4f (want >= 0.98), mean matte error %.4f (want <= 0.02)", iou, mae)
	}
	want := 0.0
	for _, a := range alpha {
		want += float64(a)
	}
	want /= float64(len(alpha))
	if math.Abs(res.Fraction-want) > 0.02 {
		t.Errorf("fraction %.3f, true sky share %.3f", res.Fraction, want)
	}
}

// TestReplaceNoHalo: along the skyline every output pixel must be a mix of the ground
// and the new sky; a leftover of the old (white) sky would sit far off that segment.
func TestReplaceNoHalo(t *testing.T) {
	img, alpha := scene(480, 320, overcastSky)
	out, res, err := Replace(context.Background(), img, StyleClear)
	if err != nil || !res.Found {
		t.Fatalf("err %v, result %+v", err, res)
	}
	w, h := img.W(), img.H()
	worst, n := 0.0, 0
	for x := 0; x < w; x++ {
		var edge []int
		for y := 0; y < h; y++ {
			if a := alpha[y*w+x]; a > 0.02 && a < 0.98 {
				edge = append(edge, y)
			}
		}
		if len(edge) == 0 {
			continue
		}
		above, below := edge[0]-6, edge[len(edge)-1]+6
		if above < 0 || below >= h {
			continue
		}
		s, g := pixel(out, x, above), pixel(out, x, below)
		for _, y := range edge {
			d := distToSegment(pixel(out, x, y), g, s)
			worst = max(worst, d)
			n++
		}
	}
	if n == 0 {
		t.Fatal("no skyline pixels")
	}
	// The old sky is about 0.5 away (linear RGB) from that segment.
	t.Logf("worst skyline distance %.4f over %d pixels", worst, n)
	if worst > 0.08 {
		t.Errorf("skyline pixel %.3f away from the ground-to-new-sky mix: a halo of the old sky", worst)
	}
}

func pixel(m *imaging.Image, x, y int) [3]float64 {
	return [3]float64{float64(m.At(x, y, 0)), float64(m.At(x, y, 1)), float64(m.At(x, y, 2))}
}

func distToSegment(p, a, b [3]float64) float64 {
	var ab, ap [3]float64
	dot, l2 := 0.0, 0.0
	for c := range 3 {
		ab[c], ap[c] = b[c]-a[c], p[c]-a[c]
		dot += ab[c] * ap[c]
		l2 += ab[c] * ab[c]
	}
	t := 0.0
	if l2 > 0 {
		t = math.Max(0, math.Min(1, dot/l2))
	}
	d := 0.0
	for c := range 3 {
		d += (ap[c] - t*ab[c]) * (ap[c] - t*ab[c])
	}
	return math.Sqrt(d)
}

func TestReplaceDeterministicPerStyle(t *testing.T) {
	img, _ := scene(320, 220, overcastSky)
	outs := map[string]*imaging.Image{}
	for _, st := range Styles() {
		a, _, err := Replace(context.Background(), img, st)
		if err != nil {
			t.Fatal(err)
		}
		b, _, err := Replace(context.Background(), img, st)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(a.Pix, b.Pix) {
			t.Errorf("%s: two runs differ", st)
		}
		for other, o := range outs {
			if slices.Equal(a.Pix, o.Pix) {
				t.Errorf("%s and %s give the same sky", st, other)
			}
		}
		outs[st] = a
	}
}

func TestReplaceKeepsAlphaChannel(t *testing.T) {
	rgb, _ := scene(320, 220, overcastSky)
	img := imaging.New(rgb.W(), rgb.H(), 4)
	for p := 0; p < rgb.W()*rgb.H(); p++ {
		copy(img.Pix[p*4:p*4+3], rgb.Pix[p*3:p*3+3])
		img.Pix[p*4+3] = float32(p%7) / 6
	}
	out, res, err := Replace(context.Background(), img, StyleNeutral)
	if err != nil || !res.Found {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if out.C != 4 || out.W() != img.W() || out.H() != img.H() {
		t.Fatalf("output %dx%dx%d", out.W(), out.H(), out.C)
	}
	for p := 0; p < img.W()*img.H(); p++ {
		if out.Pix[p*4+3] != img.Pix[p*4+3] {
			t.Fatalf("alpha of pixel %d changed", p)
		}
	}
	changed := false
	for p := 0; p < img.W()*img.H() && !changed; p++ {
		changed = out.Pix[p*4+2] != img.Pix[p*4+2]
	}
	if !changed {
		t.Error("the sky was not replaced")
	}
}

func TestBadInput(t *testing.T) {
	ok, _ := scene(64, 48, overcastSky)
	short := &imaging.Image{Pix: make([]float32, 10), Stride: 64 * 3, C: 3, Rect: ok.Rect}
	cases := map[string]*imaging.Image{
		"nil":   nil,
		"grey":  imaging.New(64, 48, 1),
		"five":  imaging.New(64, 48, 5),
		"tiny":  imaging.New(8, 8, 3),
		"short": short,
	}
	for name, img := range cases {
		if _, _, err := Segment(context.Background(), img); !errors.Is(err, ErrInvalid) {
			t.Errorf("Segment(%s): err %v, want ErrInvalid", name, err)
		}
		if _, _, err := Replace(context.Background(), img, StyleClear); !errors.Is(err, ErrInvalid) {
			t.Errorf("Replace(%s): err %v, want ErrInvalid", name, err)
		}
	}
	if _, _, err := Replace(context.Background(), ok, "sunset"); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown style: err %v, want ErrInvalid", err)
	}
}

// TestHostilePixels: NaN, infinities, negative and over-range values must not panic
// and must not leak NaN into the output.
func TestHostilePixels(t *testing.T) {
	img, _ := scene(200, 150, overcastSky)
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	for i := 0; i < len(img.Pix); i += 97 {
		switch i % 4 {
		case 0:
			img.Pix[i] = nan
		case 1:
			img.Pix[i] = inf
		case 2:
			img.Pix[i] = -3
		default:
			img.Pix[i] = 40
		}
	}
	matte, res, err := Segment(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Found {
		t.Errorf("a few bad pixels hid the sky: %s", res.Reason)
	}
	for _, v := range matte.Pix {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("matte value %v outside 0..1", v)
		}
	}
	out, _, err := Replace(context.Background(), img, StyleLowCloud)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range out.Pix {
		if math.IsNaN(float64(v)) && !math.IsNaN(float64(img.Pix[i])) {
			t.Fatalf("NaN introduced at sample %d", i)
		}
	}
	black := imaging.New(100, 80, 3)
	if _, res, err := Replace(context.Background(), black, StyleClear); err != nil || res.Found {
		t.Errorf("black frame: err %v, found %v", err, res.Found)
	}
}
