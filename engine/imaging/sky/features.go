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
	// The same after a colour closing that erases thin dark lines (power lines,
	// twigs, antennas): seeds grow across them.
	labC []float32
	texC []float32
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
	f := &features{w: w, h: h, lab: make([]float32, w*h*3)}
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
	f.tex = texture(f.lab, w, h)
	f.labC = closeColour(f.lab, w, h, lineRadius)
	f.texC = texture(f.labC, w, h)
	return f
}

// lineRadius is the closing radius: dark lines up to 2*lineRadius+1 pixels wide at the
// working resolution vanish from the seed features.
const lineRadius = 2

// texture is the gradient magnitude of L from central differences averaged over a 5x5
// box: sky is smooth at this scale, foliage, brick and roof edges are not.
func texture(lab []float32, w, h int) []float32 {
	grad := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			ym, yp := max(y-1, 0), min(y+1, h-1)
			for x := 0; x < w; x++ {
				xm, xp := max(x-1, 0), min(x+1, w-1)
				gx := lab[(y*w+xp)*3] - lab[(y*w+xm)*3]
				gy := lab[(yp*w+x)*3] - lab[(ym*w+x)*3]
				grad[y*w+x] = 0.5 * float32(math.Sqrt(float64(gx*gx+gy*gy)))
			}
		}
	})
	boxMean(grad, grad, w, h, 2)
	return grad
}

// closeColour is a greyscale closing on L (square window of radius r) that carries each
// chosen pixel's whole Lab colour along, so the result stays a real colour.
func closeColour(lab []float32, w, h, r int) []float32 {
	a := rankPass(lab, w, h, r, true, true)
	a = rankPass(a, w, h, r, false, true)
	a = rankPass(a, w, h, r, true, false)
	return rankPass(a, w, h, r, false, false)
}

// rankPass replaces each pixel by the colour of the brightest (or darkest) pixel within
// r along one axis.
func rankPass(src []float32, w, h, r int, horizontal, brightest bool) []float32 {
	dst := make([]float32, len(src))
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				best := y*w + x
				for k := -r; k <= r; k++ {
					xx, yy := x, y
					if horizontal {
						xx += k
					} else {
						yy += k
					}
					if xx < 0 || yy < 0 || xx >= w || yy >= h {
						continue
					}
					q := yy*w + xx
					if (brightest && src[q*3] > src[best*3]) || (!brightest && src[q*3] < src[best*3]) {
						best = q
					}
				}
				copy(dst[(y*w+x)*3:(y*w+x)*3+3], src[best*3:best*3+3])
			}
		}
	})
	return dst
}

// boxMean writes the mean of src over a (2r+1)^2 window (clipped at the borders) to dst.
func boxMean(dst, src []float32, w, h, r int) {
	tmp := make([]float32, w*h)
	inv := 1 / float64(2*r+1)
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
				if lo >= 0 && hi < w {
					d[x] = float32(acc * inv) // a full window: no division
				} else {
					d[x] = float32(acc / float64(min(hi, w-1)-max(lo, 0)+1))
				}
				if hi+1 < w {
					acc += float64(s[hi+1])
				}
				if lo >= 0 {
					acc -= float64(s[lo])
				}
			}
		}
	})
	// Vertical pass with running column sums, walking rows in memory order; column
	// bands are split across workers.
	imaging.Bands(w, func(_, x0, x1 int) {
		acc := make([]float64, x1-x0)
		for y := 0; y <= min(r, h-1); y++ {
			t := tmp[y*w+x0 : y*w+x1]
			for i, v := range t {
				acc[i] += float64(v)
			}
		}
		for y := 0; y < h; y++ {
			inv := 1 / float64(min(y+r, h-1)-max(y-r, 0)+1)
			d := dst[y*w+x0 : y*w+x1]
			for i := range d {
				d[i] = float32(acc[i] * inv)
			}
			if yy := y + r + 1; yy < h {
				for i, v := range tmp[yy*w+x0 : yy*w+x1] {
					acc[i] += float64(v)
				}
			}
			if yy := y - r; yy >= 0 {
				for i, v := range tmp[yy*w+x0 : yy*w+x1] {
					acc[i] -= float64(v)
				}
			}
		}
	})
}
