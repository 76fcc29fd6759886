package tone

import (
	"context"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/imagingtest"
)

// benchLook exercises every operation.
var benchLook = Look{
	Temperature: 8, Tint: -3, Exposure: 0.3, Contrast: 15, Highlights: -45, Shadows: 40,
	Whites: 10, Blacks: -8, Vibrance: 20, Saturation: 5, Warmth: 10,
	Curve:      []Point{{0.25, 0.23}, {0.5, 0.53}, {0.75, 0.78}},
	AutoLevels: true, Sharpen: true,
}

// benchLookClean adds clarity and shadow cleaning, as the default look uses them.
var benchLookClean = func() Look {
	l := benchLook
	l.Clarity, l.CleanShadows = 45, 80
	return l
}()

// BenchmarkApply21MPClean runs the full look with clarity and shadow cleaning.
func BenchmarkApply21MPClean(b *testing.B) { benchApply21MP(b, benchLookClean) }

// BenchmarkApply21MP runs a full look on a 21-megapixel frame (5616x3744).
func BenchmarkApply21MP(b *testing.B) { benchApply21MP(b, benchLook) }

// benchApply21MP renders look over the office set's 21 MP middle bracket.
func benchApply21MP(b *testing.B, look Look) {
	img := loadPhoto(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	b.ReportAllocs()
	b.SetBytes(int64(len(img.Pix) * 4))
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(context.Background(), img, look); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkApplyInPlace21MP renders the same look over the frame, as the develop
// recipe does (the copy restored each time is outside the timing).
func BenchmarkApplyInPlace21MP(b *testing.B) {
	src := loadPhoto(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	img := src.Clone()
	b.ReportAllocs()
	b.SetBytes(int64(len(img.Pix) * 4))
	b.ResetTimer()
	var cpu time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		copy(img.Pix, src.Pix)
		b.StartTimer()
		c0 := imagingtest.ProcessCPU()
		if _, err := ApplyInPlace(context.Background(), img, benchLook); err != nil {
			b.Fatal(err)
		}
		cpu += imagingtest.ProcessCPU() - c0
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
}

// BenchmarkApply21MPNoSharpen is the same look without the sharpening pass.
func BenchmarkApply21MPNoSharpen(b *testing.B) {
	img := loadPhoto(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	l := benchLook
	l.Sharpen = false
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(context.Background(), img, l); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkStages times each operation alone on a 0.7 MP photo.
func BenchmarkStages(b *testing.B) {
	img := loadPhoto(b, "interiors", "houses_185_kitchen.jpg")
	for _, c := range []struct {
		name string
		l    Look
	}{
		{"identity", Look{}},
		{"exposure", Look{Exposure: 0.5}},
		{"contrast", Look{Contrast: 20}},
		{"local", Look{Shadows: 40}},
		{"clarity", Look{Clarity: 40}},
		{"clean-shadows", Look{CleanShadows: 80}},
		{"saturation", Look{Saturation: 20}},
		{"vibrance", Look{Vibrance: 20}},
		{"vibrance-neg", Look{Vibrance: -20}},
		{"warmth", Look{Warmth: 20}},
		{"levels", Look{AutoLevels: true}},
		{"sharpen", Look{Sharpen: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := startCPU()
			for i := 0; i < b.N; i++ {
				Apply(context.Background(), img, c.l)
			}
			cpu.report(b)
			b.ReportMetric(float64(imagingtest.ProcessCPU()-cpu.start)/float64(b.N)/float64(img.W()*img.H()), "cpu-ns/px")
		})
	}
}

// BenchmarkApplyKitchen runs the full look on a 0.7 MP photo (for instruction counts
// under callgrind, where 21 MP would take too long).
func BenchmarkApplyKitchen(b *testing.B) {
	img := loadPhoto(b, "interiors", "houses_185_kitchen.jpg")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Apply(context.Background(), img, benchLook); err != nil {
			b.Fatal(err)
		}
	}
}
