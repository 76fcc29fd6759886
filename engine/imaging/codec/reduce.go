package codec

import (
	"image"

	"github.com/porchlight/porchlight/engine/imaging"
)

// reducer box-averages a w×h image, kx×ky source pixels to one, from pixels handed
// over a row (or every step-th pixel of a row, for interlaced PNG) at a time, in any
// order. It holds only the reduced sums, so a decoder can stream a frame of any size
// through it. Samples are linear light; with alpha, colour is summed weighted by
// alpha so transparent pixels lend no colour to their neighbours.
type reducer struct {
	w, h, kx, ky int
	dw, dh       int
	c            int // 3, or 4 with alpha
	sum          []float32
	opaque       bool // every alpha added so far was 1
}

// newReducer prepares a reduction of w×h towards tw×th: by the largest whole factors
// per axis that still leave the final Lanczos resize at least a 2x reduction (as
// preShrink in assets does), so the result is at most about 4tw×4th.
func newReducer(w, h, tw, th int, alpha bool) *reducer {
	r := &reducer{w: w, h: h, kx: max(1, w/(2*max(tw, 1))), ky: max(1, h/(2*max(th, 1))), c: 3, opaque: true}
	if alpha {
		r.c = 4
	}
	r.dw, r.dh = (w+r.kx-1)/r.kx, (h+r.ky-1)/r.ky
	r.sum = imaging.MakePixels[float32](r.dw * r.dh * r.c)
	return r
}

// reducerBytes is the memory a reducer for w×h towards tw×th holds.
func reducerBytes(w, h, tw, th, c int) int64 {
	kx, ky := max(1, w/(2*max(tw, 1))), max(1, h/(2*max(th, 1)))
	return int64((w+kx-1)/kx) * int64((h+ky-1)/ky) * int64(c) * 4
}

// add accumulates the pixels of px (r.c samples each) at row y, columns x0, x0+step,
// x0+2*step and so on.
func (r *reducer) add(y, x0, step int, px []float32) {
	if y < 0 || y >= r.h || x0 < 0 {
		return
	}
	oy := y / r.ky
	acc := r.sum[oy*r.dw*r.c : (oy+1)*r.dw*r.c]
	ox := x0 / r.kx
	next := (ox + 1) * r.kx
	x := x0
	if r.c == 3 {
		for i := 0; i+2 < len(px) && x < r.w; i += 3 {
			for x >= next {
				ox++
				next += r.kx
			}
			o := acc[ox*3 : ox*3+3 : ox*3+3]
			o[0] += px[i]
			o[1] += px[i+1]
			o[2] += px[i+2]
			x += step
		}
		return
	}
	opaque := true
	for i := 0; i+3 < len(px) && x < r.w; i += 4 {
		for x >= next {
			ox++
			next += r.kx
		}
		a := px[i+3]
		opaque = opaque && a == 1
		o := acc[ox*4 : ox*4+4 : ox*4+4]
		o[0] += px[i] * a
		o[1] += px[i+1] * a
		o[2] += px[i+2] * a
		o[3] += a
		x += step
	}
	r.opaque = r.opaque && opaque
}

// image returns the averages as an image (in place of the sums, which it consumes):
// 4 channels when some pixel was not fully opaque, else 3.
func (r *reducer) image() *imaging.Image {
	c := r.c
	for oy := 0; oy < r.dh; oy++ {
		bh := float32(min(oy*r.ky+r.ky, r.h) - oy*r.ky)
		row := r.sum[oy*r.dw*c : (oy+1)*r.dw*c]
		for ox := 0; ox < r.dw; ox++ {
			n := bh * float32(min(ox*r.kx+r.kx, r.w)-ox*r.kx)
			o := row[ox*c : ox*c+c]
			if c == 3 {
				o[0], o[1], o[2] = o[0]/n, o[1]/n, o[2]/n
				continue
			}
			if a := o[3]; a > 0 {
				o[0], o[1], o[2] = o[0]/a, o[1]/a, o[2]/a
			}
			o[3] /= n
		}
	}
	img := &imaging.Image{Pix: r.sum, Stride: r.dw * c, C: c, Rect: image.Rect(0, 0, r.dw, r.dh)}
	r.sum = nil
	if c == 4 && r.opaque {
		rgb := imaging.New(r.dw, r.dh, 3)
		for i, j := 0, 0; i < len(img.Pix); i, j = i+4, j+3 {
			rgb.Pix[j], rgb.Pix[j+1], rgb.Pix[j+2] = img.Pix[i], img.Pix[i+1], img.Pix[i+2]
		}
		return rgb
	}
	return img
}

// maskWhite is the least linear value of every colour channel a visible mask pixel
// may have (about 240 in 8-bit sRGB), leaving room for anti-aliased edges.
const maskWhite = 0.87

// maskJudge decides, from every pixel of a transparent image as it streams past,
// whether it is a white-on-transparent mask: some pixel is mostly transparent and
// every visible pixel is white.
type maskJudge struct {
	transparent, coloured bool
}

// row looks at 4-channel linear pixels.
func (m *maskJudge) row(px []float32) {
	if m.coloured {
		return // a photo: decided at its first visible coloured pixel
	}
	for i := 0; i+3 < len(px); i += 4 {
		a := px[i+3]
		if a < 0.5 {
			m.transparent = true
		}
		if a > 0.02 && (px[i] < maskWhite || px[i+1] < maskWhite || px[i+2] < maskWhite) {
			m.coloured = true
			return
		}
	}
}

func (m *maskJudge) isMask() bool { return m.transparent && !m.coloured }
