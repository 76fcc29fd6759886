package sky

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// cloudField renders a style over a full frame and returns, per pixel, how far the
// clouds moved the colour away from the style's bare gradient (linear RGB distance).
func cloudField(t *testing.T, style string, w, h int) (sky *imaging.Image, cloud []float64) {
	t.Helper()
	lk, ok := lookOf(style)
	if !ok {
		t.Fatalf("no look for %s", style)
	}
	geo := skyGeometry{w: w, h: h, horizon: float32(h), focal: 0.9 * float32(w), exposure: 1}
	want := make([]bool, w*h)
	for i := range want {
		want[i] = true
	}
	sky = renderSky(lk, geo, want)
	bare := lk
	bare.clouds = noClouds
	base := renderSky(bare, geo, want)
	cloud = make([]float64, w*h)
	for p := range cloud {
		d := 0.0
		for c := 0; c < 3; c++ {
			v := float64(sky.Pix[p*3+c] - base.Pix[p*3+c])
			d += v * v
		}
		cloud[p] = math.Sqrt(d)
	}
	return sky, cloud
}

func coverage(cloud []float64, w, y0, y1 int) float64 {
	n := 0
	for p := y0 * w; p < y1*w; p++ {
		if cloud[p] > 0.03 {
			n++
		}
	}
	return float64(n) / float64((y1-y0)*w)
}

func TestStyleGradientsAreSkyLike(t *testing.T) {
	for _, st := range Styles() {
		sky, _ := cloudField(t, st, 240, 160)
		top, bottom := pixelAt(sky, 120, 2), pixelAt(sky, 120, 150)
		if !(top[2] > top[0] && bottom[2] > bottom[0]) {
			t.Errorf("%s: not blue (top %v, horizon %v)", st, top, bottom)
		}
		if st == StyleClear && luma(top) >= luma(bottom) {
			t.Errorf("%s: zenith %v not darker than horizon %v", st, top, bottom)
		}
	}
}

func TestStyleCloudShapes(t *testing.T) {
	const w, h = 320, 240
	_, clear := cloudField(t, StyleClear, w, h)
	if c := coverage(clear, w, 0, h); c != 0 {
		t.Errorf("clear: %.3f of the sky has clouds", c)
	}
	_, low := cloudField(t, StyleLowCloud, w, h)
	upper, lower := coverage(low, w, 0, h/2), coverage(low, w, h/2, h-h/10)
	t.Logf("low_cloud coverage: upper %.3f, lower %.3f", upper, lower)
	if lower < 0.15 || lower < 2*upper {
		t.Errorf("low_cloud: clouds should gather low (upper %.3f, lower %.3f)", upper, lower)
	}
	_, high := cloudField(t, StyleHighCloud, w, h)
	cov := coverage(high, w, 0, h)
	// Streaks run near horizontal: the field changes faster across them (vertically)
	// than along them.
	var along, across float64
	for y := 0; y+4 < h; y++ {
		for x := 0; x+4 < w; x++ {
			p := y*w + x
			along += math.Abs(high[p+4] - high[p])
			across += math.Abs(high[p+4*w] - high[p])
		}
	}
	t.Logf("high_cloud coverage %.3f, change along %.1f across %.1f", cov, along, across)
	if cov < 0.1 || across < 1.5*along {
		t.Errorf("high_cloud: want streaky cover (coverage %.3f, along %.1f, across %.1f)", cov, along, across)
	}
	neutralSky, neutral := cloudField(t, StyleNeutral, w, h)
	clearSky, _ := cloudField(t, StyleClear, w, h)
	if c := coverage(neutral, w, 0, h); c < 0.6 {
		t.Errorf("neutral: only %.3f covered, want an even veil", c)
	}
	if sn, sc := saturation(neutralSky), saturation(clearSky); sn >= 0.7*sc {
		t.Errorf("neutral saturation %.3f not well below clear %.3f", sn, sc)
	}
}

func pixelAt(m *imaging.Image, x, y int) [3]float32 {
	return [3]float32{m.At(x, y, 0), m.At(x, y, 1), m.At(x, y, 2)}
}

func saturation(m *imaging.Image) float64 {
	s := 0.0
	for p := 0; p < m.W()*m.H(); p++ {
		r, g, b := m.Pix[p*3], m.Pix[p*3+1], m.Pix[p*3+2]
		mx, mn := max(r, g, b), min(r, g, b)
		if mx > 0 {
			s += float64((mx - mn) / mx)
		}
	}
	return s / float64(m.W()*m.H())
}

func TestNoiseDeterministicAndBounded(t *testing.T) {
	sum, n := 0.0, 0
	for i := 0; i < 20000; i++ {
		x, y := float32(i%211)*0.173-9, float32(i/211)*0.291+3
		a, b := noise2(x, y, 5), noise2(x, y, 5)
		if a != b {
			t.Fatal("noise2 not deterministic")
		}
		if a < -1 || a > 1 {
			t.Fatalf("noise2(%v, %v) = %v", x, y, a)
		}
		if f := fbm(x, y, 5, 0.5, 9); f < -1.7 || f > 1.7 {
			t.Fatalf("fbm(%v, %v) = %v", x, y, f)
		}
		if r := ridged(x, y, 4, 0.5, 9); r < 0 || r > 1 {
			t.Fatalf("ridged(%v, %v) = %v", x, y, r)
		}
		sum += float64(a)
		n++
	}
	if mean := sum / float64(n); math.Abs(mean) > 0.03 {
		t.Errorf("noise mean %.4f, want about 0", mean)
	}
	if noise2(1.5, 2.5, 1) == noise2(1.5, 2.5, 2) {
		t.Error("seed does not change the noise")
	}
}

func TestGMMSeparatesClusters(t *testing.T) {
	// Two colour clusters: sky blue and roof brown, with a little spread.
	var lab []float32
	var idxA, idxB []int32
	for i := 0; i < 400; i++ {
		j := float32(i%20) * 0.2
		idxA = append(idxA, int32(len(lab)/3))
		lab = append(lab, 60+j, -2+j/2, -35-j)
		idxB = append(idxB, int32(len(lab)/3))
		lab = append(lab, 35-j, 14+j/2, 20+j)
	}
	a, b := fitGMM(lab, idxA, 3), fitGMM(lab, idxB, 3)
	if a == nil || b == nil || len(a.comps) == 0 || len(b.comps) == 0 {
		t.Fatal("no components fitted")
	}
	if a.logLik(61, -1, -36) <= b.logLik(61, -1, -36) || b.logLik(34, 15, 21) <= a.logLik(34, 15, 21) {
		t.Error("each model should prefer its own cluster")
	}
	if fitGMM(lab, nil, 3) != nil {
		t.Error("an empty sample should give no model")
	}
}
