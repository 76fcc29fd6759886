package tone

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"math"
	"os"
	"runtime"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// kitchen is a well exposed listing photo: the default subject.
func kitchen(t testing.TB) *imaging.Image {
	return loadPhoto(t, "interiors", "houses_185_kitchen.jpg")
}

// windowRoom is a living room lit by a wall of bright windows: deep shadows and
// clipped highlights side by side.
func windowRoom(t testing.TB) *imaging.Image {
	return loadPhoto(t, "brackets", "living_room_windows", "DSC_0084.png")
}

func mustApply(t testing.TB, img *imaging.Image, l Look) *imaging.Image {
	t.Helper()
	out, err := Apply(context.Background(), img, l)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// channelMeans returns the mean of each linear channel.
func channelMeans(img *imaging.Image) [3]float64 {
	var s [3]float64
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			for c := 0; c < 3; c++ {
				s[c] += float64(row[x*img.C+c])
			}
		}
	}
	n := float64(img.W() * img.H())
	return [3]float64{s[0] / n, s[1] / n, s[2] / n}
}

func meanLinearLuminance(img *imaging.Image) float64 {
	m := channelMeans(img)
	return lumR*m[0] + lumG*m[1] + lumB*m[2]
}

func TestWhiteBalanceMovesTheGrayWorldMean(t *testing.T) {
	img := kitchen(t)
	m0 := channelMeans(img)
	rb0, g0 := m0[0]/m0[2], m0[1]/((m0[0]+m0[2])/2)
	y0 := meanLinearLuminance(img)
	for _, tc := range []struct {
		look              Look
		rbUp, rbDn, gDown bool
	}{
		{Look{Temperature: 50}, true, false, false},
		{Look{Temperature: -50}, false, true, false},
		{Look{Tint: 50}, false, false, true},
	} {
		out := mustApply(t, img, tc.look)
		m := channelMeans(out)
		rb, g := m[0]/m[2], m[1]/((m[0]+m[2])/2)
		t.Logf("%+v: R/B %.3f -> %.3f, G/(R+B)/2 %.3f -> %.3f", tc.look, rb0, rb, g0, g)
		if tc.rbUp && !(rb > rb0*1.1) {
			t.Errorf("%+v: warmer balance should raise R/B by 10%%: %.3f -> %.3f", tc.look, rb0, rb)
		}
		if tc.rbDn && !(rb < rb0/1.1) {
			t.Errorf("%+v: cooler balance should lower R/B by 10%%: %.3f -> %.3f", tc.look, rb0, rb)
		}
		if tc.gDown && !(g < g0*0.9) {
			t.Errorf("%+v: magenta tint should lower green: %.3f -> %.3f", tc.look, g0, g)
		}
		if y := meanLinearLuminance(out); math.Abs(y-y0) > 0.03*y0 {
			t.Errorf("%+v: white balance moved mean luminance %.4f -> %.4f", tc.look, y0, y)
		}
	}
	// Gains: neutral gray keeps its luminance; positive temperature boosts red.
	g := whiteBalanceGains(60, 20)
	if y := lumR*g[0] + lumG*g[1] + lumB*g[2]; math.Abs(y-1) > 1e-12 {
		t.Errorf("gains change gray luminance: %v", y)
	}
	if !(g[0] > 1 && g[2] < 1) {
		t.Errorf("warm gains %v", g)
	}
}

func TestExposureScalesLinearLight(t *testing.T) {
	img := loadPhoto(t, "brackets", "house_interior_kim", "B.jpg")
	for _, ev := range []float64{1, -1.5} {
		out := mustApply(t, img, Look{Exposure: ev})
		want := math.Exp2(ev)
		var ratios []float64
		for i, v := range img.Pix {
			if v > 0.01 && float64(v)*want < 0.95 {
				ratios = append(ratios, float64(out.Pix[i]/v))
			}
		}
		med := percentile(ratios, 0.5)
		t.Logf("exposure %+.1f EV: median ratio %.4f over %d samples", ev, med, len(ratios))
		if math.Abs(med-want) > 0.01*want {
			t.Errorf("exposure %+.1f EV: median ratio %.4f, want %.4f", ev, med, want)
		}
	}
}

