package privacy

import (
	"context"
	"math"
	"sync"
	"sync/atomic"

	"github.com/porchlight/porchlight/engine/imaging"
)

// cascadeRun is one cascade to slide over the pyramid, limited to objects whose width
// (in pixels of the scanned image) lies in [minObj, maxObj]; 0 means no limit.
type cascadeRun struct {
	c              *Cascade
	minObj, maxObj float64
	gate           *skinGate // when set, windows without skin tone are skipped
}

// rawHit is one window that passed every stage, in scanned-image coordinates.
type rawHit struct{ x, y, w, h float32 }

// scaleStep is the pyramid ratio between neighbouring levels, OpenCV's usual 1.1.
const scaleStep = 1.1

// pyramid holds the scanned image and its 2x box-filtered octaves; every scan level is
// resampled bilinearly from the octave just above it, so no level is shrunk by more
// than 2x in one go (which would alias).
type pyramid struct {
	octaves []*gray
}

func newPyramid(g *gray, minW, minH int) *pyramid {
	p := &pyramid{octaves: []*gray{g}}
	for {
		top := p.octaves[len(p.octaves)-1]
		if top.w/2 < minW || top.h/2 < minH {
			return p
		}
		p.octaves = append(p.octaves, halve(top))
	}
}

// halve averages 2x2 blocks.
func halve(g *gray) *gray {
	w, h := g.w/2, g.h/2
	out := &gray{w: w, h: h, pix: make([]uint8, w*h)}
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			a, b := g.row(2*y), g.row(2*y+1)
			o := out.row(y)
			for x := range o {
				s := uint32(a[2*x]) + uint32(a[2*x+1]) + uint32(b[2*x]) + uint32(b[2*x+1])
				o[x] = uint8((s + 2) >> 2)
			}
		}
	})
	return out
}

// level writes the image scaled down by s (>= 1) into dst, reusing its buffer.
func (p *pyramid) level(s float64, dst *gray) {
	base := p.octaves[0]
	w := int(math.Round(float64(base.w) / s))
	h := int(math.Round(float64(base.h) / s))
	oct := min(int(math.Floor(math.Log2(s)+1e-9)), len(p.octaves)-1)
	src := p.octaves[oct]
	dst.w, dst.h = w, h
	if cap(dst.pix) < w*h {
		dst.pix = make([]uint8, w*h)
	}
	dst.pix = dst.pix[:w*h]
	fx := float64(src.w) / float64(w)
	fy := float64(src.h) / float64(h)
	if src.w == w && src.h == h {
		copy(dst.pix, src.pix)
		return
	}
	for y := 0; y < h; y++ {
		sy := (float64(y)+0.5)*fy - 0.5
		y0 := int(math.Floor(sy))
		wy := float32(sy - float64(y0))
		y0c, y1c := clampInt(y0, 0, src.h-1), clampInt(y0+1, 0, src.h-1)
		r0, r1 := src.row(y0c), src.row(y1c)
		out := dst.row(y)
		for x := 0; x < w; x++ {
			sx := (float64(x)+0.5)*fx - 0.5
			x0 := int(math.Floor(sx))
			wx := float32(sx - float64(x0))
			x0c, x1c := clampInt(x0, 0, src.w-1), clampInt(x0+1, 0, src.w-1)
			top := float32(r0[x0c]) + wx*(float32(r0[x1c])-float32(r0[x0c]))
			bot := float32(r1[x0c]) + wx*(float32(r1[x1c])-float32(r1[x0c]))
			out[x] = uint8(top + wy*(bot-top) + 0.5)
		}
	}
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

// scanWorker is one worker's scratch, sized by its largest level and then reused.
type scanWorker struct {
	img  gray
	it   integrals
	prep []prepared
	hits [][]rawHit // per run
}

// scan slides every run's cascade over every pyramid level of g and returns the raw
// hits per run. Levels are handed to GOMAXPROCS workers largest first; each worker keeps
// its own scratch, so the window loops allocate nothing.
func scan(ctx context.Context, g *gray, runs []cascadeRun) [][]rawHit {
	return scanPyramid(ctx, newPyramid(g, 8, 8), runs)
}

// scanPyramid is scan over a pyramid built by the caller (who also uses it for local
// verification scans). Once ctx is done the workers stop within a row; the hits are
// then incomplete and the caller must check ctx.
func scanPyramid(ctx context.Context, pyr *pyramid, runs []cascadeRun) [][]rawHit {
	g := pyr.octaves[0]
	minW, minH := math.MaxInt, math.MaxInt
	for _, r := range runs {
		minW, minH = min(minW, r.c.winW), min(minH, r.c.winH)
	}
	out := make([][]rawHit, len(runs))
	if len(runs) == 0 || g.w < minW || g.h < minH {
		return out
	}
	var scales []float64
	for s := 1.0; ; s *= scaleStep {
		if int(math.Round(float64(g.w)/s)) < minW || int(math.Round(float64(g.h)/s)) < minH {
			break
		}
		scales = append(scales, s)
	}
	workers := min(imaging.Workers(), len(scales))
	var next atomic.Int32
	var wg sync.WaitGroup
	results := make([]*scanWorker, workers)
	for wi := 0; wi < workers; wi++ {
		sw := &scanWorker{prep: make([]prepared, len(runs)), hits: make([][]rawHit, len(runs))}
		results[wi] = sw
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(scales) || imaging.Canceled(ctx) {
					return
				}
				sw.scanLevel(ctx, pyr, scales[i], runs)
			}
		}()
	}
	wg.Wait()
	for _, sw := range results {
		for r := range runs {
			out[r] = append(out[r], sw.hits[r]...)
		}
	}
	return out
}

