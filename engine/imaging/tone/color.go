package tone

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

const (
	// vibranceSkinGuard is how much of the vibrance boost skin tones are spared.
	vibranceSkinGuard = 0.9
	// warmthAt100 is the red gain (and twice the blue cut) of Warmth 100 at full
	// weight.
	warmthAt100 = 0.1
	// warmthGreen balances the red and blue changes so a neutral keeps its luminance:
	// lumR*1 + lumG*warmthGreen + lumB*(-2) = 0.
	warmthGreen = -(lumR - 2*lumB) / lumG
	// Warmth fades in between these linear luminances: shadows stay neutral.
	warmthFrom, warmthTo = 0.005, 0.12
	// Shadow cleaning is full below cleanFull and gone above cleanTo (linear
	// luminance of the rendered pixel: L* about 20 and 50).
	cleanFull, cleanTo = 0.03, 0.18
	// cleanMaxRatio is the largest max/min channel ratio of a dark pixel that counts
	// as a neutral surface when the cast is measured: clearly coloured objects (a
	// green sofa) do not vote.
	cleanMaxRatio = 1.6
	// cleanMaxGain limits the correction of any channel (about half a stop).
	cleanMaxGain = 1.4
	// cleanDesat is the share of chroma CleanShadows 100 takes out of the deepest
	// shadows: what remains there after the cast is mostly colour noise and the
	// muddy tints of dark furniture, which a lifted room shows.
	cleanDesat = 0.5
)

// colorOps holds the per-pixel color controls of a look.
type colorOps struct {
	saturation float32 // multiplier of chroma
	vibrance   float32 // -1..1
	warmth     float32 // -warmthAt100..warmthAt100
	// clean is the gain minus 1 of each channel that neutralizes the shadows' cast,
	// times the CleanShadows strength; zero when off or when there is no cast.
	clean [3]float32
	// desat is the share of chroma taken out of the deepest shadows.
	desat float32
}

func newColorOps(l Look) colorOps {
	return colorOps{
		saturation: float32(1 + l.Saturation/100),
		vibrance:   float32(l.Vibrance / 100),
		warmth:     float32(warmthAt100 * l.Warmth / 100),
		desat:      float32(cleanDesat * l.CleanShadows / 100),
	}
}

// apply changes one linear RGB pixel. Chroma is scaled about the pixel's luminance,
// so saturation and vibrance leave luminance alone. (One function per pixel: the
// vibrance weight is written out here rather than called.)
func (c *colorOps) apply(r, g, b float32) (float32, float32, float32) {
	y := lumR*r + lumG*g + lumB*b
	f := c.saturation
	if c.desat != 0 {
		w := 1 - imaging.Smoothstep32(cleanFull, cleanTo, y)
		r *= 1 + w*c.clean[0]
		g *= 1 + w*c.clean[1]
		b *= 1 + w*c.clean[2]
		f *= 1 - w*c.desat
	}
	if c.vibrance != 0 {
		// Vibrance reaches muted colors most and fully saturated ones not at all.
		// Saturation is judged on square-root encoded values, close to what the eye
		// sees: sat = 1 - sqrt(min/max), so the weight (1 - sat)^2 is simply
		// q = min/max. Orange pixels (r > g > b) may be skin: one division gives both
		// q = b/r and the hue (g-b)/(r-b).
		var w float32
		if c.vibrance > 0 && r > g && g > b && b >= 0 {
			inv := 1 / (r * (r - b))
			w = b * (r - b) * inv
			w *= 1 - vibranceSkinGuard*skinLikelihood((g-b)*r*inv, w)
		} else if mx := imaging.Max3(r, g, b); mx > 0 {
			w = imaging.NonNeg(imaging.Min3(r, g, b)) / mx
		} else {
			w = 1
		}
		f *= 1 + c.vibrance*w
	}
	if f != 1 {
		r = y + (r-y)*f
		g = y + (g-y)*f
		b = y + (b-y)*f
	}
	if c.warmth != 0 {
		w := c.warmth * imaging.Smoothstep32(warmthFrom, warmthTo, y)
		r *= 1 + w
		g *= 1 + warmthGreen*w
		b *= 1 - 2*w
	}
	return imaging.NonNeg(r), imaging.NonNeg(g), imaging.NonNeg(b)
}

// shadowCast returns per-channel gains that turn the mean colour of the rendered
// near-neutral shadows of the analysis copy gray (keeping gray's luminance), each
// within 1/cleanMaxGain..cleanMaxGain, or ok false when the copy has too few of them.
// px renders thumbnail pixel i up to the colour controls.
func shadowCast(n int, px func(i int) (r, g, b float32)) (gains [3]float64, ok bool) {
	var sum [3]float64
	var wsum float64
	for i := 0; i < n; i++ {
		r, g, b := px(i)
		y := lumR*r + lumG*g + lumB*b
		if !(y > 1.0/4096) || imaging.Min3(r, g, b) <= 0 || imaging.Max3(r, g, b) > cleanMaxRatio*imaging.Min3(r, g, b) {
			continue
		}
		w := float64(1 - imaging.Smoothstep32(cleanFull, cleanTo, y))
		sum[0] += w * float64(r/y)
		sum[1] += w * float64(g/y)
		sum[2] += w * float64(b/y)
		wsum += w
	}
	// At least 1 % of the copy must be neutral shadow for a cast to be measured.
	if wsum < 0.01*float64(n) {
		return gains, false
	}
	for c := range gains {
		gains[c] = wsum / sum[c]
	}
	y := lumR*gains[0] + lumG*gains[1] + lumB*gains[2]
	for c := range gains {
		gains[c] = math.Min(cleanMaxGain, math.Max(1/cleanMaxGain, gains[c]/y))
	}
	return gains, true
}

// skinLikelihood is 1 for the orange hues and moderate saturations of human skin
// (across skin tones), falling to 0 away from them. For a pixel with r > g > b
// (linear), h = (g-b)/(r-b) is its position in the red-to-yellow sextant (0 at red,
// 1 at yellow; skin from pale to dark sits around 0.15-0.45) and q = b/r; in
// square-root encoded terms the saturation 1 - sqrt(q) of skin lies between about
// 0.15 and 0.8: q between 0.72 and 0.04.
func skinLikelihood(h, q float32) float32 {
	ht := 1 - imaging.Abs32(h-0.3)/0.25
	if ht <= 0 {
		return 0
	}
	return ht * (1 - imaging.Smoothstep32(0.64, 0.81, q)) * imaging.Smoothstep32(0.01, 0.0625, q)
}