func TestContrastSpreadsMidtones(t *testing.T) {
	img := kitchen(t)
	l0 := lumaPlane(img)
	p10, p90 := percentile(l0, 0.1), percentile(l0, 0.9)
	up := lumaPlane(mustApply(t, img, Look{Contrast: 60}))
	dn := lumaPlane(mustApply(t, img, Look{Contrast: -60}))
	t.Logf("P10/P90: %.3f/%.3f; +60: %.3f/%.3f; -60: %.3f/%.3f", p10, p90,
		percentile(up, 0.1), percentile(up, 0.9), percentile(dn, 0.1), percentile(dn, 0.9))
	if !(percentile(up, 0.9)-percentile(up, 0.1) > (p90-p10)*1.15) {
		t.Error("contrast +60 should widen the 10-90 percentile spread by 15%")
	}
	if !(percentile(dn, 0.9)-percentile(dn, 0.1) < (p90-p10)*0.85) {
		t.Error("contrast -60 should narrow the 10-90 percentile spread by 15%")
	}
	// Black and white stay where they were.
	f, _ := newToneFunc(Look{Contrast: 100})
	if f.at(0) != 0 || math.Abs(f.at(1)-1) > 1e-12 {
		t.Errorf("contrast moves the end points: %v %v", f.at(0), f.at(1))
	}
}

