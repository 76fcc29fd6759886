package imaging

import (
	"context"
	"runtime"
	"sync"
)

// Workers is the number of row bands work is split into.
func Workers() int { return runtime.GOMAXPROCS(0) }

// Bands splits rows [0, h) into contiguous bands, one per worker, and runs fn on each
// concurrently with the worker index (so callers can keep per-worker scratch) and the
// band's row range. It returns when every band is done. A panic in a band is
// re-raised in the caller's goroutine once all bands have stopped, so the caller's
// recover (a pipeline step's) can catch it instead of the process dying.
func Bands(h int, fn func(worker, y0, y1 int)) {
	n := bandCount(h)
	if n <= 1 {
		if h > 0 {
			fn(0, 0, h)
		}
		return
	}
	var wg sync.WaitGroup
	var once sync.Once
	var panicked any
	wg.Add(n)
	for i := 0; i < n; i++ {
		y0, y1 := bandStart(h, i, n), bandStart(h, i+1, n)
		go func(i, y0, y1 int) {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { panicked = r })
				}
			}()
			fn(i, y0, y1)
		}(i, y0, y1)
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

func bandCount(h int) int { return max(0, min(Workers(), h)) }

func bandStart(h, i, n int) int { return h * i / n }

// BandStarts returns the first row of every band but the first that Bands(h, …)
// would run now: where a band's neighbour begins, for work that must treat the
// rows near those seams specially.
func BandStarts(h int) []int {
	n := bandCount(h)
	var out []int
	for i := 1; i < n; i++ {
		out = append(out, bandStart(h, i, n))
	}
	return out
}

// Canceled reports, without blocking, whether ctx is done. Once ctx.Done has been
// called it takes no lock and allocates nothing, so long loops can ask it every row
// or so; a context that can never be cancelled answers at once.
func Canceled(ctx context.Context) bool {
	done := ctx.Done()
	if done == nil {
		return false
	}
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// ChunkRows is how many rows BandsCtx hands fn at a time: a cancel is noticed after
// at most this many rows of each band.
const ChunkRows = 32

// BandsCtx is Bands for work that a cancel must stop within a fraction of a second.
// It runs the same bands as Bands, each on its own worker index, but calls fn on each
// band's rows in consecutive pieces of at most ChunkRows rows, in order, and stops
// starting pieces once ctx is done. fn must give the same result for a row whatever
// piece it comes in (no state kept from the start of a call) and should not allocate
// per call. BandsCtx returns ctx.Err() when ctx was done by the time the bands ended,
// so a caller can stop with it; a band that was cut short has left its later rows
// undone.
func BandsCtx(ctx context.Context, h int, fn func(worker, y0, y1 int)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	Bands(h, func(worker, y0, y1 int) {
		for y := y0; y < y1; y += ChunkRows {
			if Canceled(ctx) {
				return
			}
			fn(worker, y, min(y+ChunkRows, y1))
		}
	})
	return ctx.Err()
}
