package tone

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

const (
	// sharpenAmount is how much of the high-pass detail is added back.
	sharpenAmount = 0.6
	// sharpenNoise is the detail amplitude (in square-root luminance) around which
	// the mask fades in: flat walls do not turn grainy.
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

// unsharp is a luminance unsharp mask for one image. It works on the square root of
// luminance (close to perceived lightness) and scales RGB by the ratio, so colors
// keep their hue and no colored fringes appear. Its horizontal blur runs row by row
// inside the main pass (addRow), its vertical blur and the mask in finish.
type unsharp struct {
	sigma float64
	r     int
	k     []float32
	w, h  int
	hb    []float32 // horizontally blurred square-root luminance
}

func newUnsharp(w, h int) *unsharp {
	u := &unsharp{sigma: sharpenSigma(w, h), w: w, h: h}
	u.r = int(math.Ceil(3 * u.sigma))
	u.k = make([]float32, 2*u.r+1)
	var sum float32
	for i := -u.r; i <= u.r; i++ {
		u.k[i+u.r] = float32(math.Exp(-float64(i*i) / (2 * u.sigma * u.sigma)))
		sum += u.k[i+u.r]
	}
	for i := range u.k {
		u.k[i] /= sum
	}
	u.hb = make([]float32, w*h)
	return u
}

// addRow takes the square-root luminance of finished row y (scratch s, len w) and
// stores its horizontal blur.
func (u *unsharp) addRow(y int, s []float32) {
	blurRow(s, u.hb[y*u.w:(y+1)*u.w], u.k, u.r)
}

// finish blurs vertically and applies the mask to img in place.
func (u *unsharp) finish(img *imaging.Image) {
	W, H, c, r, k, hb := u.w, u.h, img.C, u.r, u.k, u.hb
	imaging.Bands(H, func(_, y0, y1 int) {
		vb := make([]float32, W)
		for y := y0; y < y1; y++ {
			// Symmetric kernel: pair the rows above and below the center.
			center, w0 := hb[y*W:(y+1)*W], k[r]
			for x, v := range center {
				vb[x] = w0 * v
			}
			for i := 1; i <= r; i++ {
				up := hb[max(y-i, 0)*W : max(y-i, 0)*W+W]
				dn := hb[min(y+i, H-1)*W : min(y+i, H-1)*W+W]
				w := k[r+i]
				for x := range vb {
					vb[x] += w * (up[x] + dn[x])
				}
			}
			row := img.Row(y)
			for x := 0; x < W; x++ {
				o := x * c
				px := row[o : o+3 : o+3]
				s := sqrt32(lumR*px[0] + lumG*px[1] + lumB*px[2])
				if s < 1e-4 {
					continue
				}
				// Detail below the noise level fades out smoothly (no division).
				d := s - vb[x]
				d *= smoothstep32(0, 2*sharpenNoise, abs32(d))
				ratio := 1 + sharpenAmount*d/s
				g := min(max(ratio*ratio, 0.25), 4)
				px[0] = clamp01f(px[0] * g)
				px[1] = clamp01f(px[1] * g)
				px[2] = clamp01f(px[2] * g)
			}
		}
	})
}

// blurRow convolves src with the symmetric kernel k (radius r) into dst, repeating
// the edge samples.
func blurRow(src, dst, k []float32, r int) {
	n := len(src)
	half := k[r:]
	for x := 0; x < n; x++ {
		var acc float32
		if x >= r && x+r < n {
			acc = half[0] * src[x]
			for i := 1; i < len(half); i++ {
				acc += half[i] * (src[x-i] + src[x+i])
			}
		} else {
			for i := -r; i <= r; i++ {
				acc += k[i+r] * src[min(max(x+i, 0), n-1)]
			}
		}
		dst[x] = acc
	}
}