// TestCurveFollowsControlPoints lifts the midtones with one control point and checks
// that samples near it land on it.
func TestCurveFollowsControlPoints(t *testing.T) {
	img := kitchen(t)
	out := mustApply(t, img, Look{Curve: []Point{{0.5, 0.6}}})
	var dev float64
	n := 0
	for i, v := range img.Pix {
		e := imaging.EncodeSRGB64(float64(v))
		if math.Abs(e-0.5) < 0.005 {
			dev += imaging.EncodeSRGB64(float64(out.Pix[i])) - 0.6
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d samples near 0.5", n)
	}
	if d := dev / float64(n); math.Abs(d) > 0.006 {
		t.Errorf("samples at 0.5 moved to 0.6%+.4f", d)
	}
	// The spline passes through its points and never overshoots between rising ones.
	s, err := newSpline([]Point{{0.2, 0.1}, {0.3, 0.5}, {0.7, 0.55}, {0.9, 0.95}})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []Point{{0, 0}, {0.2, 0.1}, {0.3, 0.5}, {0.7, 0.55}, {0.9, 0.95}, {1, 1}} {
		if math.Abs(s.at(p.X)-p.Y) > 1e-12 {
			t.Errorf("spline at %v = %v, want %v", p.X, s.at(p.X), p.Y)
		}
	}
	prev := -1.0
	for x := 0.0; x <= 1; x += 0.001 {
		v := s.at(x)
		if v < prev-1e-12 {
			t.Fatalf("spline falls at %.3f", x)
		}
		prev = v
	}
}

// TestShadowsLiftIsLocal: lifting shadows raises the 10th luminance percentile but not
// the 99th, and pixels in the bright windows stay put even right next to the dark
// room (an edge-aware base layer leaves no halo).
func TestShadowsLiftIsLocal(t *testing.T) {
	img := windowRoom(t)
	l0 := lumaPlane(img)
	out := mustApply(t, img, Look{Shadows: 80})
	l1 := lumaPlane(out)
	p10a, p10b := percentile(l0, 0.1), percentile(l1, 0.1)
	p99a, p99b := percentile(l0, 0.99), percentile(l1, 0.99)
	t.Logf("P10 %.3f -> %.3f, P99 %.3f -> %.3f", p10a, p10b, p99a, p99b)
	if !(p10b > p10a+0.04) {
		t.Errorf("shadows +80 should raise P10 by 0.04: %.3f -> %.3f", p10a, p10b)
	}
	if math.Abs(p99b-p99a) > 0.01 {
		t.Errorf("shadows +80 moved P99 %.3f -> %.3f", p99a, p99b)
	}
	var bright, moved float64
	for i, v := range l0 {
		if v > 0.85 {
			bright++
			moved += math.Abs(l1[i] - v)
		}
	}
	if m := moved / bright; m > 0.01 {
		t.Errorf("bright window pixels moved by %.4f on average", m)
	}
	// Deepening shadows lowers P10.
	l2 := lumaPlane(mustApply(t, img, Look{Shadows: -80}))
	if !(percentile(l2, 0.1) < p10a-0.02) {
		t.Errorf("shadows -80 should lower P10: %.3f -> %.3f", p10a, percentile(l2, 0.1))
	}
}

// TestHighlightsRecoveryKeepsDetail: pulling highlights down lowers the bright end and
// leaves the dark end, and inside the bright regions the local contrast (in stops)
// survives because the gain follows the smooth base layer, not each pixel.
func TestHighlightsRecoveryKeepsDetail(t *testing.T) {
	img := loadPhoto(t, "interiors", "houses_185_kitchen.jpg")
	l0 := lumaPlane(img)
	out := mustApply(t, img, Look{Highlights: -80})
	l1 := lumaPlane(out)
	p95a, p95b := percentile(l0, 0.95), percentile(l1, 0.95)
	p5a, p5b := percentile(l0, 0.05), percentile(l1, 0.05)
	t.Logf("P95 %.3f -> %.3f, P5 %.3f -> %.3f", p95a, p95b, p5a, p5b)
	if !(p95b < p95a-0.04) {
		t.Errorf("highlights -80 should lower P95 by 0.04: %.3f -> %.3f", p95a, p95b)
	}
	if math.Abs(p5b-p5a) > 0.01 {
		t.Errorf("highlights -80 moved P5 %.3f -> %.3f", p5a, p5b)
	}
	// Local contrast in stops over bright, unclipped pixels: |log2 Y - log2 Y(right)|.
	d0, d1 := 0.0, 0.0
	n := 0
	W := img.W()
	for y := 0; y < img.H(); y++ {
		for x := 0; x+1 < W; x++ {
			i := y*W + x
			if l0[i] < 0.7 || l0[i] > 0.97 || l0[i+1] < 0.7 || l0[i+1] > 0.97 {
				continue
			}
			d0 += math.Abs(math.Log2(imaging.DecodeSRGB64(l0[i])) - math.Log2(imaging.DecodeSRGB64(l0[i+1])))
			d1 += math.Abs(math.Log2(imaging.DecodeSRGB64(l1[i])) - math.Log2(imaging.DecodeSRGB64(l1[i+1])))
			n++
		}
	}
	t.Logf("bright-region local contrast %.4f -> %.4f stops over %d pairs", d0/float64(n), d1/float64(n), n)
	if n < 1000 || !(d1 > 0.75*d0) {
		t.Errorf("highlight recovery flattened detail: %.4f -> %.4f stops (%d pairs)", d0/float64(n), d1/float64(n), n)
	}
}

func TestWhitesAndBlacksMoveTheEnds(t *testing.T) {
	img := kitchen(t)
	l0 := lumaPlane(img)
	med0 := percentile(l0, 0.5)
	w := lumaPlane(mustApply(t, img, Look{Whites: 80}))
	b := lumaPlane(mustApply(t, img, Look{Blacks: -80}))
	bl := lumaPlane(mustApply(t, img, Look{Blacks: 80}))
	t.Logf("P98 %.3f -> whites+80 %.3f; P2 %.3f -> blacks-80 %.3f, blacks+80 %.3f",
		percentile(l0, 0.98), percentile(w, 0.98), percentile(l0, 0.02), percentile(b, 0.02), percentile(bl, 0.02))
	if !(percentile(w, 0.98) > percentile(l0, 0.98)+0.03) {
		t.Error("whites +80 should raise the top")
	}
	if !(percentile(b, 0.02) < percentile(l0, 0.02)-0.02) {
		t.Error("blacks -80 should lower the bottom")
	}
	if !(percentile(bl, 0.02) > percentile(l0, 0.02)+0.02) {
		t.Error("blacks +80 should lift the bottom")
	}
	for name, l := range map[string][]float64{"whites": w, "blacks": b} {
		if d := math.Abs(percentile(l, 0.5) - med0); d > 0.05 {
			t.Errorf("%s moved the median by %.3f", name, d)
		}
	}
}

// chroma is the distance of a linear pixel from its own luminance.
func chroma(r, g, b float32) float64 {
	y := lumR*r + lumG*g + lumB*b
	return math.Sqrt(float64((r-y)*(r-y) + (g-y)*(g-y) + (b-y)*(b-y)))
}

func TestSaturationScalesChroma(t *testing.T) {
	img := kitchen(t)
	out := mustApply(t, img, Look{Saturation: 30})
	var ratios []float64
	for i := 0; i+2 < len(img.Pix); i += 3 {
		r, g, b := img.Pix[i], img.Pix[i+1], img.Pix[i+2]
		if c := chroma(r, g, b); c > 0.01 && max(r, g, b) < 0.7 && min(r, g, b) > 0.02 {
			ratios = append(ratios, chroma(out.Pix[i], out.Pix[i+1], out.Pix[i+2])/c)
		}
	}
	if med := percentile(ratios, 0.5); math.Abs(med-1.3) > 0.03 {
		t.Errorf("saturation +30: median chroma ratio %.3f, want 1.3", med)
	}
	gray := mustApply(t, img, Look{Saturation: -100})
	for i := 0; i+2 < len(gray.Pix); i += 3 {
		if c := chroma(gray.Pix[i], gray.Pix[i+1], gray.Pix[i+2]); c > 1e-5 {
			t.Fatalf("saturation -100 left chroma %.6f", c)
		}
	}
}

type faceBox struct {
	Top    int `xml:"top,attr"`
	Left   int `xml:"left,attr"`
	Width  int `xml:"width,attr"`
	Height int `xml:"height,attr"`
}

type faceImage struct {
	File  string    `xml:"file,attr"`
	Boxes []faceBox `xml:"box"`
}

// loadFaceBoxes reads the ground-truth face boxes of the privacy photos.
func loadFaceBoxes(t *testing.T) []faceImage {
	var all []faceImage
	for _, name := range []string{"training.xml", "testing.xml"} {
		data, err := os.ReadFile(testphotos.Path(t, "privacy", "faces", name))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Images []faceImage `xml:"images>image"`
		}
		dec := xml.NewDecoder(bytes.NewReader(data))
		// The files declare ISO-8859-1 but hold only ASCII.
		dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		all = append(all, doc.Images...)
	}
	return all
}

