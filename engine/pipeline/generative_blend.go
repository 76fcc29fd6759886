package pipeline

import (
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Compositing of a model's answer over the photo. The answer comes back at the
// working size (at most the tier's longest edge); the erasing features keep the
// photo's own full-resolution pixels wherever the model changed nothing, so only the
// removed things are resampled.

// Thresholds of the change mask, in 8-bit sRGB codes: below lo a pixel is taken as
// unchanged (a model's round trip through its latent space moves every pixel a
// little), above hi as changed.
const (
	changeLo = 10
	changeHi = 30
)

// changeMask returns where b differs from a (same size, 3 channels) as a soft 1-channel
// mask, and the share of pixels that changed clearly.
func changeMask(a, b *imaging.Image) (*imaging.Image, float64) {
	w, h := a.W(), a.H()
	m := imaging.New(w, h, 1)
	counts := make([]int, imaging.Workers())
	imaging.Bands(h, func(worker, y0, y1 int) {
		n := 0
		for y := y0; y < y1; y++ {
			ra, rb, rm := a.Row(y), b.Row(y), m.Row(y)
			for x := 0; x < w; x++ {
				d := 0
				for c := 0; c < 3; c++ {
					v := int(imaging.Encode8(ra[3*x+c])) - int(imaging.Encode8(rb[3*x+c]))
					d = max(d, v, -v)
				}
				rm[x] = smoothstep(changeLo, changeHi, float32(d))
				if d >= changeHi {
					n++
				}
			}
		}
		counts[worker] += n
	})
	total := 0
	for _, n := range counts {
		total += n
	}
	return m, float64(total) / float64(max(w*h, 1))
}

func smoothstep(lo, hi, v float32) float32 {
	t := min(max((v-lo)/(hi-lo), 0), 1)
	return t * t * (3 - 2*t)
}

// dilate returns the r-pixel maximum of a 1-channel mask (separable: rows, then
// columns), so a removed object's soft rim is covered too.
func dilate(m *imaging.Image, r int) *imaging.Image {
	if r <= 0 {
		return m.Clone()
	}
	w, h := m.W(), m.H()
	tmp := imaging.New(w, h, 1)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := m.Row(y), tmp.Row(y)
			for x := 0; x < w; x++ {
				v := src[x]
				for k := max(x-r, 0); k <= min(x+r, w-1); k++ {
					v = max(v, src[k])
				}
				dst[x] = v
			}
		}
	})
	out := imaging.New(w, h, 1)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.Row(y)
			copy(dst, tmp.Row(y))
			for k := max(y-r, 0); k <= min(y+r, h-1); k++ {
				src := tmp.Row(k)
				for x := range dst {
					dst[x] = max(dst[x], src[x])
				}
			}
		}
	})
	return out
}

// soften box-blurs a 1-channel mask with radius r (rows with a running sum, then
// columns), edges clamped.
func soften(m *imaging.Image, r int) *imaging.Image {
	if r <= 0 {
		return m.Clone()
	}
	w, h := m.W(), m.H()
	tmp := imaging.New(w, h, 1)
	inv := 1 / float32(2*r+1)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := m.Row(y), tmp.Row(y)
			var sum float32
			for k := -r; k <= r; k++ {
				sum += src[min(max(k, 0), w-1)]
			}
			for x := 0; x < w; x++ {
				dst[x] = sum * inv
				sum += src[min(x+r+1, w-1)] - src[max(x-r, 0)]
			}
		}
	})
	out := imaging.New(w, h, 1)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.Row(y)
			for k := y - r; k <= y+r; k++ {
				src := tmp.Row(min(max(k, 0), h-1))
				for x := range dst {
					dst[x] += src[x]
				}
			}
			for x := range dst {
				dst[x] *= inv
			}
		}
	})
	return out
}

