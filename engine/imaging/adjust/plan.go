package adjust

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Rec. 709 / sRGB luminance weights of linear RGB.
const (
	lumR = 0.2126
	lumG = 0.7152
	lumB = 0.0722
)

// White balance scale.
const (
	refCCT = 6504.0 // the reference illuminant, about D65
	// miredPerUnit: Temperature 100 assumes a light 65 mired bluer than the
	// reference and adapts it away, which looks like going from daylight to about
	// 4500 K.
	miredPerUnit = 0.65
	// duvPerUnit: Tint 100 assumes a light 0.0002·100 = 0.02 Duv greener than the
	// locus and adapts it away (a clear magenta shift).
	duvPerUnit     = 0.0002
	minCCT, maxCCT = 1667.0, 25000.0
)

// Tone scale.
const (
	// Shadows lift (or deepen) by up to shadowStops, fully below shadowFull stops
	// under white and fading out by shadowNone (mid-gray is -2.47).
	shadowStops            = 1.5
	shadowFull, shadowNone = -6.0, -1.0
	// Highlights move by up to highlightStops, nothing at or below mid-gray and
	// fully from white up. Recovery (negative) also compresses the range above white
	// by up to highlightFold, so about two stops over white fold back to white.
	highlightStops             = 0.6
	highlightFrom, highlightTo = -2.5, 0.0
	highlightFold              = 0.85
	// Whites and blacks move the ends of the display-encoded scale; each fades out
	// over half the scale so the other end stays.
	whitesAt100 = 0.15
	blacksAt100 = 0.08
	// contrastAt100 is the change of slope of the S-curve at mid-gray.
	contrastAt100 = 0.6
	// midGray is the display-encoded value of 18 % gray: the contrast pivot.
	midGray = 0.4613561
)

// Colour scale.
const (
	// vibranceSkinGuard is how much of a vibrance boost skin-like hues are spared.
	vibranceSkinGuard = 0.85
	// vibranceCutAt100 is the chroma vibrance -100 takes out of saturated colours
	// (muted ones lose half as much).
	vibranceCutAt100 = 0.7
)

// plan is Settings compiled for rendering: one matrix, one tone table, two colour
// factors. It holds no image and is reused across renders.
type plan struct {
	m      [9]float32 // white balance and exposure, row-major on (r, g, b)
	matrix bool
	tone   bool
	lut    [lutEntries + 1]float32
	sat    float32 // chroma multiplier
	vib    float32 // -1..1
	color  bool
}

// compile fills p for s. It allocates nothing.
func (p *plan) compile(s Settings) {
	p.matrix = s.Exposure != 0 || s.Temperature != 0 || s.Tint != 0
	if p.matrix {
		m := whiteBalance(s.Temperature, s.Tint)
		g := math.Exp2(s.Exposure)
		for i := range m {
			p.m[i] = float32(m[i] * g)
		}
	}
	c := newCurve(s)
	p.tone = !c.identity()
	if p.tone {
		for i := range p.lut {
			// The table maps the norm plus lutOffset: see lutGain.
			u := lutInput(i)
			n := u - lutOffset
			p.lut[i] = float32((c.at(math.Max(n, 0)) + lutOffset) / u)
		}
	}
	p.sat = float32(1 + s.Saturation/100)
	p.vib = float32(s.Vibrance / 100)
	p.color = s.Saturation != 0 || s.Vibrance != 0
}

