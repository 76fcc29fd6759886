package inpaint

import (
	"os"
	"strconv"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// level is one pyramid level of the region being filled. Every per-pixel slice is
// row-major over w×h; colour and features are interleaved.
type level struct {
	w, h int
	nc   int       // colour channels (the image's)
	cc   int       // colour channels used in distances: 1 for gray, else 3
	nf   int       // features per pixel: cc encoded colours + 2 texture
	lin  []float32 // linear colour, nc per pixel
	tex  []float32 // mean |∇| of encoded luma across x and y, 2 per pixel
	feat []float32 // distance features, nf per pixel
	hole []bool    // to be synthesised

	valid []bool  // a patch centred here is entirely known and inside: a source
	srcs  []int32 // the valid centres, for random picks
	// Targets are the centres of patches that overlap the hole. nnf holds each
	// target's source centre (-1 elsewhere), dist its mean squared feature distance per
	// sample and wt its vote weight. spans bounds the targets of each row.
	nnf   []int32
	dist  []float32
	wt    []float32
	spans [][2]int32 // per row: first and one past last target x (empty when equal)
	nTgt  int
	// depth is each pixel's chamfer distance to the nearest known pixel (3 per pixel
	// step, 0 when known): votes from patches nearer the known photo count for more.
	depth []int32
}

// texWeight scales the texture features against encoded colour (0..1): a flat wall
// and a brick wall of the same mean colour differ by about 0.05·texWeight.
var texWeight = float32(envF("X_TEXW", 4))

func newLevel(w, h, nc int) *level {
	cc := 3
	if nc == 1 {
		cc = 1
	}
	return &level{
		w: w, h: h, nc: nc, cc: cc, nf: cc + 2,
		lin:  make([]float32, w*h*nc),
		tex:  make([]float32, w*h*2),
		hole: make([]bool, w*h),
	}
}

// downsample halves l. A coarse pixel is known when at least half of its children
// are, and then holds the mean of its known children (linear light, so the mean is
// physically right); otherwise it is a hole. The majority rule keeps the hole's
// border where it is: if any unknown child made a hole, the hole would grow by a
// pixel of the finest level per level, and structures lying near the border (but
// not on it) would end up on it at the coarsest level and be continued into it.
func (l *level) downsample() *level {
	cw, ch := (l.w+1)/2, (l.h+1)/2
	c := newLevel(cw, ch, l.nc)
	nc := l.nc
	imaging.Bands(ch, func(_, y0, y1 int) {
		var acc [6]float32
		for y := y0; y < y1; y++ {
			for x := 0; x < cw; x++ {
				n, known := 0, 0
				acc = [6]float32{}
				for sy := 2 * y; sy < min(2*y+2, l.h); sy++ {
					for sx := 2 * x; sx < min(2*x+2, l.w); sx++ {
						n++
						i := sy*l.w + sx
						if l.hole[i] {
							continue
						}
						known++
						for k := 0; k < nc; k++ {
							acc[k] += l.lin[i*nc+k]
						}
						acc[4] += l.tex[2*i]
						acc[5] += l.tex[2*i+1]
					}
				}
				o := y*cw + x
				if 2*known < n {
					c.hole[o] = true
					continue
				}
				inv := 1 / float32(known)
				for k := 0; k < nc; k++ {
					c.lin[o*nc+k] = acc[k] * inv
				}
				c.tex[2*o] = acc[4] * inv
				c.tex[2*o+1] = acc[5] * inv
			}
		}
	})
	return c
}

// prepare finds sources and targets and computes the features of known pixels.
func (l *level) prepare() {
	w, h := l.w, l.h
	// Box count of hole pixels over each patch via a summed-area table.
	sat := make([]int32, (w+1)*(h+1))
	for y := 0; y < h; y++ {
		var run int32
		for x := 0; x < w; x++ {
			if l.hole[y*w+x] {
				run++
			}
			sat[(y+1)*(w+1)+x+1] = sat[y*(w+1)+x+1] + run
		}
	}
	count := func(x0, y0, x1, y1 int) int32 { // inclusive-exclusive box, clipped
		x0, y0 = max(x0, 0), max(y0, 0)
		x1, y1 = min(x1, w), min(y1, h)
		return sat[y1*(w+1)+x1] - sat[y0*(w+1)+x1] - sat[y1*(w+1)+x0] + sat[y0*(w+1)+x0]
	}
	l.valid = make([]bool, w*h)
	l.nnf = make([]int32, w*h)
	l.dist = make([]float32, w*h)
	l.wt = make([]float32, w*h)
	l.spans = make([][2]int32, h)
	l.srcs = l.srcs[:0]
	l.nTgt = 0
	for y := 0; y < h; y++ {
		first, last := -1, -1
		for x := 0; x < w; x++ {
			i := y*w + x
			n := count(x-patchR, y-patchR, x+patchR+1, y+patchR+1)
			l.nnf[i] = -1
			if n > 0 {
				l.nnf[i] = 0 // marked as target; set properly by the caller
				l.nTgt++
				if first < 0 {
					first = x
				}
				last = x
			} else if x >= patchR && y >= patchR && x < w-patchR && y < h-patchR {
				l.valid[i] = true
				l.srcs = append(l.srcs, int32(i))
			}
		}
		if first >= 0 {
			l.spans[y] = [2]int32{int32(first), int32(last + 1)}
		}
	}
	l.depth = chamfer(l.hole, w, h, true)
	l.feat = make([]float32, w*h*l.nf)
	l.features(false)
}

// features recomputes the distance features, of hole pixels only or of all pixels.
func (l *level) features(holeOnly bool) {
	w, nc, cc, nf := l.w, l.nc, l.cc, l.nf
	imaging.Bands(l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				i := y*w + x
				if holeOnly && !l.hole[i] {
					continue
				}
				f := l.feat[i*nf : i*nf+nf]
				px := l.lin[i*nc : i*nc+nc]
				for k := 0; k < cc; k++ {
					f[k] = encode(px[k])
				}
				f[cc] = texWeight * l.tex[2*i]
				f[cc+1] = texWeight * l.tex[2*i+1]
			}
		}
	})
}

