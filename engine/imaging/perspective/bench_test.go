package perspective

import (
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

func BenchmarkEstimate(b *testing.B) {
	img := loadPhoto(b, "brackets", "building_exterior_phone", "20240401_175720.JPG")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Estimate(img); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWarp21MP warps a 21-megapixel frame (the office bracket, 5616x3744) with
// the correction estimated on it.
func BenchmarkWarp21MP(b *testing.B) {
	img := loadPhoto(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	h := rotationHomography(rotationBetween(unit([3]float64{-0.05, 1, -0.2}), [3]float64{0, 1, 0}, 1), 4000, float64(img.W())/2, float64(img.H())/2)
	dst := imaging.New(img.W(), img.H(), img.C)
	inv, err := h.Inverse()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		warpInto(dst, img, inv)
	}
}
