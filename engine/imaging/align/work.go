package align

import (
	"github.com/porchlight/porchlight/engine/imaging"
)

// gray is a single-channel float32 image, row-major without padding.
type gray struct {
	w, h int
	pix  []float32
}

func newGray(w, h int) *gray { return &gray{w: w, h: h, pix: make([]float32, w*h)} }

func (g *gray) row(y int) []float32 { return g.pix[y*g.w : (y+1)*g.w] }

// at samples g bilinearly at (x, y), clamping to the border.
func (g *gray) at(x, y float32) float32 {
	if x < 0 {
		x = 0
	}
	if y < 0 {
		y = 0
	}
	mx, my := float32(g.w-1), float32(g.h-1)
	if x > mx {
		x = mx
	}
	if y > my {
		y = my
	}
	x0, y0 := int(x), int(y)
	x1, y1 := min(x0+1, g.w-1), min(y0+1, g.h-1)
	fx, fy := x-float32(x0), y-float32(y0)
	a := g.pix[y0*g.w+x0] + fx*(g.pix[y0*g.w+x1]-g.pix[y0*g.w+x0])
	b := g.pix[y1*g.w+x0] + fx*(g.pix[y1*g.w+x1]-g.pix[y1*g.w+x0])
	return a + fy*(b-a)
}

// work is one bracket reduced for analysis: sRGB-encoded luma, a mask of the samples
// that carry information (neither clipped nor crushed), and the same luma mapped
// through its own cumulative histogram so brackets of different exposure look alike.
type work struct {
	luma  *gray
	valid []bool
	eq    *gray
	mean  float64 // mean encoded luma
}

// Clipping limits: a block is unusable when any channel of any of its pixels is at
// the top of the range, or when it is nearly black.
const (
	clipHigh = 0.97 // linear
	clipLow  = 0.02 // encoded luma
)

// reduceWork averages m over f×f blocks (linear light) and encodes the luma. m may be
// narrow.
func reduceWork(m *imaging.Image, f int) *work {
	W, H := m.W(), m.H()
	w, h := W/f, H/f
	lu := newGray(w, h)
	valid := make([]bool, w*h)
	nc := m.C
	imaging.Bands(h, func(_, y0, y1 int) {
		acc := make([]float32, w)
		mx := make([]float32, w)
		lin := make([]float32, W*nc)
		shift := log2(f)
		for by := y0; by < y1; by++ {
			clear(acc)
			clear(mx)
			for y := by * f; y < (by+1)*f; y++ {
				if m.Pix8 != nil && nc == 3 {
					reduceRow8(m.Pix8[y*m.Stride:y*m.Stride+w*f*3], f, acc, mx)
					continue
				}
				row := m.LinearRow(y, lin)
				if nc == 1 {
					for x, v := range row[:w*f] {
						acc[x>>shift] += v
						mx[x>>shift] = max(mx[x>>shift], v)
					}
					continue
				}
				for bx := 0; bx < w; bx++ {
					p := row[bx*f*nc : (bx+1)*f*nc]
					var sum float32
					clipped := false
					for len(p) >= 3 {
						r, g, b := p[0], p[1], p[2]
						sum += 0.2126*r + 0.7152*g + 0.0722*b
						// Comparisons instead of max, which costs a NaN check per call.
						clipped = clipped || !(r < clipHigh && g < clipHigh && b < clipHigh)
						p = p[nc:]
					}
					acc[bx] += sum
					if clipped {
						mx[bx] = clipHigh
					}
				}
			}
			dst := lu.row(by)
			inv := 1 / float32(f*f)
			for bx := range dst {
				v := float32(imaging.Encode16(acc[bx]*inv)) * (1.0 / 65535)
				dst[bx] = v
				valid[by*w+bx] = mx[bx] < clipHigh && v > clipLow
			}
		}
	})
	wk := &work{luma: lu, valid: valid}
	wk.eq, wk.mean = equalize(lu)
	return wk
}

// Per-channel shares of linear luma for 8-bit sRGB codes, and the first code at or
// above clipHigh: an 8-bit bracket is reduced from its codes without a float row.
var (
	luma8R, luma8G, luma8B [256]float32
	clip8                  = func() uint8 {
		c := 255
		for c > 0 && imaging.Decode8(uint8(c-1)) >= clipHigh {
			c--
		}
		return uint8(c)
	}()
)

func init() {
	for i := range 256 {
		v := imaging.Decode8(uint8(i))
		luma8R[i], luma8G[i], luma8B[i] = 0.2126*v, 0.7152*v, 0.0722*v
	}
}

// reduceRow8 adds one row of 8-bit RGB codes to the blocks' luma sums in acc and
// marks a block that holds a clipped sample in mx, as reduceWork does for float rows.
func reduceRow8(row []uint8, f int, acc, mx []float32) {
	for bx := range acc {
		p := row[bx*f*3 : (bx+1)*f*3]
		var sum float32
		for len(p) >= 3 {
			r, g, b := p[0], p[1], p[2]
			sum += luma8R[r] + luma8G[g] + luma8B[b]
			if r >= clip8 || g >= clip8 || b >= clip8 {
				mx[bx] = clipHigh
			}
			p = p[3:]
		}
		acc[bx] += sum
	}
}

// equalize maps every sample to the fraction of samples darker than it (mid-rank
// for ties), which makes differently exposed brackets of a scene nearly equal except
// where they clip. It also returns the mean of the input.
func equalize(g *gray) (*gray, float64) {
	const bins = 4096
	var hist [bins]int
	var sum float64
	for _, v := range g.pix {
		hist[bin(v, bins)]++
		sum += float64(v)
	}
	var cdf [bins]float32
	n := float32(len(g.pix))
	var below int
	for i, c := range hist {
		cdf[i] = (float32(below) + float32(c)/2) / n
		below += c
	}
	out := newGray(g.w, g.h)
	for i, v := range g.pix {
		out.pix[i] = cdf[bin(v, bins)]
	}
	return out, sum / float64(len(g.pix))
}

func bin(v float32, bins int) int {
	i := int(v * float32(bins-1))
	return min(max(i, 0), bins-1)
}

// half box-averages g by 2 in both directions (dropping an odd last row or column).
func (g *gray) half() *gray {
	w, h := g.w/2, g.h/2
	out := newGray(w, h)
	for y := 0; y < h; y++ {
		a, b := g.row(2*y), g.row(2*y+1)
		dst := out.row(y)
		for x := range dst {
			dst[x] = (a[2*x] + a[2*x+1] + b[2*x] + b[2*x+1]) * 0.25
		}
	}
	return out
}

// halfMask keeps a reduced sample valid only when all four of its sources are.
func halfMask(m []bool, w, h int) []bool {
	ow, oh := w/2, h/2
	out := make([]bool, ow*oh)
	for y := 0; y < oh; y++ {
		for x := 0; x < ow; x++ {
			i := 2*y*w + 2*x
			out[y*ow+x] = m[i] && m[i+1] && m[i+w] && m[i+w+1]
		}
	}
	return out
}

func log2(f int) int {
	n := 0
	for f > 1 {
		f >>= 1
		n++
	}
	return n
}
