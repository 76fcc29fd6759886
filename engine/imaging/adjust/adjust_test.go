package adjust

import (
	"context"
	"math"
	"sort"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// office is the middle bracket of the office set: a window wall, dark furniture and
// coloured chairs.
var office = []string{"brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"}

// loadPhoto decodes a test photo fitted within edge pixels (0: full size).
func loadPhoto(tb testing.TB, edge int, rel ...string) *imaging.Image {
	tb.Helper()
	img, _, err := codec.DecodeFile(testphotos.Path(tb, rel...), codec.DecodeOptions{ScaleToMaxEdge: edge})
	if err != nil {
		tb.Fatal(err)
	}
	return img
}

func applied(t *testing.T, src *imaging.Image, s Settings) *imaging.Image {
	t.Helper()
	out := src.Clone()
	if err := Apply(context.Background(), out, s); err != nil {
		t.Fatal(err)
	}
	return out
}

// stats are display-encoded figures of an image, over the pixels a mask of the
// source picks.
type stats struct {
	lum    float64 // mean encoded luminance
	spread float64 // standard deviation of it
	warm   float64 // mean (r-b)/(r+g+b)
	green  float64 // mean g/(r+g+b) - 1/3
	chroma float64 // mean max-min of encoded channels
}

func measure(m *imaging.Image, pick func(i int) bool) stats {
	var s, s2, warm, green, chroma float64
	n := 0
	for y := range m.H() {
		row := m.Row(y)
		for x := range m.W() {
			i := y*m.W() + x
			if pick != nil && !pick(i) {
				continue
			}
			r, g, b := float64(row[x*m.C]), float64(row[x*m.C+1]), float64(row[x*m.C+2])
			l := imaging.EncodeSRGB64(lumR*r + lumG*g + lumB*b)
			s += l
			s2 += l * l
			if sum := r + g + b; sum > 1e-4 {
				warm += (r - b) / sum
				green += g/sum - 1.0/3
			}
			chroma += imaging.EncodeSRGB64(math.Max(r, math.Max(g, b))) - imaging.EncodeSRGB64(math.Min(r, math.Min(g, b)))
			n++
		}
	}
	f := float64(n)
	return stats{lum: s / f, spread: math.Sqrt(s2/f - (s/f)*(s/f)), warm: warm / f, green: green / f, chroma: chroma / f}
}

// levels returns the encoded luminance of every pixel.
func levels(m *imaging.Image) []float64 {
	out := make([]float64, 0, m.W()*m.H())
	for y := range m.H() {
		row := m.Row(y)
		for x := range m.W() {
			r, g, b := row[x*m.C], row[x*m.C+1], row[x*m.C+2]
			out = append(out, imaging.EncodeSRGB64(float64(lumR*r+lumG*g+lumB*b)))
		}
	}
	return out
}

// Zero settings leave the image bit for bit as it was, and the preview shows the
// base as the encoder would.
func TestZeroIsIdentity(t *testing.T) {
	src := loadPhoto(t, 1024, office...)
	out := applied(t, src, Settings{})
	for i := range src.Pix {
		if math.Float32bits(out.Pix[i]) != math.Float32bits(src.Pix[i]) {
			t.Fatalf("sample %d changed: %v -> %v", i, src.Pix[i], out.Pix[i])
		}
	}
	dst := src.Clone()
	dst.Pix[0] = 0.5
	if err := ApplyTo(context.Background(), dst, src, Settings{}); err != nil || dst.Pix[0] != src.Pix[0] {
		t.Fatalf("ApplyTo with zero settings did not copy: %v", err)
	}
	pv, err := NewPreview(src)
	if err != nil {
		t.Fatal(err)
	}
	img, err := pv.Render(Settings{})
	if err != nil {
		t.Fatal(err)
	}
	for y := range src.H() {
		row := src.Row(y)
		for x := range src.W() {
			for c := range 3 {
				if got, want := img.Pix[y*img.Stride+x*4+c], imaging.Encode8(row[x*3+c]); got != want {
					t.Fatalf("preview (%d,%d,%d) = %d, encoder %d", x, y, c, got, want)
				}
			}
		}
	}
}

// Every slider moves the real photo the way its name says, and its opposite the
// other way.
func TestSliderDirections(t *testing.T) {
	src := loadPhoto(t, 1024, office...)
	lv := levels(src)
	dark := func(i int) bool { return lv[i] > 0.03 && lv[i] < 0.25 }
	bright := func(i int) bool { return lv[i] > 0.7 && lv[i] < 0.97 }
	mid := func(i int) bool { return lv[i] > 0.3 && lv[i] < 0.6 }
	base := measure(src, nil)
	baseDark, baseBright := measure(src, dark), measure(src, bright)
	t.Logf("base: %+v; dark %.3f bright %.3f", base, baseDark.lum, baseBright.lum)

	type check struct {
		name string
		s    Settings
		ok   func(all, dk, br stats) bool
	}
	checks := []check{
		{"exposure +1", Settings{Exposure: 1}, func(a, _, _ stats) bool { return a.lum > base.lum+0.05 }},
		{"exposure -1", Settings{Exposure: -1}, func(a, _, _ stats) bool { return a.lum < base.lum-0.05 }},
		{"temperature +60", Settings{Temperature: 60}, func(a, _, _ stats) bool { return a.warm > base.warm+0.02 }},
		{"temperature -60", Settings{Temperature: -60}, func(a, _, _ stats) bool { return a.warm < base.warm-0.02 }},
		{"tint +60", Settings{Tint: 60}, func(a, _, _ stats) bool { return a.green < base.green-0.01 }},
		{"tint -60", Settings{Tint: -60}, func(a, _, _ stats) bool { return a.green > base.green+0.01 }},
		{"contrast +60", Settings{Contrast: 60}, func(a, _, _ stats) bool { return a.spread > base.spread*1.05 }},
		{"contrast -60", Settings{Contrast: -60}, func(a, _, _ stats) bool { return a.spread < base.spread*0.95 }},
		{"highlights -100", Settings{Highlights: -100}, func(_, d, b stats) bool {
			return b.lum < baseBright.lum-0.04 && math.Abs(d.lum-baseDark.lum) < 0.01
		}},
		{"highlights +100", Settings{Highlights: 100}, func(_, d, b stats) bool {
			return b.lum > baseBright.lum+0.02 && math.Abs(d.lum-baseDark.lum) < 0.01
		}},
		{"shadows +100", Settings{Shadows: 100}, func(_, d, b stats) bool {
			return d.lum > baseDark.lum+0.05 && math.Abs(b.lum-baseBright.lum) < 0.02
		}},
		{"shadows -100", Settings{Shadows: -100}, func(_, d, b stats) bool {
			return d.lum < baseDark.lum-0.03 && math.Abs(b.lum-baseBright.lum) < 0.02
		}},
		{"whites +100", Settings{Whites: 100}, func(_, d, b stats) bool {
			return b.lum-baseBright.lum > 2*(d.lum-baseDark.lum) && b.lum > baseBright.lum+0.03
		}},
		{"whites -100", Settings{Whites: -100}, func(_, d, b stats) bool { return b.lum < baseBright.lum-0.03 }},
		{"blacks +100", Settings{Blacks: 100}, func(_, d, b stats) bool {
			return d.lum-baseDark.lum > 2*math.Abs(b.lum-baseBright.lum) && d.lum > baseDark.lum+0.02
		}},
		{"blacks -100", Settings{Blacks: -100}, func(_, d, b stats) bool { return d.lum < baseDark.lum-0.02 }},
		{"saturation +50", Settings{Saturation: 50}, func(a, _, _ stats) bool { return a.chroma > base.chroma*1.2 }},
		{"vibrance +100", Settings{Vibrance: 100}, func(a, _, _ stats) bool { return a.chroma > base.chroma*1.1 }},
		{"vibrance -100", Settings{Vibrance: -100}, func(a, _, _ stats) bool { return a.chroma < base.chroma*0.8 }},
	}
	for _, c := range checks {
		out := applied(t, src, c.s)
		a, d, b := measure(out, nil), measure(out, dark), measure(out, bright)
		t.Logf("%-16s lum %.3f spread %.3f warm %+.4f green %+.4f chroma %.4f dark %.3f bright %.3f",
			c.name, a.lum, a.spread, a.warm, a.green, a.chroma, d.lum, b.lum)
		if !c.ok(a, d, b) {
			t.Errorf("%s moved the photo the wrong way or too little", c.name)
		}
	}
	// Contrast pivots on mid-gray: the midtones' mean barely moves.
	if m0, m1 := measure(src, mid).lum, measure(applied(t, src, Settings{Contrast: 60}), mid).lum; math.Abs(m1-m0) > 0.03 {
		t.Errorf("contrast moved the midtones from %.3f to %.3f", m0, m1)
	}
}

// Saturation -100 leaves gray pixels of the same luminance.
func TestSaturationDownIsGray(t *testing.T) {
	src := loadPhoto(t, 512, office...)
	out := applied(t, src, Settings{Saturation: -100})
	for i := 0; i < len(out.Pix); i += 3 {
		r, g, b := out.Pix[i], out.Pix[i+1], out.Pix[i+2]
		if imaging.Max3(r, g, b)-imaging.Min3(r, g, b) > 1e-6 {
			t.Fatalf("pixel %d not gray: %v %v %v", i/3, r, g, b)
		}
		y := lumR*src.Pix[i] + lumG*src.Pix[i+1] + lumB*src.Pix[i+2]
		if math.Abs(float64(r-min(y, 1))) > 1e-5 {
			t.Fatalf("pixel %d luminance %v became %v", i/3, y, r)
		}
	}
}

// Highlights -100 brings levels pushed over white by exposure back into range.
func TestHighlightsRecoverOverWhite(t *testing.T) {
	src := loadPhoto(t, 512, office...)
	clipped := func(m *imaging.Image) float64 {
		n := 0
		for i := 0; i < len(m.Pix); i += 3 {
			if imaging.Max3(m.Pix[i], m.Pix[i+1], m.Pix[i+2]) >= 1 {
				n++
			}
		}
		return float64(n) / float64(len(m.Pix)/3)
	}
	pushed := clipped(applied(t, src, Settings{Exposure: 1.5}))
	recovered := clipped(applied(t, src, Settings{Exposure: 1.5, Highlights: -100}))
	t.Logf("clipped at +1.5 EV: %.1f%%, with highlights -100: %.1f%%", pushed*100, recovered*100)
	if !(recovered < pushed/2) {
		t.Errorf("highlights -100 left %.1f%% clipped of %.1f%%", recovered*100, pushed*100)
	}
}

// The tone curve never reverses the order of levels, at any slider extreme.
func TestCurveMonotone(t *testing.T) {
	vals := []float64{-100, -50, 0, 50, 100}
	for _, sh := range vals {
		for _, hl := range vals {
			for _, wh := range vals {
				for _, bl := range vals {
					for _, co := range vals {
						c := newCurve(Settings{Shadows: sh, Highlights: hl, Whites: wh, Blacks: bl, Contrast: co})
						prev := c.at(0)
						for i := 1; i <= 500; i++ {
							n := math.Exp2(-14 + 20*float64(i)/500)
							v := c.at(n)
							if v < prev-1e-12 || math.IsNaN(v) {
								t.Fatalf("%+v: curve falls at %g: %g < %g", c, n, v, prev)
							}
							prev = v
						}
					}
				}
			}
		}
	}
}

// White balance keeps gray's luminance and is the identity at zero; its gains go
// the right way.
func TestWhiteBalanceMatrix(t *testing.T) {
	m := whiteBalance(0, 0)
	if m != [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1} {
		t.Fatalf("zero white balance %v", m)
	}
	for _, tt := range [][2]float64{{100, 0}, {-100, 0}, {0, 100}, {0, -100}, {60, -40}} {
		m := whiteBalance(tt[0], tt[1])
		r, g, b := m[0]+m[1]+m[2], m[3]+m[4]+m[5], m[6]+m[7]+m[8]
		if y := lumR*r + lumG*g + lumB*b; math.Abs(y-1) > 1e-9 {
			t.Errorf("%v: gray luminance %v", tt, y)
		}
		if tt[0] > 0 && !(r > 1.1*b) || tt[0] < 0 && !(b > 1.1*r) {
			t.Errorf("temperature %v: gray -> %.3f %.3f %.3f", tt[0], r, g, b)
		}
		if tt[0] == 0 && (tt[1] > 0 && !(g < r && g < b) || tt[1] < 0 && !(g > r && g > b)) {
			t.Errorf("tint %v: gray -> %.3f %.3f %.3f", tt[1], r, g, b)
		}
	}
}

// A vibrance boost reaches a muted blue more than skin of the same saturation.
func TestVibranceSparesSkin(t *testing.T) {
	skin := vibranceWeight(0.60, 0.38, 0.26, true) // a mid skin tone, linear
	blue := vibranceWeight(0.26, 0.38, 0.60, true) // the same channels as a blue
	if !(skin < 0.5*blue) {
		t.Errorf("skin weight %.3f, muted blue %.3f", skin, blue)
	}
}

// The preview shows what the full render will: the sliders applied to the 2048 px
// base match the full-size render reduced to 2048 px, within a code or two.
func TestApplyAndPreviewAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes a 21 MP frame")
	}
	full := loadPhoto(t, 0, office...)
	s := Settings{Exposure: 0.4, Temperature: 25, Tint: -10, Contrast: 30, Highlights: -60,
		Shadows: 50, Whites: 15, Blacks: -10, Vibrance: 35, Saturation: 10}
	ctx := context.Background()
	base, err := PreviewBase(ctx, full, PreviewEdge)
	if err != nil {
		t.Fatal(err)
	}
	if base.W() != PreviewEdge {
		t.Fatalf("base %dx%d", base.W(), base.H())
	}
	pv, err := NewPreview(base)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := pv.Render(s)
	if err != nil {
		t.Fatal(err)
	}
	if err := Apply(ctx, full, s); err != nil {
		t.Fatal(err)
	}
	rendered, err := PreviewBase(ctx, full, PreviewEdge)
	if err != nil {
		t.Fatal(err)
	}
	var diffs []float64
	for y := range rendered.H() {
		row := rendered.Row(y)
		for x := range rendered.W() {
			for c := range 3 {
				d := float64(shown.Pix[y*shown.Stride+x*4+c]) - float64(imaging.Encode8(row[x*3+c]))
				diffs = append(diffs, math.Abs(d))
			}
		}
	}
	sort.Float64s(diffs)
	var sum float64
	for _, d := range diffs {
		sum += d
	}
	mean, p99 := sum/float64(len(diffs)), diffs[len(diffs)*99/100]
	t.Logf("preview vs full render reduced: mean |diff| %.3f codes, 99th percentile %.0f", mean, p99)
	if mean > 0.75 || p99 > 4 {
		t.Errorf("preview and full render disagree: mean %.3f, p99 %.0f codes", mean, p99)
	}
}
