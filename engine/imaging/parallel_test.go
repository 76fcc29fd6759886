package imaging

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestBandsCoverEveryRowOnce(t *testing.T) {
	for _, h := range []int{0, 1, 3, 17, 1000} {
		seen := make([]int32, h)
		Bands(h, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				atomic.AddInt32(&seen[y], 1)
			}
		})
		for y, n := range seen {
			if n != 1 {
				t.Fatalf("h=%d: row %d visited %d times", h, y, n)
			}
		}
	}
}

func TestBandsPanicReachesCaller(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
		defer runtime.GOMAXPROCS(1)
	}
	var got any
	func() {
		defer func() { got = recover() }()
		Bands(100, func(_, y0, _ int) {
			if y0 > 0 {
				panic("band failed")
			}
		})
	}()
	if got != "band failed" {
		t.Fatalf("recovered %v, want the band's panic", got)
	}
}
