package tone

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

const (
	// sharpenAmount is how much of the high-pass detail is added back.
	sharpenAmount = 0.6
	// sharpenNoise is the detail amplitude (in square-root luminance) below which the
	// mask fades out, so flat walls do not turn grainy.
	sharpenNoise = 0.004
	// The radius scales with the long side: sharpening a 20 MP frame with a web-size
	// radius only crisps noise.
	sharpenMinSigma  = 0.6
	sharpenSigmaPerP = 1.0 / 3000
)

// sharpenSigma is the Gaussian radius of the unsharp mask for a w x h image.
func sharpenSigma(w, h int) float64 {
	return math.Max(sharpenMinSigma, float64(max(w, h))*sharpenSigmaPerP)
}

// sharpen applies a luminance unsharp mask in place and returns its sigma. The mask
// works on the square root of luminance (close to perceived lightness) and scales RGB
// by the ratio, so colors keep their hue and no colored fringes appear.
func sharpen(img *imaging.Image) float64 {
	W, H, c := img.W(), img.H(), img.C
	sigma := sharpenSigma(W, H)
	r := int(math.Ceil(3 * sigma))
	k := make([]float32, 2*r+1)
	var sum float32
	for i := -r; i <= r; i++ {
		k[i+r] = float32(math.Exp(-float64(i*i) / (2 * sigma * sigma)))
		sum += k[i+r]
	}
	for i := range k {
		k[i] /= sum
	}
	// Horizontal blur of sqrt-luminance into a plane.
	hb := make([]float32, W*H)
	imaging.Bands(H, func(_, y0, y1 int) {
		s := make([]float32, W)
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			for x := range s {
				o := x * c
				s[x] = sqrt32(lumR*row[o] + lumG*row[o+1] + lumB*row[o+2])
			}
			blurRow(s, hb[y*W:(y+1)*W], k, r)
		}
	})
	// Vertical blur row by row, then the mask.
	imaging.Bands(H, func(_, y0, y1 int) {
		vb := make([]float32, W)
		for y := y0; y < y1; y++ {
			for x := range vb {
				vb[x] = 0
			}
			for i := -r; i <= r; i++ {
				yy := min(max(y+i, 0), H-1)
				src := hb[yy*W : (yy+1)*W]
				w := k[i+r]
				for x, v := range src {
					vb[x] += w * v
				}
			}
			row := img.Row(y)
			for x := 0; x < W; x++ {
				o := x * c
				s := sqrt32(lumR*row[o] + lumG*row[o+1] + lumB*row[o+2])
				if s < 1e-4 {
					continue
				}
				d := s - vb[x]
				d *= d * d / (d*d + sharpenNoise*sharpenNoise)
				ns := s + sharpenAmount*d
				g := min(max(ns*ns/(s*s), 0.25), 4)
				row[o] = clamp01f(row[o] * g)
				row[o+1] = clamp01f(row[o+1] * g)
				row[o+2] = clamp01f(row[o+2] * g)
			}
		}
	})
	return sigma
}

// blurRow convolves src with the symmetric kernel k (radius r) into dst, repeating
// the edge samples.
func blurRow(src, dst, k []float32, r int) {
	n := len(src)
	for x := 0; x < n; x++ {
		var acc float32
		if x >= r && x+r < n {
			win := src[x-r : x+r+1]
			for i, w := range k {
				acc += w * win[i]
			}
		} else {
			for i := -r; i <= r; i++ {
				acc += k[i+r] * src[min(max(x+i, 0), n-1)]
			}
		}
		dst[x] = acc
	}
}
