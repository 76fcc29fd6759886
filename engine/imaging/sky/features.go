package sky

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// features are the per-pixel cues of the working-resolution copy: CIELAB colour (the
// colour model and neighbour differences are perceptual there) and texture.
type features struct {
	w, h int
	lab  []float32 // L, a, b per pixel
	tex  []float32 // mean gradient magnitude of L over a small window
}

// labOf converts linear sRGB (D65) to CIELAB.
func labOf(r, g, b float32) (float32, float32, float32) {
	x := (0.4124564*r + 0.3575761*g + 0.1804375*b) / 0.95047
	y := 0.2126729*r + 0.7151522*g + 0.0721750*b
	z := (0.0193339*r + 0.1191920*g + 0.9503041*b) / 1.08883
	fx, fy, fz := labF(x), labF(y), labF(z)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}

func labF(t float32) float32 {
	const e = 216.0 / 24389
	if t > e {
		return float32(math.Cbrt(float64(t)))
	}
	return (24389.0/27*t + 16) / 116
}

// computeFeatures derives colour and texture from a linear RGB image.
func computeFeatures(img *imaging.Image) *features {
	w, h := img.W(), img.H()
	f := &features{w: w, h: h, lab: make([]float32, w*h*3), tex: make([]float32, w*h)}
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			for x := 0; x < w; x++ {
				i := x * img.C
				l, a, b := labOf(max(row[i], 0), max(row[i+1], 0), max(row[i+2], 0))
				o := (y*w + x) * 3
				f.lab[o], f.lab[o+1], f.lab[o+2] = l, a, b
			}
		}
	})
	// Gradient magnitude of L from central differences, then a 5x5 box mean: sky is
	// smooth at this scale, foliage, brick and roof edges are not.
	grad := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			ym, yp := max(y-1, 0), min(y+1, h-1)
			for x := 0; x < w; x++ {
				xm, xp := max(x-1, 0), min(x+1, w-1)
				gx := f.lab[(y*w+xp)*3] - f.lab[(y*w+xm)*3]
				gy := f.lab[(yp*w+x)*3] - f.lab[(ym*w+x)*3]
				grad[y*w+x] = 0.5 * float32(math.Sqrt(float64(gx*gx+gy*gy)))
			}
		}
	})
	boxMean(f.tex, grad, w, h, 2)
	return f
}

// boxMean writes the mean of src over a (2r+1)^2 window (clipped at the borders) to dst.
func boxMean(dst, src []float32, w, h, r int) {
	tmp := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			s := src[y*w : y*w+w]
			d := tmp[y*w : y*w+w]
			var acc float64 // float64 so the running sum does not drift
			for x := 0; x <= min(r, w-1); x++ {
				acc += float64(s[x])
			}
			for x := 0; x < w; x++ {
				lo, hi := x-r, x+r
				d[x] = float32(acc / float64(min(hi, w-1)-max(lo, 0)+1))
				if hi+1 < w {
					acc += float64(s[hi+1])
				}
				if lo >= 0 {
					acc -= float64(s[lo])
				}
			}
		}
	})
	imaging.Bands(w, func(_, x0, x1 int) {
		for x := x0; x < x1; x++ {
			var acc float64
			for y := 0; y <= min(r, h-1); y++ {
				acc += float64(tmp[y*w+x])
			}
			for y := 0; y < h; y++ {
				lo, hi := y-r, y+r
				dst[y*w+x] = float32(acc / float64(min(hi, h-1)-max(lo, 0)+1))
				if hi+1 < h {
					acc += float64(tmp[(hi+1)*w+x])
				}
				if lo >= 0 {
					acc -= float64(tmp[lo*w+x])
				}
			}
		}
	})
}
