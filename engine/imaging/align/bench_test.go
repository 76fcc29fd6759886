package align_test

import (
	"context"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
)

// officeMiddle loads the three middle brackets of the 21 MP office scene.
func officeMiddle(b *testing.B) []*imaging.Image {
	imgs := make([]*imaging.Image, 3)
	for i, n := range []string{"IMG_6961.JPG", "IMG_6963.JPG", "IMG_6965.JPG"} {
		imgs[i] = loadPhoto(b, "brackets", "office_fisheye_5dmk2", n)
	}
	return imgs
}

func BenchmarkAlignOffice3x21MP(b *testing.B) {
	imgs := officeMiddle(b)
	ref := align.ReferenceIndex(imgs)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := align.Align(context.Background(), imgs, ref, align.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEstimatePhone5x9MP(b *testing.B) {
	benchEstimate(b, loadScene(b, "library_phone"))
}

// benchEstimate times the registration of imgs to their reference.
func benchEstimate(b *testing.B, imgs []*imaging.Image) {
	ref := align.ReferenceIndex(imgs)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := align.Estimate(context.Background(), imgs, ref, align.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEstimateOffice3x21MPNarrow is the develop path: 8-bit brackets as decoded.
func BenchmarkEstimateOffice3x21MPNarrow(b *testing.B) {
	imgs := officeMiddle(b)
	for i, m := range imgs {
		imgs[i] = m.Narrow()
	}
	benchEstimate(b, imgs)
}
