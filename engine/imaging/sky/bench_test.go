package sky

import (
	"context"
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// photo12MP is the overcast building exterior (4032x2268) scaled to 12 megapixels.
func photo12MP(b *testing.B) *imaging.Image {
	img := imagingtest.LoadFile(b, testphotos.Path(b, "brackets", "building_exterior_phone", "20240401_175720.JPG"))
	k := math.Sqrt(12e6 / float64(img.W()*img.H()))
	return imaging.Resize(img, int(float64(img.W())*k), int(float64(img.H())*k))
}

func BenchmarkSegment12MP(b *testing.B) {
	img := photo12MP(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, res, err := Segment(context.Background(), img); err != nil || !res.Found {
			b.Fatal(err, res.Reason)
		}
	}
}

func BenchmarkReplace12MP(b *testing.B) {
	img := photo12MP(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, res, err := Replace(context.Background(), img, StyleLowCloud); err != nil || !res.Found {
			b.Fatal(err, res.Reason)
		}
	}
}

func BenchmarkReplace1MP(b *testing.B) {
	img := imagingtest.LoadFile(b, testphotos.Path(b, "exteriors", "houses_117_frontal.jpg"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := Replace(context.Background(), img, StyleHighCloud); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplaceEdges runs sky@4.0.0's matte and composite beside the refined ones on
// the same exterior, for the cost of the edge refinement.
func BenchmarkReplaceEdges(b *testing.B) {
	for _, name := range []string{"1MP", "12MP"} {
		var img *imaging.Image
		if name == "1MP" {
			img = imagingtest.LoadFile(b, testphotos.Path(b, "exteriors", "houses_117_frontal.jpg"))
		} else {
			img = photo12MP(b)
		}
		for _, legacy := range []bool{true, false} {
			mode := "refined"
			if legacy {
				mode = "sky4.0.0"
			}
			b.Run(name+"/"+mode, func(b *testing.B) {
				b.ReportAllocs()
				for i := 0; i < b.N; i++ {
					if _, _, err := replace(context.Background(), img, StyleLowCloud, legacy); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