func (sw *scanWorker) scanLevel(ctx context.Context, pyr *pyramid, s float64, runs []cascadeRun) {
	active := false
	tilted := false
	for _, r := range runs {
		if r.applies(s) {
			active = true
			tilted = tilted || r.c.hasTilted
		}
	}
	if !active {
		return
	}
	pyr.level(s, &sw.img)
	sw.it.compute(&sw.img, tilted)
	// Every second position at every level: a tenth of a 20-pixel window, the same
	// relative density at all sizes (OpenCV drops to every position from half size on,
	// which doubles the cost for little gain).
	const step = 2
	for ri, r := range runs {
		if !r.applies(s) || sw.img.w < r.c.winW || sw.img.h < r.c.winH {
			continue
		}
		p := &sw.prep[ri]
		p.bind(r.c, sw.it.stride)
		fs := float32(s)
		ww, wh := float32(r.c.winW)*fs, float32(r.c.winH)*fs
		eval := p.evalHaar
		if r.c.kind == lbpFeatures {
			eval = p.evalLBP
		}
		for y := 0; y+r.c.winH <= sw.img.h; y += step {
			if imaging.Canceled(ctx) {
				return
			}
			rowBase := int32(y * sw.it.stride)
			for x := 0; x+r.c.winW <= sw.img.w; x += step {
				if r.gate != nil && !r.gate.open(float32(x)*fs, float32(y)*fs, ww, wh) {
					continue
				}
				switch eval(&sw.it, rowBase+int32(x)) {
				case passed:
					sw.hits[ri] = append(sw.hits[ri], rawHit{x: float32(x) * fs, y: float32(y) * fs, w: ww, h: wh})
				case rejectFirst:
					x += step // OpenCV's shortcut: a stage-0 reject skips its neighbour
				}
			}
		}
	}
}

func (r cascadeRun) applies(s float64) bool {
	ow := float64(r.c.winW) * s
	return (r.minObj <= 0 || ow >= r.minObj*0.999) && (r.maxObj <= 0 || ow <= r.maxObj*1.001)
}