// TestVibranceFavorsMutedColorsAndSparesSkin: vibrance lifts muted colors more than
// saturated ones, and inside the ground-truth face boxes of real portraits it lifts
// color far less than elsewhere at the same saturation.
func TestVibranceFavorsMutedColorsAndSparesSkin(t *testing.T) {
	look := Look{Vibrance: 60}
	var muted, vivid, face, other []float64
	for _, fi := range loadFaceBoxes(t) {
		img := loadPhoto(t, "privacy", "faces", fi.File)
		out := mustApply(t, img, look)
		inFace := make([]bool, img.W()*img.H())
		for _, b := range fi.Boxes {
			for y := max(b.Top, 0); y < min(b.Top+b.Height, img.H()); y++ {
				for x := max(b.Left, 0); x < min(b.Left+b.Width, img.W()); x++ {
					inFace[y*img.W()+x] = true
				}
			}
		}
		for p := 0; p < img.W()*img.H(); p++ {
			r, g, b := img.Pix[3*p], img.Pix[3*p+1], img.Pix[3*p+2]
			c := chroma(r, g, b)
			if c < 0.005 || max(r, g, b) > 0.8 || min(r, g, b) < 0.005 {
				continue
			}
			gain := chroma(out.Pix[3*p], out.Pix[3*p+1], out.Pix[3*p+2])/c - 1
			sat := 1 - math.Sqrt(float64(min(r, g, b)/max(r, g, b)))
			switch {
			case sat < 0.2:
				muted = append(muted, gain)
			case sat > 0.6:
				vivid = append(vivid, gain)
			}
			if sat >= 0.2 && sat <= 0.5 {
				if inFace[p] {
					face = append(face, gain)
				} else {
					other = append(other, gain)
				}
			}
		}
	}
	mm, mv, mf, mo := mean(muted), mean(vivid), mean(face), mean(other)
	t.Logf("chroma gain: muted %.3f, vivid %.3f; same saturation: faces %.3f (%d px), elsewhere %.3f (%d px)", mm, mv, mf, len(face), mo, len(other))
	if !(mm > 2*mv) {
		t.Errorf("muted colors should gain at least twice as much as vivid ones: %.3f vs %.3f", mm, mv)
	}
	if !(mf < 0.6*mo) {
		t.Errorf("faces should gain much less color than other pixels of the same saturation: %.3f vs %.3f", mf, mo)
	}
}