// whiteBalance returns the matrix, on linear sRGB, that adapts the light that
// temperature and tint assume to the reference, scaled so that gray keeps its
// luminance. Positive temperature assumes a bluer light, so taking it away warms the
// photo; positive tint assumes a greener one.
func whiteBalance(temperature, tint float64) [9]float64 {
	if temperature == 0 && tint == 0 {
		return [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	}
	m0 := 1e6 / refCCT
	cct := math.Min(maxCCT, math.Max(minCCT, 1e6/(m0-miredPerUnit*temperature)))
	srcU, srcV := planckUV(cct)
	if tint != 0 {
		nu, nv := locusNormal(cct)
		srcU += nu * duvPerUnit * tint
		srcV += nv * duvPerUnit * tint
	}
	dstU, dstV := planckUV(refCCT)
	src := lms(uvToXYZ(srcU, srcV))
	dst := lms(uvToXYZ(dstU, dstV))
	// RGB -> XYZ -> LMS, scale, back.
	d := [9]float64{dst[0] / src[0], 0, 0, 0, dst[1] / src[1], 0, 0, 0, dst[2] / src[2]}
	m := mul3(xyzToRGB, mul3(inv3(bradford), mul3(d, mul3(bradford, rgbToXYZ))))
	y := lumR*(m[0]+m[1]+m[2]) + lumG*(m[3]+m[4]+m[5]) + lumB*(m[6]+m[7]+m[8])
	for i := range m {
		m[i] /= y
	}
	return m
}

var (
	rgbToXYZ = [9]float64{
		0.4124564, 0.3575761, 0.1804375,
		0.2126729, 0.7151522, 0.0721750,
		0.0193339, 0.1191920, 0.9503041,
	}
	xyzToRGB = inv3(rgbToXYZ)
	bradford = [9]float64{
		0.8951, 0.2664, -0.1614,
		-0.7502, 1.7135, 0.0367,
		0.0389, -0.0685, 1.0296,
	}
)

func lms(xyz [3]float64) [3]float64 {
	b := bradford
	return [3]float64{
		b[0]*xyz[0] + b[1]*xyz[1] + b[2]*xyz[2],
		b[3]*xyz[0] + b[4]*xyz[1] + b[5]*xyz[2],
		b[6]*xyz[0] + b[7]*xyz[1] + b[8]*xyz[2],
	}
}

// planckUV is the CIE 1960 uv of a blackbody at cct kelvin, from the cubic fit of
// the Planckian locus by Kim et al. (2002), valid 1667-25000 K.
func planckUV(t float64) (u, v float64) {
	x, y := imaging.PlanckXY(t)
	d := -2*x + 12*y + 3
	return 4 * x / d, 6 * y / d
}

// locusNormal is the unit normal of the Planckian locus at cct in uv, pointing to
// the green side (positive Duv).
func locusNormal(cct float64) (nu, nv float64) {
	u0, v0 := planckUV(cct * 0.99)
	u1, v1 := planckUV(cct * 1.01)
	tu, tv := u1-u0, v1-v0
	l := math.Hypot(tu, tv)
	nu, nv = -tv/l, tu/l
	if nv < 0 {
		nu, nv = -nu, -nv
	}
	return nu, nv
}

// uvToXYZ is the XYZ of luminance 1 with CIE 1960 chromaticity (u, v).
func uvToXYZ(u, v float64) [3]float64 {
	d := 2*u - 8*v + 4
	x, y := 3*u/d, 2*v/d
	return [3]float64{x / y, 1, (1 - x - y) / y}
}

func mul3(a, b [9]float64) (m [9]float64) {
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			m[i*3+j] = a[i*3]*b[j] + a[i*3+1]*b[3+j] + a[i*3+2]*b[6+j]
		}
	}
	return m
}

func inv3(a [9]float64) [9]float64 {
	c := [9]float64{
		a[4]*a[8] - a[5]*a[7], a[2]*a[7] - a[1]*a[8], a[1]*a[5] - a[2]*a[4],
		a[5]*a[6] - a[3]*a[8], a[0]*a[8] - a[2]*a[6], a[2]*a[3] - a[0]*a[5],
		a[3]*a[7] - a[4]*a[6], a[1]*a[6] - a[0]*a[7], a[0]*a[4] - a[1]*a[3],
	}
	det := a[0]*c[0] + a[1]*c[3] + a[2]*c[6]
	for i := range c {
		c[i] /= det
	}
	return c
}

// curve is the tone scale of Settings, a function of linear light, built from the
// sliders scaled to -1..1.
type curve struct {
	shadows, highlights, whites, blacks, contrast float64
}

