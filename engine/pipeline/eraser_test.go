package pipeline

import (
	"bytes"
	"context"
	"image/png"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Without any backend, the magic eraser runs on this machine: the masked object is
// replaced, the rest of the photo is kept, and the recipe is recorded.
func TestBuiltinEraser(t *testing.T) {
	p := New(Config{Logger: quiet()})
	if !p.FeatureAvailable(catalog.FeatureMagicEraser) {
		t.Fatal("the built-in magic eraser is not available")
	}
	fa := photos(t, kimA)
	fa.paths[eraserMaskID] = eraseMaskFile(t, 752, 500, 300, 200, 420, 330)
	opts := core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID), Format: ptr("png")}
	res, err := p.Run(context.Background(), Request{OrderID: "e", Inputs: []string{"in0"}, Options: resolved(t, opts), Assets: fa}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := res.Recipes[catalog.RecipeMagicEraser]; v == "" {
		t.Errorf("recipes %v do not name the magic eraser", res.Recipes)
	}
	got, err := png.Decode(bytes.NewReader(fa.out["e"]))
	if err != nil {
		t.Fatal(err)
	}
	src := decodePhoto(t, kimA)
	ref := src.ToNRGBA()
	var inside, outside int
	b := got.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := got.At(x, y).RGBA()
			o := ref.PixOffset(x, y)
			d := absDiff(r>>8, ref.Pix[o]) + absDiff(g>>8, ref.Pix[o+1]) + absDiff(bl>>8, ref.Pix[o+2])
			in := x >= 300 && x < 420 && y >= 200 && y < 330
			near := x >= 290 && x < 430 && y >= 190 && y < 340 // the grown hole
			switch {
			case in && d > 6:
				inside++
			case !near && d > 3:
				outside++
			}
		}
	}
	if inside < 120*130/4 {
		t.Errorf("only %d pixels of the masked object changed", inside)
	}
	if outside != 0 {
		t.Errorf("%d pixels away from the mask changed", outside)
	}
}

func absDiff(a uint32, b uint8) int {
	d := int(a) - int(b)
	if d < 0 {
		return -d
	}
	return d
}

// Masks that cannot be used fail the order with invalid_mask; a mask drawn on a
// half-size copy of the photo is scaled to it.
func TestBuiltinEraserMasks(t *testing.T) {
	p := New(Config{Logger: quiet()})
	cases := []struct {
		name     string
		mask     string
		wantCode string
	}{
		{"empty", eraseMaskFile(t, 752, 500, 0, 0, 0, 0), CodeInvalidMask},
		{"other aspect", eraseMaskFile(t, 500, 500, 100, 100, 200, 200), CodeInvalidMask},
		{"half size", eraseMaskFile(t, 376, 250, 150, 100, 210, 165), ""},
	}
	for _, c := range cases {
		fa := photos(t, kimA)
		fa.paths[eraserMaskID] = c.mask
		opts := core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID)}
		_, err := p.Run(context.Background(), Request{OrderID: c.name, Inputs: []string{"in0"}, Options: resolved(t, opts), Assets: fa}, nil)
		switch {
		case c.wantCode == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.wantCode != "" && CodeOf(err) != c.wantCode:
			t.Errorf("%s: %v (code %s), want %s", c.name, err, CodeOf(err), c.wantCode)
		}
	}
}
