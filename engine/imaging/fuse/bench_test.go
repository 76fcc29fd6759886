package fuse_test

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// officeMiddle loads the three middle brackets of the 21 MP office scene.
func officeMiddle(b *testing.B) []*imaging.Image {
	dir := filepath.Join(testphotos.Dir(b), "brackets", "office_fisheye_5dmk2")
	imgs := make([]*imaging.Image, 3)
	for i, n := range []string{"IMG_6961.JPG", "IMG_6963.JPG", "IMG_6965.JPG"} {
		imgs[i] = imagingtest.LoadFile(b, filepath.Join(dir, n))
	}
	return imgs
}

func BenchmarkFuseOffice3x21MP(b *testing.B) {
	benchFuse(b, officeMiddle(b))
}

// BenchmarkFuseOffice3x21MPNarrow fuses the same brackets held as 8-bit sRGB codes,
// as the develop recipe holds decoded JPEG brackets.
func BenchmarkFuseOffice3x21MPNarrow(b *testing.B) {
	imgs := officeMiddle(b)
	for i, m := range imgs {
		imgs[i] = m.Narrow()
	}
	benchFuse(b, imgs)
}

func benchFuse(b *testing.B, imgs []*imaging.Image) {
	b.ReportAllocs()
	b.ResetTimer()
	c0 := cpuSeconds()
	for b.Loop() {
		if _, err := fuse.Fuse(context.Background(), imgs, fuse.DefaultOptions()); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time tells the cost apart from other load on a shared machine.
	b.ReportMetric((cpuSeconds()-c0)/float64(b.N), "cpu-s/op")
}

// cpuSeconds is the user+system CPU time of this process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
