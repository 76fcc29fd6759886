package inpaint

import (
	"context"
	"testing"
)

// BenchmarkErase1MP8 fills an 8% hole (two shapes) in a 1024×768 interior.
func BenchmarkErase1MP8(b *testing.B) {
	orig := loadPhoto(b, "interiors", "houses_109_bedroom.jpg")
	mask := holeShapes(orig.W(), orig.H(), 0.08, 2, 2)
	in := blank(orig, mask)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Erase(context.Background(), in, mask, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkErase12MP8 fills an 8% hole (one blob) in a 3024×4032 (12 MP) phone photo.
func BenchmarkErase12MP8(b *testing.B) {
	orig := loadPhoto(b, "brackets", "handheld_indoor_phone", "exp2.jpg")
	mask := holeShapes(orig.W(), orig.H(), 0.08, 1, 3)
	in := blank(orig, mask)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Erase(context.Background(), in, mask, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkErase12MP8Scattered spreads the 8% over three shapes, so the region worked
// on spans most of the photo.
func BenchmarkErase12MP8Scattered(b *testing.B) {
	orig := loadPhoto(b, "brackets", "handheld_indoor_phone", "exp2.jpg")
	mask := holeShapes(orig.W(), orig.H(), 0.08, 3, 4)
	in := blank(orig, mask)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Erase(context.Background(), in, mask, Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkErase12MP8NoLines is BenchmarkErase12MP8 without the straight-line step,
// to measure what the step costs.
func BenchmarkErase12MP8NoLines(b *testing.B) {
	carryLines = false
	defer func() { carryLines = true }()
	BenchmarkErase12MP8(b)
}

// BenchmarkErase1MP8NoLines is BenchmarkErase1MP8 without the straight-line step.
func BenchmarkErase1MP8NoLines(b *testing.B) {
	carryLines = false
	defer func() { carryLines = true }()
	BenchmarkErase1MP8(b)
}
