package pipeline

import (
	"bytes"
	"context"
	"image"
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

// The eraser's memory follows the area its mask marks: admission reads the mask's
// bounds (scaled to the photo where it was drawn on a smaller copy), charges a small
// mask a fraction of what one over most of the photo costs, and charges a mask it
// has not read as if it marked the whole photo.
func TestEraserEstimateFollowsTheMask(t *testing.T) {
	small, err := MaskAreaOf(&fileAssets{paths: map[string]string{"m": eraseMaskFile(t, 376, 250, 150, 100, 210, 165)}}, "m")
	if err != nil {
		t.Fatal(err)
	}
	if want := (MaskArea{W: 376, H: 250, Bounds: image.Rect(150, 100, 210, 165)}); small != want {
		t.Fatalf("mask area %+v, want %+v", small, want)
	}
	if got, want := small.On(752, 500), image.Rect(300, 200, 420, 330); got != want {
		t.Fatalf("on the full-size photo the mask marks %v, want %v", got, want)
	}
	if got := (MaskArea{}).On(752, 500); got != image.Rect(0, 0, 752, 500) {
		t.Fatalf("an unread mask covers %v, want the whole photo", got)
	}

	p := New(Config{Logger: quiet()})
	opts := resolved(t, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID)})
	ins := []Input{{Width: 4032, Height: 3024}}
	none := p.EstimateInputs(resolved(t, core.Options{}), ins, MaskArea{})
	est := func(b image.Rectangle) int64 {
		return p.EstimateInputs(opts, ins, MaskArea{W: 4032, H: 3024, Bounds: b})
	}
	little, most, unread := est(image.Rect(1800, 1300, 2200, 1700)), est(image.Rect(200, 200, 3800, 2800)), p.EstimateInputs(opts, ins, MaskArea{})
	// A small mask's fill costs less than decoding the photo did, the order's peak.
	if !(none == little && little < most && most <= unread) {
		t.Fatalf("estimates: no eraser %d, 1%% mask %d, 77%% mask %d, unread mask %d; want the first two equal, then rising", none, little, most, unread)
	}
	// A 77% mask works on the whole photo: eraserWorkPerPixel bytes a pixel of it,
	// beside the working image.
	if px := int64(4032 * 3024); most < eraserWorkPerPixel*px {
		t.Fatalf("a 77%% mask is charged %d bytes, under the fill's %d", most, eraserWorkPerPixel*px)
	}
}