func TestWarmthWarmsMidtonesAndKeepsLuminance(t *testing.T) {
	img := windowRoom(t)
	out := mustApply(t, img, Look{Warmth: 80})
	// Sums of red and blue per luminance class, before and after.
	var mid, dark [4]float64
	for i := 0; i+2 < len(img.Pix); i += 3 {
		r, g, b := img.Pix[i], img.Pix[i+1], img.Pix[i+2]
		y := lumR*r + lumG*g + lumB*b
		if max(r, g, b) > 0.8 {
			continue
		}
		acc := &mid
		switch {
		case y > 0.12:
		case y < 0.004:
			acc = &dark
		default:
			continue
		}
		acc[0] += float64(r)
		acc[1] += float64(b)
		acc[2] += float64(out.Pix[i])
		acc[3] += float64(out.Pix[i+2])
	}
	m0, m1 := mid[0]/mid[1], mid[2]/mid[3]
	d0, d1 := dark[0]/dark[1], dark[2]/dark[3]
	t.Logf("R/B midtones %.3f -> %.3f; deep shadows %.3f -> %.3f", m0, m1, d0, d1)
	if !(m1 > 1.1*m0) {
		t.Errorf("warmth +80 should raise R/B in midtones by 10%%: %.3f -> %.3f", m0, m1)
	}
	if math.Abs(d1/d0-1) > 0.02 {
		t.Errorf("warmth changed deep shadows: R/B %.3f -> %.3f", d0, d1)
	}
	if y0, y1 := meanLinearLuminance(img), meanLinearLuminance(out); math.Abs(y1-y0) > 0.01*y0 {
		t.Errorf("warmth moved mean luminance %.4f -> %.4f", y0, y1)
	}
}

// TestAutoLevelsStretchesPercentiles fogs a real photo (its display values squeezed
// into 0.2..0.75) and checks that auto-levels stretches it back out.
func TestAutoLevelsStretchesPercentiles(t *testing.T) {
	img := kitchen(t)
	fog := img.Clone()
	for i, v := range fog.Pix {
		fog.Pix[i] = imaging.Decode16(uint16(65535 * (0.2 + 0.55*float64(imaging.Encode16(v))/65535)))
	}
	l0 := lumaPlane(fog)
	out, res, err := ApplyResult(context.Background(), fog, Look{AutoLevels: true})
	if err != nil {
		t.Fatal(err)
	}
	l1 := lumaPlane(out)
	lo0, hi0 := percentile(l0, 0.005), percentile(l0, 0.995)
	lo1, hi1 := percentile(l1, 0.005), percentile(l1, 0.995)
	t.Logf("P0.5/P99.5 %.3f/%.3f -> %.3f/%.3f (chose %.3f..%.3f)", lo0, hi0, lo1, hi1, res.LevelsBlack, res.LevelsWhite)
	if !(lo1 < 0.02 && hi1 > 0.97) {
		t.Errorf("auto-levels left P0.5/P99.5 at %.3f/%.3f", lo1, hi1)
	}
	// A photo that already spans the range is left nearly alone.
	full := lumaPlane(mustApply(t, img, Look{AutoLevels: true}))
	orig := lumaPlane(img)
	if d := math.Abs(percentile(full, 0.5) - percentile(orig, 0.5)); d > 0.05 {
		t.Errorf("auto-levels moved a full-range photo's median by %.3f", d)
	}
}

// laplacianEnergy is the mean squared 4-neighbour Laplacian of display luminance.
func laplacianEnergy(img *imaging.Image) float64 {
	l := lumaPlane(img)
	W, H := img.W(), img.H()
	var e float64
	for y := 1; y < H-1; y++ {
		for x := 1; x < W-1; x++ {
			i := y*W + x
			d := 4*l[i] - l[i-1] - l[i+1] - l[i-W] - l[i+W]
			e += d * d
		}
	}
	return e / float64((W-2)*(H-2))
}

