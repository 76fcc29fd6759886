package lens

import (
	"context"
	"image"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// BenchmarkPrepare21MP is matching and the map's grid for a 21 MP frame.
func BenchmarkPrepare21MP(b *testing.B) {
	needDB(b)
	b.ReportAllocs()
	for range b.N {
		if _, err := Prepare(estateLenses[0].shot, 5616, 3744); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApply21MP8bit is one 21 MP bracket held as 8-bit codes, resampled.
func BenchmarkApply21MP8bit(b *testing.B) {
	needDB(b)
	w, h := 5616, 3744
	src := &imaging.Image{Pix8: imaging.MakePixels[uint8](w * h * 3), Stride: w * 3, C: 3, Rect: image.Rect(0, 0, w, h)}
	for i := range src.Pix8 {
		src.Pix8[i] = uint8(i * 7)
	}
	benchApply(b, src)
}

// BenchmarkApplyAll3x21MP8bit is three 21 MP brackets held as 8-bit codes, corrected
// in one pass.
func BenchmarkApplyAll3x21MP8bit(b *testing.B) {
	needDB(b)
	w, h := 5616, 3744
	var srcs []*imaging.Image
	for k := 0; k < 3; k++ {
		src := &imaging.Image{Pix8: imaging.MakePixels[uint8](w * h * 3), Stride: w * 3, C: 3, Rect: image.Rect(0, 0, w, h)}
		for i := range src.Pix8 {
			src.Pix8[i] = uint8(i*7 + k)
		}
		srcs = append(srcs, src)
	}
	c, err := Prepare(estateLenses[0].shot, w, h)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.ApplyAll(context.Background(), srcs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(3*w*h), "ns/px")
}

// BenchmarkApply21MPFloat is one 21 MP image in float32 linear light resampled: a
// merge of brackets shot from a tripod, corrected once.
func BenchmarkApply21MPFloat(b *testing.B) {
	needDB(b)
	w, h := 5616, 3744
	src := imaging.New(w, h, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i%251) / 251
	}
	benchApply(b, src)
}

// benchApply times the correction of src by the first real-estate lens.
func benchApply(b *testing.B, src *imaging.Image) {
	w, h := src.W(), src.H()
	c, err := Prepare(estateLenses[0].shot, w, h)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if _, err := c.Apply(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(w*h), "ns/px")
}
