package inpaint

import (
	"context"
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// level is one pyramid level of the region being filled. Every per-pixel slice is
// row-major over w×h; colour and features are interleaved.
type level struct {
	w, h int
	pr   int       // patch radius
	nc   int       // colour channels (the image's)
	cc   int       // colour channels used in distances: 1 for gray, else 3
	nf   int       // features per pixel: cc encoded colours, plus 2 texture if hasTex
	lin  []float32 // linear colour, nc per pixel
	feat []float32 // distance features, nf per pixel
	hole []bool    // to be synthesised

	// Texture: the local mean |∂Y/∂x| and |∂Y/∂y| of encoded luma measured at full
	// resolution, 2 per pixel. Coarse levels need it (their pixels no longer show
	// whether the photo there was flat or busy); the full-resolution level compares
	// the texture itself and goes without.
	hasTex bool
	tex    []float32

	// depth is each pixel's chamfer distance to the nearest known pixel (3 per pixel
	// step, 0 when known).
	depth []int32

	valid []bool  // a patch centred here is entirely known and inside: a source
	mixed []bool  // the target patch centred here has known pixels as well as hole
	srcs  []int32 // the valid centres, for random picks
	// Targets are the centres of patches that overlap the hole. nnf holds each
	// target's source centre (-1 elsewhere), dist its mean squared feature distance per
	// sample and wt its vote weight. spans bounds the targets of each row, holeSpans
	// its hole pixels (empty when both ends are equal).
	nnf       []int32
	dist      []float32
	wt        []float32
	spans     [][2]int32
	holeSpans [][2]int32
	nTgt      int

	// refine limits the search, and the distances and weights it needs, to the targets
	// no deeper than this (chamfer units); deeper ones keep the field they were given.
	refine int32

	sigma2         float32 // 75th percentile of the target distances, last measured
	locW, locR2inv float32 // locality penalty, see penalty
	cohW           float32 // coherence bonus, see coherence
}

// dropSearch lets go of what only the search needs (features, distances, the
// sources and their marks), once the field is final.
func (l *level) dropSearch() {
	l.feat, l.tex, l.dist, l.valid, l.mixed, l.srcs = nil, nil, nil, nil, nil, nil
}

// texWeight scales the texture features against encoded colour (0..1): a flat wall
// and a brick wall of the same mean colour differ by about 0.05·texWeight.
const texWeight = 12

func newLevel(w, h, nc, pr int, hasTex bool) *level {
	cc := 3
	if nc == 1 {
		cc = 1
	}
	l := &level{
		w: w, h: h, pr: pr, nc: nc, cc: cc, nf: cc, hasTex: hasTex,
		lin:  make([]float32, w*h*nc),
		hole: make([]bool, w*h),
	}
	if hasTex {
		l.nf += 2
		l.tex = make([]float32, w*h*2)
	}
	return l
}

// downsample halves l. A coarse pixel is known when at least half of its children
// are, and then holds the mean of its known children (linear light, so the mean is
// physically right); otherwise it is a hole. The majority rule keeps the hole's
// border where it is: if any unknown child made a hole, the hole would grow by a
// pixel of the finest level per level, and structures lying near the border (but
// not on it) would end up on it at the coarsest level and be continued into it.
// Texture is averaged alike when both levels have it; the first coarse level gets
// its own from textureFrom.
func (l *level) downsample() *level {
	cw, ch := (l.w+1)/2, (l.h+1)/2
	c := newLevel(cw, ch, l.nc, l.pr, true)
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
						if l.hasTex {
							acc[4] += l.tex[2*i]
							acc[5] += l.tex[2*i+1]
						}
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
	if !l.hasTex {
		c.textureFrom(l)
	}
	return c
}

// textureFrom sets the texture of c's known pixels from its finer level f (which has
// twice its resolution, and its features computed): the mean over a 6×6 window of f of |∂Y/∂x| and |∂Y/∂y|,
// counting only differences between two known pixels so the hole never leaks in.
func (c *level) textureFrom(f *level) {
	fw, fh := f.w, f.h
	luma := make([]float32, fw*fh)
	imaging.Bands(fh, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < fw; x++ {
				luma[y*fw+x] = lumaOf(f.feat, y*fw+x, f.nf, f.cc)
			}
		}
	})
	// Per coarse pixel: sums and counts of the valid differences of its children.
	cw, ch := c.w, c.h
	cell := make([]float32, cw*ch*4)
	imaging.Bands(ch, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < cw; x++ {
				var s [4]float32
				for sy := 2 * y; sy < min(2*y+2, fh); sy++ {
					for sx := 2 * x; sx < min(2*x+2, fw); sx++ {
						i := sy*fw + sx
						if sx > 0 && sx < fw-1 && !f.hole[i-1] && !f.hole[i+1] {
							s[0] += 0.5 * abs32(luma[i+1]-luma[i-1])
							s[1]++
						}
						if sy > 0 && sy < fh-1 && !f.hole[i-fw] && !f.hole[i+fw] {
							s[2] += 0.5 * abs32(luma[i+fw]-luma[i-fw])
							s[3]++
						}
					}
				}
				copy(cell[4*(y*cw+x):], s[:])
			}
		}
	})
	// 3×3 box over the cells.
	imaging.Bands(ch, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < cw; x++ {
				o := y*cw + x
				if c.hole[o] {
					continue
				}
				var s [4]float32
				for yy := max(0, y-1); yy <= min(ch-1, y+1); yy++ {
					for xx := max(0, x-1); xx <= min(cw-1, x+1); xx++ {
						j := 4 * (yy*cw + xx)
						s[0] += cell[j]
						s[1] += cell[j+1]
						s[2] += cell[j+2]
						s[3] += cell[j+3]
					}
				}
				c.tex[2*o] = s[0] / max(s[1], 1)
				c.tex[2*o+1] = s[2] / max(s[3], 1)
			}
		}
	})
}