func TestSharpenRaisesHighFrequencyEnergy(t *testing.T) {
	img := kitchen(t)
	out, res, err := ApplyResult(context.Background(), img, Look{Sharpen: true})
	if err != nil {
		t.Fatal(err)
	}
	e0, e1 := laplacianEnergy(img), laplacianEnergy(out)
	m0, m1 := mean(lumaPlane(img)), mean(lumaPlane(out))
	t.Logf("laplacian energy %.6f -> %.6f, mean luma %.4f -> %.4f, sigma %.2f", e0, e1, m0, m1, res.SharpenSigma)
	if !(e1 > 1.2*e0) {
		t.Errorf("sharpen should raise high-frequency energy by 20%%: %.6f -> %.6f", e0, e1)
	}
	if math.Abs(m1-m0) > 0.005 {
		t.Errorf("sharpen moved mean luma %.4f -> %.4f", m0, m1)
	}
	if s1, s2 := sharpenSigma(1024, 683), sharpenSigma(5616, 3744); !(s2 > 2*s1) {
		t.Errorf("radius should grow with image size: %.2f at 1 MP, %.2f at 21 MP", s1, s2)
	}
}

func TestZeroLookChangesNothing(t *testing.T) {
	img := kitchen(t)
	out := mustApply(t, img, Look{})
	for i, v := range img.Pix {
		if math.Abs(float64(out.Pix[i]-imaging.Clamp01(v))) > 1e-6 {
			t.Fatalf("sample %d: %v -> %v", i, v, out.Pix[i])
		}
	}
}

func TestApplyKeepsAlphaAndIsDeterministic(t *testing.T) {
	src := kitchen(t)
	img := imaging.New(src.W(), src.H(), 4)
	for p := 0; p < src.W()*src.H(); p++ {
		copy(img.Pix[4*p:4*p+3], src.Pix[3*p:3*p+3])
		img.Pix[4*p+3] = float32(p%7) / 6
	}
	look := Look{Shadows: 30, Highlights: -30, Vibrance: 20, AutoLevels: true, Sharpen: true}
	a := mustApply(t, img, look)
	b := mustApply(t, img, look)
	for i := range a.Pix {
		if a.Pix[i] != b.Pix[i] {
			t.Fatalf("sample %d differs between runs", i)
		}
		if i%4 == 3 && a.Pix[i] != img.Pix[i] {
			t.Fatalf("alpha %d changed: %v -> %v", i, img.Pix[i], a.Pix[i])
		}
	}
}

