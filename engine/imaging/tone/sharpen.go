package tone

import (
	"context"
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
	sharpenSigmaPerP = 1.0 / 4500
)

// sqrtLUT is the square root by table: the mask takes it twice per pixel.
var sqrtLUT = newLUT(math.Sqrt)

// sharpenSigma is the Gaussian radius of the unsharp mask for a w x h image.
func sharpenSigma(w, h int) float64 {
	return math.Max(sharpenMinSigma, float64(max(w, h))*sharpenSigmaPerP)
}

// unsharp is a luminance unsharp mask. It works on the square root of luminance
// (close to perceived lightness) and scales RGB by the ratio, so colors keep their
// hue and no colored fringes appear.
type unsharp struct {
	sigma float64
	r     int
	k     []float32
	w, h  int
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
	return u
}

// band sharpens rows [y0, y1) as they are rendered: render(y, buf) fills a row of
// RGB, target(y) says where the sharpened row goes and emit(y, row) is called once
// it is there. Rows stream through rings: a row is emitted
// once the r rows below it are rendered, so nothing of the image is held but 2r+1
// rows. The band also renders up to r rows on each side of itself (not emitted) for
// the vertical blur; that is the only work done twice. It stops within a row once ctx
// is done.
func (u *unsharp) band(ctx context.Context, y0, y1 int, render func(y int, buf []float32), target func(y int) []float32, emit func(y int, row []float32)) {
	W, H, r := u.w, u.h, u.r
	n := 2*r + 1
	rgb := make([][]float32, n) // rendered rows, by y mod n
	s := make([][]float32, n)   // their square-root luminance
	hb := make([][]float32, n)  // its horizontal blur
	for i := 0; i < n; i++ {
		rgb[i], s[i], hb[i] = make([]float32, 3*W), make([]float32, W), make([]float32, W)
	}
	vb := make([]float32, W)
	first, last := max(y0-r, 0), min(y1+r, H)-1
	for y := first; y <= last+r; y++ {
		if imaging.Canceled(ctx) {
			return
		}
		if y <= last {
			i := y % n
			render(y, rgb[i])
			row, sr := rgb[i], s[i]
			for x := range sr {
				q := row[3*x : 3*x+3 : 3*x+3]
				sr[x] = sqrtLUT.at(lumR*q[0] + lumG*q[1] + lumB*q[2])
			}
			blurRow(sr, hb[i], u.k, r)
		}
		yf := y - r // the row whose neighbourhood is now complete
		if yf < y0 || yf >= y1 {
			continue
		}
		// Vertical blur of the horizontal blurs; rows beyond the image repeat the edge.
		k := u.k
		center := hb[yf%n]
		for x, v := range center {
			vb[x] = k[r] * v
		}
		for i := 1; i <= r; i++ {
			up, dn := hb[max(yf-i, 0)%n], hb[min(yf+i, H-1)%n]
			up, dn = up[:len(vb)], dn[:len(vb)] // lets the compiler drop bounds checks
			w := k[r+i]
			for x := range vb {
				vb[x] += w * (up[x] + dn[x])
			}
		}
		out := target(yf)
		u.mask(rgb[yf%n], s[yf%n], vb, out)
		emit(yf, out)
	}
}

// mask adds the detail s - blur back to a rendered row, writing the result to out.
func (u *unsharp) mask(row, s, blur, out []float32) {
	for x, sv := range s {
		q, o := row[3*x:3*x+3:3*x+3], out[3*x:3*x+3:3*x+3]
		if sv < 1e-4 {
			o[0], o[1], o[2] = q[0], q[1], q[2]
			continue
		}
		// Detail below the noise level fades out smoothly.
		d := sv - blur[x]
		t := imaging.Abs32(d) * (1 / (2 * sharpenNoise))
		if t < 1 {
			d *= t * t * (3 - 2*t)
		}
		ratio := 1 + sharpenAmount*d/sv
		g := ratio * ratio
		if g < 0.25 {
			g = 0.25
		} else if g > 4 {
			g = 4
		}
		o[0], o[1], o[2] = imaging.Clamp01(q[0]*g), imaging.Clamp01(q[1]*g), imaging.Clamp01(q[2]*g)
	}
}

// blurRow convolves src with the symmetric kernel k (radius r) into dst, repeating
// the edge samples.
func blurRow(src, dst, k []float32, r int) {
	n := len(src)
	half := k[r:]
	for x := 0; x < n; x++ {
		var acc float32
		if x >= r && x+r < n {
			win := src[x-r : x+r+1 : x+r+1]
			acc = half[0] * win[r]
			for i := 1; i < len(half) && i <= r; i++ {
				acc += half[i] * (win[r-i] + win[r+i])
			}
		} else {
			for i := -r; i <= r; i++ {
				acc += k[i+r] * src[min(max(x+i, 0), n-1)]
			}
		}
		dst[x] = acc
	}
}
