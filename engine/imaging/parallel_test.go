package imaging

import (
	"context"
	"errors"
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

func TestBandsCtxCoversEveryRowOnce(t *testing.T) {
	for _, h := range []int{0, 1, 3, 17, 1000} {
		seen := make([]int32, h)
		if err := BandsCtx(context.Background(), h, func(_, y0, y1 int) {
			if y1-y0 > ChunkRows {
				t.Errorf("piece of %d rows", y1-y0)
			}
			for y := y0; y < y1; y++ {
				atomic.AddInt32(&seen[y], 1)
			}
		}); err != nil {
			t.Fatal(err)
		}
		for y, n := range seen {
			if n != 1 {
				t.Fatalf("h=%d: row %d visited %d times", h, y, n)
			}
		}
	}
}

// A cancel stops the bands at the next piece and comes back as the context's error.
func TestBandsCtxStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var rows atomic.Int32
	err := BandsCtx(ctx, 100*ChunkRows, func(_, y0, y1 int) {
		rows.Add(int32(y1 - y0))
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := rows.Load(); n > int32(Workers()*ChunkRows) {
		t.Fatalf("%d rows ran after the cancel", n)
	}
	if !Canceled(ctx) || Canceled(context.Background()) {
		t.Fatal("Canceled disagrees with the contexts")
	}
	if err := BandsCtx(ctx, 10, func(_, _, _ int) { t.Error("ran on a cancelled context") }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v on a cancelled context", err)
	}
}
