package inpaint

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/porchlight/porchlight/engine/imaging"
)

// bandRows is the height of the row bands the search runs in. It is fixed, not derived
// from the CPU count, so that results do not depend on the machine.
const bandRows = 16

// knownWeight is how much more a known pixel of a target patch counts in the distance
// than a hole pixel: the known pixels are the photo, the hole's only the current
// guess, and where the two meet the fill must line up with the photo.
const knownWeight = 8

// Locality: a source locScale hole radii from its target costs locWeight typical
// patch distances (the level's 75th percentile), growing with the square of the
// distance. What a hole hides is most like what lies right around it; without this,
// a patch from across the photo that happens to match a little better wins, and the
// fill turns into a collage.
const (
	locScale  = 1
	locWeight = 4
)

// cohWeight is the bonus, in typical patch distances (the level's 75th percentile),
// for a source that continues the field of all four of a target's neighbours, a
// quarter of it for each one. In a flat or finely textured area many sources match
// about as well; without it the search settles on whichever is a shade better for
// each target, often the same one for a run of targets (the photo just beside the
// hole, which the locality penalty favours), and once the field is upsampled the
// finer levels copy the same few rows of the photo over and over: the grout of a
// tiled wall comes back as stripes every 4 or 8 pixels. With it the field keeps runs
// of one shift, which copy the photo's texture whole (Ashikhmin's coherent
// synthesis, 2001).
const cohWeight = 1

// rng is splitmix64: tiny, fast and good enough for picking candidates.
type rng uint64

func (r *rng) next() uint64 {
	*r += 0x9e3779b97f4a7c15
	z := uint64(*r)
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n).
func (r *rng) intn(n int) int { return int((r.next() >> 33) * uint64(n) >> 31) }

// streamSeed derives an independent stream for one band of one pass.
func streamSeed(seed int64, keys ...int) rng {
	s := rng(uint64(seed) ^ 0x5851f42d4c957f2d)
	for _, k := range keys {
		s = rng(s.next() ^ uint64(k)*0x2545f4914f6cdd1d)
	}
	return s
}

// forEach runs fn(0..n-1) across the workers, handing out indices dynamically so that
// uneven bands balance. Results must not depend on which worker runs which index. A
// panic is re-raised in the caller once every worker has stopped.
func forEach(n int, fn func(i int)) {
	workers := min(imaging.Workers(), n)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var panicked any
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { panicked = r })
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// extent is a target patch clipped to the level: offsets dy0..dy1, dx0..dx1
// inclusive; n is the (weighted) number of samples it compares, mixed whether it
// holds known pixels as well as hole ones.
type extent struct {
	dx0, dx1, dy0, dy1, n int
	mixed                 bool
}

func (l *level) extentAt(x, y int) extent {
	e := extent{dx0: max(-l.pr, -x), dx1: min(l.pr, l.w-1-x), dy0: max(-l.pr, -y), dy1: min(l.pr, l.h-1-y)}
	t := y*l.w + x
	if !l.mixed[t] {
		e.n = (e.dx1 - e.dx0 + 1) * (e.dy1 - e.dy0 + 1) * l.nf
		return e
	}
	e.mixed = true
	for dy := e.dy0; dy <= e.dy1; dy++ {
		row := l.hole[t+dy*l.w+e.dx0 : t+dy*l.w+e.dx1+1]
		for _, hole := range row {
			if hole {
				e.n++
			} else {
				e.n += knownWeight
			}
		}
	}
	e.n *= l.nf
	return e
}

// ssd is the squared feature distance between the target patch at t and the source
// patch at s (pixel indices), stopping early once it reaches bound.
func (l *level) ssd(t, s int, e extent, bound float32) float32 {
	if e.mixed {
		return l.ssdMixed(t, s, e, bound)
	}
	nf, w := l.nf, l.w
	rowLen := (e.dx1 - e.dx0 + 1) * nf
	to := (t + e.dy0*w + e.dx0) * nf
	so := (s + e.dy0*w + e.dx0) * nf
	step := w * nf
	var sum float32
	for dy := e.dy0; dy <= e.dy1; dy++ {
		a := l.feat[to : to+rowLen]
		b := l.feat[so : so+rowLen]
		b = b[:len(a)]
		i := 0
		for ; i+4 <= len(a); i += 4 {
			d0 := a[i] - b[i]
			d1 := a[i+1] - b[i+1]
			d2 := a[i+2] - b[i+2]
			d3 := a[i+3] - b[i+3]
			sum += d0*d0 + d1*d1 + d2*d2 + d3*d3
		}
		for ; i < len(a); i++ {
			d := a[i] - b[i]
			sum += d * d
		}
		if sum >= bound {
			return sum
		}
		to += step
		so += step
	}
	return sum
}

// ssdMixed is ssd for a target patch with known pixels, which count knownWeight times.
func (l *level) ssdMixed(t, s int, e extent, bound float32) float32 {
	nf, w := l.nf, l.w
	var sum float32
	for dy := e.dy0; dy <= e.dy1; dy++ {
		for dx := e.dx0; dx <= e.dx1; dx++ {
			o := dy*w + dx
			a := l.feat[(t+o)*nf : (t+o)*nf+nf]
			b := l.feat[(s+o)*nf : (s+o)*nf+nf]
			b = b[:len(a)]
			var d2 float32
			for k := range a {
				d := a[k] - b[k]
				d2 += d * d
			}
			if !l.hole[t+o] {
				d2 *= knownWeight
			}
			sum += d2
		}
		if sum >= bound {
			return sum
		}
	}
	return sum
}

// penalty is the locality cost of copying the source centred at s into the target at
// (x, y), in the units of dist.
func (l *level) penalty(x, y, s int) float32 {
	dx, dy := float32(x-s%l.w), float32(y-s/l.w)
	return l.locW * (dx*dx + dy*dy) * l.locR2inv
}