// composite returns src + m·(gen − src) per pixel: where m is 0 the result is src's
// pixel exactly. All three have src's size; m has one channel (clamped to 0..1).
func composite(src, gen, m *imaging.Image) *imaging.Image {
	w, h := src.W(), src.H()
	out := imaging.New(w, h, 3)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			rs, rg, rm, ro := src.Row(y), gen.Row(y), m.Row(y), out.Row(y)
			for x := 0; x < w; x++ {
				a := min(max(rm[x], 0), 1)
				i := 3 * x
				if a == 0 {
					ro[i], ro[i+1], ro[i+2] = rs[i], rs[i+1], rs[i+2]
					continue
				}
				ro[i] = rs[i] + a*(rg[i]-rs[i])
				ro[i+1] = rs[i+1] + a*(rg[i+1]-rs[i+1])
				ro[i+2] = rs[i+2] + a*(rg[i+2]-rs[i+2])
			}
		}
	})
	return out
}

// checkAnswer refuses what a model answered when it cannot be a result of the photo
// sent: another aspect ratio, an absurd scale, a blank frame (what safety filters
// answer), or the photo itself unchanged (where a mask is given, unchanged inside
// it).
func checkAnswer(sent, mask, got *imaging.Image) error {
	sw, sh, gw, gh := float64(sent.W()), float64(sent.H()), float64(got.W()), float64(got.H())
	if math.Abs(math.Log(gw/gh)-math.Log(sw/sh)) > 0.03 {
		return fmt.Errorf("it answered a %dx%d image for a %dx%d photo (another aspect ratio)", got.W(), got.H(), sent.W(), sent.H())
	}
	if s := gw / sw; s < 0.2 || s > 5 {
		return fmt.Errorf("it answered a %dx%d image for a %dx%d photo (an absurd size)", got.W(), got.H(), sent.W(), sent.H())
	}
	if lumaSpread(got) < 1 {
		return fmt.Errorf("it answered a blank image (a safety filter's answer, or a broken model)")
	}
	if visibleChange(sent, got, mask) {
		return nil
	}
	if mask != nil {
		return fmt.Errorf("it answered the photo unchanged inside the mask (no visible change)")
	}
	return fmt.Errorf("it answered the photo unchanged (no visible change anywhere)")
}

// visibleChange compares the photo sent and the answer at thumbnail scale, where a
// model's resampling and latent round trip vanish but a removed or added object
// does not: a thousandth of the pixels (a tenth of the mask's, with a mask) must
// differ by a clear step. Measured on the test photos, an unchanged answer that went
// through a half-size or squashed round trip differs in at most 0.06% of them.
func visibleChange(sent, got, mask *imaging.Image) bool {
	const edge, step = 128, 16
	w, h := imaging.FitWithin(sent.W(), sent.H(), edge)
	a, b := imaging.Resize(sent, w, h), imaging.Resize(got, w, h)
	var m *imaging.Image
	if mask != nil {
		m = imaging.Resize(mask, w, h)
	}
	changed, n := 0, 0
	for y := 0; y < h; y++ {
		ra, rb := a.Row(y), b.Row(y)
		for x := 0; x < w; x++ {
			if m != nil && m.At(x, y, 0) < 0.5 {
				continue
			}
			n++
			for c := 0; c < 3; c++ {
				d := int(imaging.Encode8(ra[3*x+c])) - int(imaging.Encode8(rb[3*x+c]))
				if d >= step || d <= -step {
					changed++
					break
				}
			}
		}
	}
	if m != nil {
		return n > 0 && changed*10 >= n
	}
	return changed*1000 >= n
}

// lumaSpread is the standard deviation of 8-bit sRGB luma over a sample of pixels.
func lumaSpread(m *imaging.Image) float64 {
	var s, s2 float64
	n := 0
	for y := 0; y < m.H(); y += 3 {
		row := m.Row(y)
		for x := 0; x < m.W(); x += 3 {
			l := 0.2126*float64(imaging.Encode8(row[3*x])) + 0.7152*float64(imaging.Encode8(row[3*x+1])) +
				0.0722*float64(imaging.Encode8(row[3*x+2]))
			s += l
			s2 += l * l
			n++
		}
	}
	if n == 0 {
		return 0
	}
	mean := s / float64(n)
	return math.Sqrt(max(s2/float64(n)-mean*mean, 0))
}
