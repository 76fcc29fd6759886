package adjust

import (
	"context"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/imagingtest"
)

// benchSettings moves every slider.
var benchSettings = Settings{Exposure: 0.35, Temperature: 18, Tint: -6, Contrast: 22, Highlights: -55,
	Shadows: 45, Whites: 12, Blacks: -9, Vibrance: 30, Saturation: 8}

// BenchmarkPreview2048 renders every slider over the office set's 2048 px base to
// 8-bit sRGB, as the window does on each slider move (target: well under 60 ms).
func BenchmarkPreview2048(b *testing.B) {
	base := loadPhoto(b, PreviewEdge, office...)
	pv, err := NewPreview(base)
	if err != nil {
		b.Fatal(err)
	}
	s := benchSettings
	if _, err := pv.Render(s); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu, n := startCPU(), 0
	for i := 0; b.Loop(); i++ {
		s.Exposure = 0.35 + float64(i%8)*0.01 // a slider on the move: a new plan each time
		if _, err := pv.Render(s); err != nil {
			b.Fatal(err)
		}
		n++
	}
	cpu.report(b, n)
	b.ReportMetric(float64(base.W()*base.H())/1e6, "MP")
}

// BenchmarkApply21MP renders every slider over a full 21 MP frame (5616x3744) into a
// second image, as a delivery does over the working image.
func BenchmarkApply21MP(b *testing.B) {
	src := loadPhoto(b, 0, office...)
	dst := src.Clone()
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(int64(len(src.Pix) * 4))
	cpu, n := startCPU(), 0
	for b.Loop() {
		if err := ApplyTo(ctx, dst, src, benchSettings); err != nil {
			b.Fatal(err)
		}
		n++
	}
	cpu.report(b, n)
}

// BenchmarkPreviewBase21MP reduces a 21 MP frame to the 2048 px preview base.
func BenchmarkPreviewBase21MP(b *testing.B) {
	src := loadPhoto(b, 0, office...)
	ctx := context.Background()
	b.ReportAllocs()
	cpu, n := startCPU(), 0
	for b.Loop() {
		if _, err := PreviewBase(ctx, src, PreviewEdge); err != nil {
			b.Fatal(err)
		}
		n++
	}
	cpu.report(b, n)
}

// cpuTimer reports the process CPU time per operation beside the wall time: on a
// shared machine it says more about the code than the wall clock does (on two idle
// cores the wall time is about half of it).
type cpuTimer struct{ start time.Duration }

func startCPU() cpuTimer { return cpuTimer{imagingtest.ProcessCPU()} }

func (c cpuTimer) report(b *testing.B, n int) {
	b.ReportMetric(float64(imagingtest.ProcessCPU()-c.start)/float64(n)/1e6, "cpu-ms/op")
}
