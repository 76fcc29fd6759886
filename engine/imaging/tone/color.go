package tone

import "math"

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
)

// colorOps holds the per-pixel color controls of a look.
type colorOps struct {
	saturation float32 // multiplier of chroma
	vibrance   float32 // -1..1
	warmth     float32 // -warmthAt100..warmthAt100
}

func newColorOps(l Look) colorOps {
	return colorOps{
		saturation: float32(1 + l.Saturation/100),
		vibrance:   float32(l.Vibrance / 100),
		warmth:     float32(warmthAt100 * l.Warmth / 100),
	}
}

// apply changes one linear RGB pixel. Chroma is scaled about the pixel's luminance,
// so saturation and vibrance leave luminance alone. (One function per pixel: the
// vibrance weight is written out here rather than called.)
func (c *colorOps) apply(r, g, b float32) (float32, float32, float32) {
	y := lumR*r + lumG*g + lumB*b
	f := c.saturation
	if c.vibrance != 0 {
		// Vibrance reaches muted colors most and fully saturated ones not at all.
		// Saturation is judged on square-root encoded values, close to what the eye
		// sees: 1 - sqrt(min)/sqrt(max) = 1 - sqrt(min/max).
		mx := max(r, g, b)
		w := float32(1)
		if mx > 0 {
			sat := 1 - sqrt32(max(min(r, g, b), 0)/mx)
			w = (1 - sat) * (1 - sat)
			if c.vibrance > 0 && r > g && g > b {
				w *= 1 - vibranceSkinGuard*skinLikelihood(r, g, b, sat)
			}
		}
		f *= 1 + c.vibrance*w
	}
	if f != 1 {
		r = y + (r-y)*f
		g = y + (g-y)*f
		b = y + (b-y)*f
	}
	if c.warmth != 0 {
		w := c.warmth * smoothstep32(warmthFrom, warmthTo, y)
		r *= 1 + w
		g *= 1 + warmthGreen*w
		b *= 1 - 2*w
	}
	return max(r, 0), max(g, 0), max(b, 0)
}

// skinLikelihood is 1 for the orange hues and moderate saturations of human skin
// (across skin tones), falling to 0 away from them; it expects r > g > b (linear)
// and sat, the square-root-encoded saturation.
func skinLikelihood(r, g, b, sat float32) float32 {
	// Position within the red-to-yellow sextant in linear light: 0 at red, 1 at
	// yellow. Skin from pale to dark sits around 0.15-0.45.
	h := (g - b) / (r - b)
	ht := 1 - abs32(h-0.3)/0.25
	if ht <= 0 {
		return 0
	}
	return ht * smoothstep32(0.1, 0.2, sat) * (1 - smoothstep32(0.75, 0.9, sat))
}

func smoothstep32(e0, e1, x float32) float32 {
	t := (x - e0) / (e1 - e0)
	if t <= 0 {
		return 0
	}
	if t >= 1 {
		return 1
	}
	return t * t * (3 - 2*t)
}

func sqrt32(v float32) float32 {
	if v <= 0 {
		return 0
	}
	return float32(math.Sqrt(float64(v)))
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
