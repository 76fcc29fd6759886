package assets

import (
	"bytes"
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// The block pre-average must not visibly change a thumbnail against a Lanczos resize
// straight from the full image.
func TestPreShrinkMatchesDirectResize(t *testing.T) {
	data := photo(t, "brackets", "library_phone", "20240401_185036.JPG")
	img, _, err := codec.Decode(bytes.NewReader(data), int64(len(data)), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tw, th := imaging.FitWithin(img.W(), img.H(), 512)
	if k := min(img.W()/tw, img.H()/th) / 2; k < 2 {
		t.Fatalf("test photo too small to pre-shrink (k=%d)", k)
	}
	direct := imaging.Resize(img, tw, th).ToNRGBA()
	fast := imaging.Resize(preShrink(img, tw, th), tw, th).ToNRGBA()
	var sum, worst float64
	for i := range direct.Pix {
		if i%4 == 3 {
			continue
		}
		d := math.Abs(float64(direct.Pix[i]) - float64(fast.Pix[i]))
		sum += d
		worst = max(worst, d)
	}
	mean := sum / float64(len(direct.Pix)*3/4)
	t.Logf("mean |diff| %.3f, max %.0f (8-bit sRGB)", mean, worst)
	if mean > 1.0 || worst > 48 {
		t.Fatalf("pre-shrunk thumbnail differs: mean %.3f, max %.0f codes", mean, worst)
	}
}

func TestBoxReduceAveragesAndWeightsAlpha(t *testing.T) {
	// 5x3 RGB, k=2: blocks of 2x2, 1x2 at the right edge, 2x1 and 1x1 at the bottom.
	src := imaging.New(5, 3, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i % 7)
	}
	got := boxReduce(src, 2)
	if got.W() != 3 || got.H() != 2 {
		t.Fatalf("size %dx%d, want 3x2", got.W(), got.H())
	}
	for oy := 0; oy < 2; oy++ {
		for ox := 0; ox < 3; ox++ {
			for c := 0; c < 3; c++ {
				var s, n float32
				for y := oy * 2; y < min(oy*2+2, 3); y++ {
					for x := ox * 2; x < min(ox*2+2, 5); x++ {
						s += src.At(x, y, c)
						n++
					}
				}
				if v := got.At(ox, oy, c); math.Abs(float64(v-s/n)) > 1e-5 {
					t.Fatalf("(%d,%d,%d) = %v, want %v", ox, oy, c, v, s/n)
				}
			}
		}
	}
	// A white pixel beside transparent black ones stays white, at a quarter coverage.
	a := imaging.New(2, 2, 4)
	copy(a.Pix[:4], []float32{1, 1, 1, 1})
	r := boxReduce(a, 2)
	if r.Pix[0] != 1 || r.Pix[1] != 1 || r.Pix[2] != 1 || r.Pix[3] != 0.25 {
		t.Fatalf("alpha-weighted average %v, want [1 1 1 0.25]", r.Pix)
	}
}
