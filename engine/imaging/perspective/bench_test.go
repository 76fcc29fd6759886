package perspective

import (
	"context"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// BenchmarkEstimate9MP estimates the model of a 4032x2268 exterior.
func BenchmarkEstimate9MP(b *testing.B) {
	img := loadPhoto(b, "brackets", "building_exterior_phone", "20240401_175720.JPG")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, err := Estimate(context.Background(), img); err != nil {
			b.Fatal(err)
		}
	}
	cpu.report(b)
}

// BenchmarkCorrect9MP runs the whole correction (estimate, crop, warp) on the
// 4032x2268 library interior tilted upward.
func BenchmarkCorrect9MP(b *testing.B) {
	img := loadPhoto(b, "interiors", "cwz_library3_20240401_185503.JPG")
	b.ReportAllocs()
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		if _, res, err := Correct(context.Background(), img, 1); err != nil || !res.Applied {
			b.Fatal(err, res.Reason)
		}
	}
	cpu.report(b)
}

// BenchmarkWarp21MP warps a 21-megapixel frame (5616x3744) through a keystone
// correction of about 12 degrees into a preallocated output.
func BenchmarkWarp21MP(b *testing.B) {
	img := loadPhoto(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	h := rotationHomography(rotationBetween(unit([3]float64{-0.05, 1, -0.2}), [3]float64{0, 1, 0}, 1), 4000, float64(img.W())/2, float64(img.H())/2)
	dst := imaging.New(img.W(), img.H(), img.C)
	inv, err := h.Inverse()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(dst.Pix) * 4))
	b.ResetTimer()
	cpu := startCPU()
	for i := 0; i < b.N; i++ {
		warpInto(context.Background(), dst, img, inv)
	}
	cpu.report(b)
}
