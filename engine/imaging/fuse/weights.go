package fuse

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// mertensWeights computes the per-pixel weight of one bracket from its encoded
// reduced image: contrast (|Laplacian| of luma), saturation (deviation of the channels
// from their mean) and well-exposedness (a Gaussian around mid-grey per channel), each
// raised to its exponent, as in Mertens, Kautz and Van Reeth (2007). A clipping
// factor then drives the weight of blown-out samples towards zero, so windows take
// their detail from the darker brackets even where a blown bracket shows some
// contrast along its clipping boundary.
func mertensWeights(im rgb, opt *Options) *plane {
	w, h := im[0].w, im[0].h
	gray := newPlane(w, h)
	for i := range gray.pix {
		gray.pix[i] = 0.299*im[0].pix[i] + 0.587*im[1].pix[i] + 0.114*im[2].pix[i]
	}
	out := newPlane(w, h)
	wc, ws, we := float32(opt.Contrast), float32(opt.Saturation), float32(opt.Exposure)
	inv2s2 := float32(1 / (2 * opt.ExposureWidth * opt.ExposureWidth))
	mu := float32(opt.ExposureOptimum)
	knee := float32(opt.ClipKnee)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			up, mid, dn := gray.row(reflect101(y-1, h)), gray.row(y), gray.row(reflect101(y+1, h))
			r, g, b := im[0].row(y), im[1].row(y), im[2].row(y)
			dst := out.row(y)
			for x := range dst {
				l, rt := mid[reflect101(x-1, w)], mid[reflect101(x+1, w)]
				lap := up[x] + dn[x] + l + rt - 4*mid[x]
				if lap < 0 {
					lap = -lap
				}
				m := (r[x] + g[x] + b[x]) / 3
				dr, dg, db := r[x]-m, g[x]-m, b[x]-m
				sat := float32(math.Sqrt(float64(dr*dr + dg*dg + db*db)))
				er, eg, eb := r[x]-mu, g[x]-mu, b[x]-mu
				// exp(-q)^we folded into one exponential.
				v := pow(lap, wc) * pow(sat, ws)
				if we != 0 {
					v *= float32(math.Exp(float64(-(er*er + eg*eg + eb*eb) * inv2s2 * we)))
				}
				if knee < 1 {
					top := max(r[x], g[x], b[x])
					v *= 1e-3 + (1-1e-3)*(1-smoothstep(knee, 1, top))
				}
				dst[x] = v
			}
		}
	})
	return out
}

// pow is x^e with the common exponents short-cut.
func pow(x, e float32) float32 {
	switch e {
	case 0:
		return 1
	case 1:
		return x
	case 0.5:
		return float32(math.Sqrt(float64(x)))
	}
	return float32(math.Pow(float64(x), float64(e)))
}

// smoothstep is 0 below a, 1 above b and a smooth cubic between.
func smoothstep(a, b, x float32) float32 {
	t := (x - a) / (b - a)
	if t <= 0 {
		return 0
	}
	if t >= 1 {
		return 1
	}
	return t * t * (3 - 2*t)
}

// normalize scales the weights so they sum to 1 at every pixel (equal shares where all
// are zero).
func normalize(ws []*plane) {
	w, h := ws[0].w, ws[0].h
	inv := 1 / float32(len(ws))
	imaging.Bands(h, func(_, y0, y1 int) {
		for i := y0 * w; i < y1*w; i++ {
			var s float32
			for _, p := range ws {
				s += p.pix[i]
			}
			if s > 1e-20 {
				r := 1 / s
				for _, p := range ws {
					p.pix[i] *= r
				}
			} else {
				for _, p := range ws {
					p.pix[i] = inv
				}
			}
		}
	})
}

// lumaOf returns the encoded Rec. 601 luma of a planar image.
func lumaOf(im rgb) *plane {
	w, h := im[0].w, im[0].h
	out := newPlane(w, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for i := y0 * w; i < y1*w; i++ {
			out.pix[i] = 0.299*im[0].pix[i] + 0.587*im[1].pix[i] + 0.114*im[2].pix[i]
		}
	})
	return out
}

// maxChannel returns the largest encoded channel at every pixel.
func maxChannel(im rgb) *plane {
	w, h := im[0].w, im[0].h
	out := newPlane(w, h)
	for i := range out.pix {
		out.pix[i] = max(im[0].pix[i], im[1].pix[i], im[2].pix[i])
	}
	return out
}