func TestBadInputIsAnError(t *testing.T) {
	good := imaging.New(32, 24, 3)
	for name, tc := range map[string]struct {
		img  *imaging.Image
		look Look
	}{
		"nil image":       {nil, Look{}},
		"gray image":      {imaging.New(8, 8, 1), Look{}},
		"short buffer":    {&imaging.Image{Pix: make([]float32, 5), Stride: 96, C: 3, Rect: good.Rect}, Look{}},
		"empty":           {imaging.New(0, 0, 3), Look{}},
		"slider range":    {good, Look{Contrast: 150}},
		"NaN slider":      {good, Look{Shadows: math.NaN()}},
		"exposure":        {good, Look{Exposure: 6}},
		"curve order":     {good, Look{Curve: []Point{{0.5, 0.5}, {0.4, 0.6}}}},
		"curve range":     {good, Look{Curve: []Point{{0.5, 1.5}}}},
		"curve duplicate": {good, Look{Curve: []Point{{0.5, 0.5}, {0.5, 0.6}}}},
	} {
		if _, err := Apply(context.Background(), tc.img, tc.look); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestTablesMatchTheirFunctions(t *testing.T) {
	f, _ := newToneFunc(Look{Contrast: 40, Blacks: 30, Curve: []Point{{0.3, 0.35}}})
	fn := func(v float64) float64 { return imaging.DecodeSRGB64(clamp01(f.at(imaging.EncodeSRGB64(v)))) }
	l := newLUT(fn)
	for v := 0.0; v < 5; v += 0.000731 {
		want := fn(math.Min(v, float64(lutMax)))
		if got := float64(l.at(float32(v))); math.Abs(got-want) > 2e-4 {
			t.Fatalf("lut at %v = %v, want %v", v, got, want)
		}
	}
	for v := float32(lumFloor); v < 16; v *= 1.01 {
		if d := float64(fastLog2(v)) - math.Log2(float64(v)); math.Abs(d) > 0.0015 {
			t.Fatalf("fastLog2(%v) off by %v", v, d)
		}
	}
	g := newGainTable(100, -100)
	prev := math.Inf(-1)
	for b := gainLo; b <= gainHi; b += 0.01 {
		out := b + math.Log2(float64(g.at(float32(b))))
		if out < prev {
			t.Fatalf("base tone map falls at %.2f stops", b)
		}
		prev = out
	}
}

// TestTinyAndOddImages runs every operation on degenerate sizes and on out-of-range
// samples (negative, above white, infinite, NaN): no panic, output finite in 0..1.
func TestTinyAndOddImages(t *testing.T) {
	odd := []float32{-0.5, 0, 1e-9, 0.2, 1, 3, 50, float32(math.Inf(1)), float32(math.NaN())}
	for _, size := range [][2]int{{1, 1}, {1, 7}, {7, 1}, {3, 2}, {17, 5}} {
		img := imaging.New(size[0], size[1], 3)
		for i := range img.Pix {
			img.Pix[i] = odd[(i*7)%len(odd)]
		}
		for _, l := range []Look{benchLook, benchLookClean} {
			out, err := Apply(context.Background(), img, l)
			if err != nil {
				t.Fatalf("%v: %v", size, err)
			}
			for i, v := range out.Pix {
				if !(v >= 0 && v <= 1) {
					t.Fatalf("%v: sample %d is %v", size, i, v)
				}
			}
		}
	}
}

// TestBandSplitDoesNotShowInTheOutput renders with 1, 3 and 7 workers: the streamed
// sharpening renders halo rows around each band, which must make the split invisible.
func TestBandSplitDoesNotShowInTheOutput(t *testing.T) {
	img := kitchen(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var ref *imaging.Image
	for _, n := range []int{1, 3, 7} {
		runtime.GOMAXPROCS(n)
		out := mustApply(t, img, benchLook)
		if ref == nil {
			ref = out
			continue
		}
		for i := range out.Pix {
			if out.Pix[i] != ref.Pix[i] {
				t.Fatalf("%d workers: sample %d (row %d) differs: %v vs %v", n, i, i/ref.Stride, out.Pix[i], ref.Pix[i])
			}
		}
	}
}

// TestApplyInPlaceMatchesApply renders over the input with 1, 3 and 7 workers (RGB
// and RGBA, with and without sharpening): the result must be Apply's exactly, band
// seams included.
func TestApplyInPlaceMatchesApply(t *testing.T) {
	src := kitchen(t)
	rgba := imaging.New(src.W(), src.H(), 4)
	for p := 0; p < src.W()*src.H(); p++ {
		copy(rgba.Pix[4*p:4*p+3], src.Pix[3*p:3*p+3])
		rgba.Pix[4*p+3] = float32(p%5) / 4
	}
	sharp := benchLook
	sharp.Sharpen = true
	soft := benchLook
	soft.Sharpen = false
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, img := range []*imaging.Image{src, rgba} {
		for _, look := range []Look{sharp, soft} {
			want := mustApply(t, img, look)
			for _, n := range []int{1, 3, 7} {
				runtime.GOMAXPROCS(n)
				got := img.Clone()
				if _, err := ApplyInPlace(context.Background(), got, look); err != nil {
					t.Fatal(err)
				}
				for i := range got.Pix {
					if got.Pix[i] != want.Pix[i] {
						t.Fatalf("C=%d sharpen=%v, %d workers: sample %d (row %d) differs: %v vs %v",
							img.C, look.Sharpen, n, i, i/img.Stride, got.Pix[i], want.Pix[i])
					}
				}
			}
		}
	}
}