func newCurve(s Settings) curve {
	return curve{
		shadows:    s.Shadows / 100,
		highlights: s.Highlights / 100,
		whites:     whitesAt100 * s.Whites / 100,
		blacks:     blacksAt100 * s.Blacks / 100,
		contrast:   contrastAt100 * s.Contrast / 100,
	}
}

func (c curve) identity() bool { return c == curve{} }

// at maps a linear level. Every part is monotone, so the whole is: the shadow gain
// changes the slope in stops by at most 1.5·0.3, the highlight gain by 0.6·0.6
// below white and 0.85 above it, the whites and blacks offsets the slope of
// display values by at most 3·0.15 and 3·0.08, and the S-curve by the contrast
// factor, at most 0.6.
func (c curve) at(n float64) float64 {
	if n > 0 && (c.shadows != 0 || c.highlights != 0) {
		e := math.Log2(n)
		g := 0.0
		if c.shadows != 0 {
			g += c.shadows * shadowStops * (1 - imaging.Smoothstep(shadowFull, shadowNone, e))
		}
		if c.highlights != 0 {
			g += c.highlights * highlightStops * imaging.Smoothstep(highlightFrom, highlightTo, e)
			if c.highlights < 0 && e > 0 {
				// A soft knee: slope 0 at white, highlightFold far above it.
				g += c.highlights * highlightFold * (math.Sqrt(e*e+0.25) - 0.5)
			}
		}
		n = math.Exp2(e + g)
	}
	if c.whites == 0 && c.blacks == 0 && c.contrast == 0 {
		return n
	}
	u := imaging.EncodeSRGB64(n)
	if c.blacks != 0 {
		u += c.blacks * (1 - imaging.Smoothstep(0, 0.5, u))
	}
	if c.whites != 0 {
		u += c.whites * imaging.Smoothstep(0.5, 1, u)
	}
	if u < 0 {
		u = 0
	}
	if c.contrast != 0 && u < 1 {
		// Two half-sines meeting at mid-gray with slope 1+k there and 1-k at both
		// ends: darker below the pivot, brighter above it for k > 0.
		k := c.contrast
		if u < midGray {
			u -= k * midGray / math.Pi * math.Sin(math.Pi*u/midGray)
		} else {
			u += k * (1 - midGray) / math.Pi * math.Sin(math.Pi*(u-midGray)/(1-midGray))
		}
	}
	return imaging.DecodeSRGB64(u)
}

// The tone table holds, for a norm n, the gain (F(n)+lutOffset)/(n+lutOffset): a
// pixel's channels c become (c+lutOffset)·gain - lutOffset. On gray that is exactly
// F, including a black lifted from zero; elsewhere the offset is far below any
// visible level. Entries are spaced evenly within each octave of n+lutOffset (128 an
// octave from 2^-12 to 2^6), so the index comes from the float's exponent and
// mantissa bits without a logarithm, and deep shadows get as many entries as
// highlights.
const (
	lutMinExp   = -12
	lutMaxExp   = 6 // 64: exposure +5 on white, with white balance gains, stays inside
	lutStepBits = 7
	lutEntries  = (lutMaxExp - lutMinExp) << lutStepBits
	lutFracBits = 23 - lutStepBits
	lutFracMask = 1<<lutFracBits - 1
	lutBase     = (127 + lutMinExp) << lutStepBits
	lutFracUnit = 1.0 / (1 << lutFracBits)
	lutOffset   = 1.0 / (1 << -lutMinExp)
)

// lutTop is the largest table input: just below 2^lutMaxExp, so its index and the
// next stay inside the table.
var lutTop = math.Nextafter32(float32(math.Ldexp(1, lutMaxExp)), 0)

// lutInput is the value of n+lutOffset that entry i stands for.
func lutInput(i int) float64 {
	e := lutMinExp + i>>lutStepBits
	m := 1 + float64(i&(1<<lutStepBits-1))/(1<<lutStepBits)
	return math.Ldexp(m, e)
}