// prepare finds sources and targets and computes the features of known pixels.
// depth may be passed in when the caller already has it. Once ctx is done it stops
// between its passes and returns ctx.Err(), leaving the level unusable.
func (l *level) prepare(ctx context.Context, depth []int32) error {
	w, h := l.w, l.h
	if depth == nil {
		// Within the hole's box and the ring of known pixels around it: every path to
		// the photo crosses that ring, so no distance changes.
		_, bb := maskBounds(l.hole, w, h)
		depth = chamferIn(l.hole, w, h, bb.Inset(-1).Intersect(image.Rect(0, 0, w, h)), true)
	}
	l.depth = depth
	l.refine = farDist
	if err := ctx.Err(); err != nil {
		return err
	}
	// Box count of hole pixels over each patch via a summed-area table.
	// Row prefix sums in parallel, then the columns accumulated in parallel (integer
	// sums: the same table whatever the split).
	sat := make([]int32, (w+1)*(h+1))
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			var run int32
			row := sat[(y+1)*(w+1)+1 : (y+2)*(w+1)]
			for x, v := range l.hole[y*w : (y+1)*w] {
				if v {
					run++
				}
				row[x] = run
			}
		}
	})
	imaging.Bands(w, func(_, x0, x1 int) {
		for y := 1; y < h; y++ {
			prev := sat[y*(w+1)+1+x0 : y*(w+1)+1+x1]
			cur := sat[(y+1)*(w+1)+1+x0 : (y+1)*(w+1)+1+x1]
			for i := range cur {
				cur[i] += prev[i]
			}
		}
	})
	l.valid = make([]bool, w*h)
	l.mixed = make([]bool, w*h)
	l.nnf = make([]int32, w*h)
	l.dist = make([]float32, w*h)
	l.wt = make([]float32, w*h)
	l.spans = make([][2]int32, h)
	l.holeSpans = make([][2]int32, h)
	nTgt, nSrc := make([]int, h), make([]int, h)
	if err := ctx.Err(); err != nil {
		return err
	}
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			first, last := -1, -1
			hf, hl := -1, -1
			ya, yb := max(y-l.pr, 0), min(y+l.pr+1, h)
			for x := 0; x < w; x++ {
				i := y*w + x
				if l.hole[i] {
					if hf < 0 {
						hf = x
					}
					hl = x
				}
				xa, xb := max(x-l.pr, 0), min(x+l.pr+1, w)
				n := sat[yb*(w+1)+xb] - sat[ya*(w+1)+xb] - sat[yb*(w+1)+xa] + sat[ya*(w+1)+xa]
				l.nnf[i] = -1
				switch {
				case n > 0:
					l.nnf[i] = 0 // a target; its source is set by the caller
					l.mixed[i] = int(n) < (xb-xa)*(yb-ya)
					nTgt[y]++
					if first < 0 {
						first = x
					}
					last = x
				case x >= l.pr && y >= l.pr && x < w-l.pr && y < h-l.pr:
					l.valid[i] = true
					nSrc[y]++
				}
			}
			if first >= 0 {
				l.spans[y] = [2]int32{int32(first), int32(last + 1)}
			}
			if hf >= 0 {
				l.holeSpans[y] = [2]int32{int32(hf), int32(hl + 1)}
			}
		}
	})
	l.nTgt = 0
	for _, n := range nTgt {
		l.nTgt += n
	}
	// The sources in index order: each row's go after the rows above it.
	start := make([]int, h+1)
	for y, n := range nSrc {
		start[y+1] = start[y] + n
	}
	l.srcs = make([]int32, start[h])
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			k := start[y]
			for x, v := range l.valid[y*w : (y+1)*w] {
				if v {
					l.srcs[k] = int32(y*w + x)
					k++
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	l.feat = make([]float32, w*h*l.nf)
	return l.features(ctx, false)
}

// features recomputes the distance features, of hole pixels only (those within
// l.reach) or of all pixels, stopping within a few rows once ctx is done.
func (l *level) features(ctx context.Context, holeOnly bool) error {
	w, nc, cc, nf := l.w, l.nc, l.cc, l.nf
	reach := l.reach()
	return imaging.BandsCtx(ctx, l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			x0, x1 := 0, w
			if holeOnly {
				x0, x1 = int(l.holeSpans[y][0]), int(l.holeSpans[y][1])
			}
			for x := x0; x < x1; x++ {
				i := y*w + x
				if holeOnly && (!l.hole[i] || l.depth[i] > reach) {
					continue
				}
				f := l.feat[i*nf : i*nf+nf]
				px := l.lin[i*nc : i*nc+nc]
				for k := 0; k < cc; k++ {
					f[k] = encode(px[k])
				}
				if l.hasTex {
					f[cc] = texWeight * l.tex[2*i]
					f[cc+1] = texWeight * l.tex[2*i+1]
				}
			}
		}
	})
}

// encode maps linear light to sRGB-encoded 0..1 through the package's table.
func encode(v float32) float32 { return float32(imaging.Encode16(v)) * (1.0 / 65535) }

// lumaOf is the encoded (Rec. 601) luma of pixel i from its distance features, which
// begin with its cc encoded colours.
func lumaOf(feat []float32, i, nf, cc int) float32 {
	o := i * nf
	if cc == 1 {
		return feat[o]
	}
	return 0.299*feat[o] + 0.587*feat[o+1] + 0.114*feat[o+2]
}

// encodedLuma is the encoded (Rec. 601) luma of a linear pixel from its first cc
// channels (1: gray, 3: RGB); a value that is not positive, NaN included, counts as
// black.
func encodedLuma(px []float32, cc int) float32 {
	coef := [3]float32{0.299, 0.587, 0.114}
	if cc == 1 {
		coef[0] = 1
	}
	var y float32
	for c := 0; c < cc; c++ {
		if v := px[c]; v > 0 {
			y += coef[c] * encode(v)
		}
	}
	return y
}

func abs32(v float32) float32 { return math.Float32frombits(math.Float32bits(v) &^ (1 << 31)) }
