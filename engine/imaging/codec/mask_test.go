package codec

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"
)

func pngBytes(t *testing.T, m image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeMask(t *testing.T) {
	grayPNG := readPhoto(t, "sky", "masks", "ADE_val_00000001.png")
	g, err := png.Decode(bytes.NewReader(grayPNG))
	if err != nil {
		t.Fatal(err)
	}
	gray := g.(*image.Gray)
	b := gray.Bounds()

	// The same region as white on transparent, as the API's masks are drawn.
	wot := image.NewNRGBA(b)
	// And as an opaque RGB black-and-white image.
	bw := image.NewRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			v := gray.GrayAt(x, y).Y
			wot.SetNRGBA(x, y, color.NRGBA{255, 255, 255, v})
			bw.SetRGBA(x, y, color.RGBA{v, v, v, 255})
		}
	}
	for name, data := range map[string][]byte{
		"gray": grayPNG, "white-on-transparent": pngBytes(t, wot), "rgb-black-white": pngBytes(t, bw),
	} {
		m, err := DecodeMask(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if m.C != 1 || m.W() != b.Dx() || m.H() != b.Dy() {
			t.Fatalf("%s: %s with %d channels", name, dims(m), m.C)
		}
		worst := 0.0
		for y := 0; y < m.H(); y++ {
			for x := 0; x < m.W(); x++ {
				want := float64(gray.GrayAt(x, y).Y) / 255
				worst = math.Max(worst, math.Abs(float64(m.At(x, y, 0))-want))
			}
		}
		if worst > 1e-3 {
			t.Errorf("%s: coverage off by up to %.4f", name, worst)
		}
	}

	// A colour photo saved as PNG is not a mask.
	photo := readPhoto(t, "brackets", "memorial_church_debevec", "memorial0069.png")
	_, err = DecodeMask(bytes.NewReader(photo), int64(len(photo)))
	if CodeOf(err) != CodeUnsupportedFormat || !strings.Contains(err.Error(), "photo") {
		t.Errorf("photo PNG: err = %v", err)
	}
	// Nor is a JPEG.
	jpg := readPhoto(t, "brackets", "house_interior_kim", "A.jpg")
	if _, err := DecodeMask(bytes.NewReader(jpg), int64(len(jpg))); CodeOf(err) != CodeUnsupportedFormat {
		t.Errorf("JPEG mask: err = %v", err)
	}
	if _, err := DecodeMask(bytes.NewReader(nil), 0); CodeOf(err) != CodeEmptyFile {
		t.Errorf("empty mask: err = %v", err)
	}
}
