package fuse_test

import (
	"context"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
)

// peakHeap samples the in-use heap until stop is closed and returns the peak.
func peakHeap(stop <-chan struct{}, wg *sync.WaitGroup, peak *uint64) {
	defer wg.Done()
	var ms runtime.MemStats
	for {
		runtime.ReadMemStats(&ms)
		*peak = max(*peak, ms.HeapInuse)
		select {
		case <-stop:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// BenchmarkAlignFuseOffice3x21MP is the develop recipe's merge on the three middle
// brackets of the 21 MP office scene: alignment, then fusion. Besides time it reports
// CPU seconds (robust to other load on a shared machine) and the peak heap in use
// beyond the decoded inputs.
func BenchmarkAlignFuseOffice3x21MP(b *testing.B) {
	benchAlignFuse(b, 100)
}

// BenchmarkAlignFuseOfficeMemory runs the same with the collector at 5% headroom, so
// that peak-extra-MB is close to the peak of live data rather than of garbage waiting
// for a lazy collection.
func BenchmarkAlignFuseOfficeMemory(b *testing.B) {
	benchAlignFuse(b, 5)
}

func benchAlignFuse(b *testing.B, gcPercent int) {
	defer debug.SetGCPercent(debug.SetGCPercent(gcPercent))
	imgs := officeMiddle(b)
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go peakHeap(stop, &wg, &peak)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuSeconds()
	for b.Loop() {
		al, _, err := align.Align(context.Background(), imgs, align.ReferenceIndex(imgs), align.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := fuse.Fuse(context.Background(), al, fuse.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
	close(stop)
	wg.Wait()
	b.ReportMetric(float64(peak-base.HeapInuse)/(1<<20), "peak-extra-MB")
}
