package adjust

import (
	"context"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Apply renders s over img (linear light, 3 or 4 channels; alpha is left alone).
// Zero settings return at once with img untouched. Once ctx is done it stops within
// imaging.ChunkRows rows and returns ctx.Err(), img partly rendered.
func Apply(ctx context.Context, img *imaging.Image, s Settings) error {
	return ApplyTo(ctx, img, img, s)
}

// ApplyTo renders s from src into dst, which may be src itself and must have its
// size and channel count. With zero settings dst becomes a copy of src.
func ApplyTo(ctx context.Context, dst, src *imaging.Image, s Settings) error {
	if err := check(src); err != nil {
		return err
	}
	if err := check(dst); err != nil {
		return err
	}
	if !imaging.SameSize(dst, src) || dst.C != src.C {
		return fmt.Errorf("adjust: destination %dx%dx%d, source %dx%dx%d",
			dst.W(), dst.H(), dst.C, src.W(), src.H(), src.C)
	}
	if err := s.Validate(); err != nil {
		return err
	}
	if s.IsZero() {
		if dst == src {
			return nil
		}
		return imaging.BandsCtx(ctx, src.H(), func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				copy(dst.Row(y), src.Row(y))
			}
		})
	}
	p := new(plan)
	p.compile(s)
	return imaging.BandsCtx(ctx, src.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			p.row(dst.Row(y), src.Row(y), src.C)
		}
	})
}

func check(m *imaging.Image) error {
	if m == nil || m.IsNarrow() || m.C < 3 || m.W() <= 0 || m.H() <= 0 {
		return fmt.Errorf("adjust: need a float RGB image")
	}
	return nil
}

// row renders one row of c-channel pixels from in to out (which may be the same
// slice). Channels past the third are copied.
func (p *plan) row(out, in []float32, c int) {
	// Locals, so the loop keeps the plan in registers instead of reloading it
	// after every store.
	m0, m1, m2, m3, m4, m5, m6, m7, m8 := p.m[0], p.m[1], p.m[2], p.m[3], p.m[4], p.m[5], p.m[6], p.m[7], p.m[8]
	matrix, tone, color := p.matrix, p.tone, p.color
	sat, vib := p.sat, p.vib
	lut := p.lut[:]
	copyAlpha := c > 3 && &out[0] != &in[0]
	for i := 0; i+2 < len(in); i += c {
		px := in[i : i+3 : i+3]
		r, g, b := px[0], px[1], px[2]
		if matrix {
			r, g, b = imaging.NonNeg(m0*r+m1*g+m2*b), imaging.NonNeg(m3*r+m4*g+m5*b), imaging.NonNeg(m6*r+m7*g+m8*b)
		}
		if tone {
			n := 0.5*imaging.Max3(r, g, b) + 0.5*(lumR*r+lumG*g+lumB*b)
			// Table lookup with linear interpolation (see lutInput).
			u := n + lutOffset
			if !(u < lutTop) { // also NaN
				u = lutTop
			}
			if !(u >= lutOffset) {
				u = lutOffset
			}
			bits := math.Float32bits(u)
			j := int(bits>>lutFracBits) - lutBase
			t := lut[j : j+2 : j+2]
			k := t[0] + (t[1]-t[0])*(float32(bits&lutFracMask)*lutFracUnit)
			r = (r+lutOffset)*k - lutOffset
			g = (g+lutOffset)*k - lutOffset
			b = (b+lutOffset)*k - lutOffset
		}
		if color {
			y := lumR*r + lumG*g + lumB*b
			f := sat
			if vib != 0 {
				f *= 1 + vib*vibranceWeight(r, g, b, vib > 0)
			}
			r = y + (r-y)*f
			g = y + (g-y)*f
			b = y + (b-y)*f
		}
		o := out[i : i+3 : i+3]
		o[0], o[1], o[2] = imaging.Clamp01(r), imaging.Clamp01(g), imaging.Clamp01(b)
		if copyAlpha {
			copy(out[i+3:i+c], in[i+3:i+c])
		}
	}
}

// vibranceWeight is how much of the vibrance slider reaches a pixel. A boost reaches
// muted colours most and saturated ones not at all: the weight is min/max of the
// channels, close to (1 - saturation)² as the eye judges it, less for skin-like
// hues. A cut takes vibranceCutAt100 of the chroma of saturated colours and half of
// that of muted ones.
func vibranceWeight(r, g, b float32, boost bool) float32 {
	mx, mn := imaging.Max3(r, g, b), imaging.Min3(r, g, b)
	if !(mx > 0) {
		return 0
	}
	q := imaging.NonNeg(mn) / mx
	if !boost {
		return vibranceCutAt100 * (1 - 0.5*q)
	}
	if r > g && g > b {
		// Orange: maybe skin. Its place between red and yellow, h = (g-b)/(r-b),
		// sits around 0.15-0.45 for every skin tone, at moderate saturation; the
		// hue test runs on the differences first, so other oranges skip a division.
		d := r - b
		a := imaging.Abs32((g - b) - 0.3*d)
		if a < 0.25*d {
			return q * (1 - vibranceSkinGuard*skinLikelihood(1-4*a/d, q))
		}
	}
	return q
}

// skinLikelihood is 1 for the orange hues and moderate saturations of skin, falling
// to 0 away from them: ht is 1 at the middle of skin's hue range and 0 at its ends,
// q = min/max of the linear channels, about 0.04-0.7 for skin.
func skinLikelihood(ht, q float32) float32 {
	return ht * (1 - imaging.Smoothstep32(0.64, 0.81, q)) * imaging.Smoothstep32(0.01, 0.0625, q)
}
