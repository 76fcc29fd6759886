package imaging

import (
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
	n := Workers()
	if n > h {
		n = h
	}
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
		y0, y1 := h*i/n, h*(i+1)/n
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