// encode maps linear light to sRGB-encoded 0..1 through the package's table.
func encode(v float32) float32 { return float32(imaging.Encode16(v)) * (1.0 / 65535) }

// luma601 is the encoded luma of pixel i of lin with nc channels.
func luma601(lin []float32, i, nc int) float32 {
	if nc == 1 {
		return encode(lin[i])
	}
	o := i * nc
	return 0.299*encode(lin[o]) + 0.587*encode(lin[o+1]) + 0.114*encode(lin[o+2])
}

// computeTexture sets tex for the known pixels of a full-resolution level: the mean,
// over a (2ρ+1)² window, of |∂Y/∂x| and |∂Y/∂y| of encoded luma, counting only
// differences between two known pixels so the hole never leaks in.
func (l *level) computeTexture(rho int) {
	w, h := l.w, l.h
	y := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for r := y0; r < y1; r++ {
			for x := 0; x < w; x++ {
				y[r*w+x] = luma601(l.lin, r*w+x, l.nc)
			}
		}
	})
	// Per-pixel gradients with a validity count; 3 values per pixel: gx, gy, n.
	g := make([]float32, w*h*4)
	imaging.Bands(h, func(_, y0, y1 int) {
		for r := y0; r < y1; r++ {
			for x := 0; x < w; x++ {
				i := r*w + x
				o := 4 * i
				if x > 0 && x < w-1 && !l.hole[i-1] && !l.hole[i+1] {
					g[o] = 0.5 * abs32(y[i+1]-y[i-1])
					g[o+1] = 1
				}
				if r > 0 && r < h-1 && !l.hole[i-w] && !l.hole[i+w] {
					g[o+2] = 0.5 * abs32(y[i+w]-y[i-w])
					g[o+3] = 1
				}
			}
		}
	})
	// Separable box sums of (value, count) pairs: rows into tmp, then columns.
	tmp := make([]float32, w*h*4)
	imaging.Bands(h, func(_, y0, y1 int) {
		for r := y0; r < y1; r++ {
			row := g[r*w*4 : (r+1)*w*4]
			out := tmp[r*w*4 : (r+1)*w*4]
			var s [4]float32
			for x := -rho; x < w; x++ {
				if a := x + rho; a < w {
					for k := 0; k < 4; k++ {
						s[k] += row[4*a+k]
					}
				}
				if b := x - rho - 1; b >= 0 {
					for k := 0; k < 4; k++ {
						s[k] -= row[4*b+k]
					}
				}
				if x >= 0 {
					copy(out[4*x:4*x+4], s[:])
				}
			}
		}
	})
	imaging.Bands(w, func(_, x0, x1 int) {
		for x := x0; x < x1; x++ {
			var s [4]float32
			for r := -rho; r < h; r++ {
				if a := r + rho; a < h {
					for k := 0; k < 4; k++ {
						s[k] += tmp[4*(a*w+x)+k]
					}
				}
				if b := r - rho - 1; b >= 0 {
					for k := 0; k < 4; k++ {
						s[k] -= tmp[4*(b*w+x)+k]
					}
				}
				if r >= 0 {
					i := r*w + x
					if l.hole[i] {
						continue
					}
					l.tex[2*i] = s[0] / max(s[1], 1)
					l.tex[2*i+1] = s[2] / max(s[3], 1)
				}
			}
		}
	})
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }

func envF(k string, d float64) float64 {
	if v := os.Getenv(k); v != "" {
		f, _ := strconv.ParseFloat(v, 64)
		return f
	}
	return d
}