// coherence is the bonus for copying the source centred at s into the target at
// (x, y): cohW for each 4-neighbour whose own source, moved by the step between the
// two, is s.
func (l *level) coherence(x, y, s int) float32 {
	w, t := l.w, y*l.w+x
	var c float32
	if x > 0 && l.nnf[t-1] >= 0 && int(l.nnf[t-1])+1 == s {
		c++
	}
	if x < w-1 && l.nnf[t+1] >= 0 && int(l.nnf[t+1])-1 == s {
		c++
	}
	if y > 0 && l.nnf[t-w] >= 0 && int(l.nnf[t-w])+w == s {
		c++
	}
	if y < l.h-1 && l.nnf[t+w] >= 0 && int(l.nnf[t+w])-w == s {
		c++
	}
	return c * l.cohW
}

// setLocality scales the locality penalty to the hole's size at this level and to a
// typical patch distance sigma2.
func (l *level) setLocality(sigma2 float32) {
	var deepest int32
	for _, d := range l.depth {
		deepest = max(deepest, d)
	}
	r := locScale * (float32(deepest)/3 + float32(l.pr))
	l.locR2inv = 1 / (r * r)
	l.locW = locWeight * sigma2
	l.cohW = cohWeight * sigma2 / 4
}

// evalAll recomputes the distance of every target within l.refine for its current
// source, stopping within a few rows once ctx is done.
func (l *level) evalAll(ctx context.Context) error {
	w := l.w
	return imaging.BandsCtx(ctx, l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			sp := l.spans[y]
			for x := int(sp[0]); x < int(sp[1]); x++ {
				t := y*w + x
				s := l.nnf[t]
				if s < 0 || l.depth[t] > l.refine {
					continue
				}
				e := l.extentAt(x, y)
				l.dist[t] = l.ssd(t, int(s), e, inf32) / float32(e.n)
			}
		}
	})
}

const inf32 = float32(3.4e38)

// randomInit points every target at a random source.
func (l *level) randomInit(seed int64, k int) {
	w := l.w
	nb := (l.h + bandRows - 1) / bandRows
	forEach(nb, func(b int) {
		r := streamSeed(seed, 1, k, b)
		for y := b * bandRows; y < min(l.h, (b+1)*bandRows); y++ {
			sp := l.spans[y]
			for x := int(sp[0]); x < int(sp[1]); x++ {
				if t := y*w + x; l.nnf[t] >= 0 {
					l.nnf[t] = l.srcs[r.intn(len(l.srcs))]
				}
			}
		}
	})
}

// search runs one PatchMatch pass over level k: propagation from the neighbours
// already visited in this pass's scan order, then random search in windows halving
// from maxR. Even bands run first, then odd ones, so no band reads rows another band
// is writing. Once ctx is done the bands not yet started are skipped and search
// returns ctx.Err().
func (l *level) search(ctx context.Context, seed int64, k, it, pass int, maxR int) error {
	reverse := pass%2 == 1
	nb := (l.h + bandRows - 1) / bandRows
	for phase := 0; phase < 2; phase++ {
		forEach((nb-phase+1)/2, func(i int) {
			if imaging.Canceled(ctx) {
				return
			}
			b := 2*i + phase
			r := streamSeed(seed, 2, k, it, pass, b)
			l.searchBand(b*bandRows, min(l.h, (b+1)*bandRows), reverse, maxR, &r)
		})
	}
	return ctx.Err()
}

func (l *level) searchBand(y0, y1 int, reverse bool, maxR int, r *rng) {
	w, h := l.w, l.h
	dir, ys, ye := 1, y0, y1
	if reverse {
		dir, ys, ye = -1, y1-1, y0-1
	}
	for y := ys; y != ye; y += dir {
		sp := l.spans[y]
		if sp[0] == sp[1] {
			continue
		}
		xs, xe := int(sp[0]), int(sp[1])
		if reverse {
			xs, xe = xe-1, xs-1
		}
		for x := xs; x != xe; x += dir {
			t := y*w + x
			best := l.nnf[t]
			if best < 0 || l.depth[t] > l.refine {
				continue
			}
			e := l.extentAt(x, y)
			n := float32(e.n)
			dist := l.dist[t]
			total := dist + l.penalty(x, y, int(best)) - l.coherence(x, y, int(best))
			try := func(s int) {
				if s < 0 || s >= len(l.valid) || !l.valid[s] || int32(s) == best {
					return
				}
				ps := l.penalty(x, y, s) - l.coherence(x, y, s)
				if ps >= total {
					return
				}
				bound := (total - ps) * n
				if d := l.ssd(t, s, e, bound); d < bound {
					best, dist, total = int32(s), d/n, d/n+ps
				}
			}
			// Propagation: the neighbour's source shifted by one pixel.
			if nx := x - dir; nx >= 0 && nx < w {
				if s := l.nnf[t-dir]; s >= 0 {
					try(int(s) + dir)
				}
			}
			if ny := y - dir; ny >= 0 && ny < h {
				if s := l.nnf[t-dir*w]; s >= 0 {
					try(int(s) + dir*w)
				}
			}
			// Random search around the best so far.
			cx, cy := int(best)%w, int(best)/w
			for rad := maxR; rad >= 1; rad /= 2 {
				sx := cx + r.intn(2*rad+1) - rad
				sy := cy + r.intn(2*rad+1) - rad
				if sx < l.pr || sy < l.pr || sx >= w-l.pr || sy >= h-l.pr {
					continue
				}
				try(sy*w + sx)
			}
			l.nnf[t] = best
			l.dist[t] = dist
		}
	}
}
