package ui

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// A kept mask reads back as painted; one saved at half size is scaled to the photo
// as the engine scales it; one of another shape is refused; none is no mask.
func TestMaskPNGReadsBackAndScales(t *testing.T) {
	dir := t.TempDir()
	m := newPaintMask(200, 100)
	m.begin()
	m.segment(imgPoint{40, 50}, imgPoint{160, 50}, 12, 255)
	m.end()
	path := filepath.Join(dir, "masks", "a.png")
	if err := writeMaskPNG(path, m); err != nil {
		t.Fatal(err)
	}
	got, err := readMaskPNG(path, 200, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m.pix {
		if got.pix[i] != m.pix[i] {
			t.Fatalf("pixel %d reads back %d, painted %d", i, got.pix[i], m.pix[i])
		}
	}
	// The PNG is 1-bit: a mask costs little in the data folder.
	f, _ := os.Open(path)
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if pal, ok := cfg.ColorModel.(color.Palette); err != nil || !ok || len(pal) != 2 {
		t.Fatalf("mask PNG colour model %v (%v)", cfg.ColorModel, err)
	}

	half := image.NewGray(image.Rect(0, 0, 100, 50))
	half.Pix[25*100+50] = 255
	writePNG(t, filepath.Join(dir, "half.png"), half)
	got, err = readMaskPNG(filepath.Join(dir, "half.png"), 200, 100)
	if err != nil {
		t.Fatal(err)
	}
	if marked(got) != 4 || !got.Marked(100, 50) || !got.Marked(101, 51) {
		t.Fatalf("half-size mask scaled to %d marked pixels", marked(got))
	}

	writePNG(t, filepath.Join(dir, "square.png"), image.NewGray(image.Rect(0, 0, 100, 100)))
	if _, err := readMaskPNG(filepath.Join(dir, "square.png"), 200, 100); err == nil {
		t.Fatal("a square mask was taken for a 2:1 photo")
	}
	if _, err := readMaskPNG(filepath.Join(dir, "none.png"), 200, 100); !os.IsNotExist(err) {
		t.Fatalf("missing mask: %v", err)
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}

// Clearing is one undoable step, and the history keeps the last maxUndo steps as
// runs of flipped pixels, not copies of the mask.
func TestMaskHistoryIsBoundedAndSmall(t *testing.T) {
	m := newPaintMask(3000, 2000)
	for i := range maxUndo + 10 {
		m.begin()
		m.segment(imgPoint{100, float64(20 + i*30)}, imgPoint{2900, float64(20 + i*30)}, 40, 255)
		m.end()
	}
	if len(m.undo) != maxUndo {
		t.Fatalf("%d steps kept, want %d", len(m.undo), maxUndo)
	}
	painted := marked(m)
	if !m.Clear() || marked(m) != 0 {
		t.Fatal("clear")
	}
	runs := 0
	for _, e := range m.undo {
		runs += len(e.runs)
	}
	if bytes := runs * 4; bytes > 2<<20 {
		t.Fatalf("history holds %d bytes for %d strokes", bytes, maxUndo)
	}
	if !m.Undo() || marked(m) != painted {
		t.Fatal("undoing the clear did not bring the mask back")
	}
	for m.Undo() {
	}
	if n := marked(m); n == 0 || n >= painted {
		t.Fatalf("undoing everything kept leaves %d of %d marked: the first 10 strokes stay", n, painted)
	}
}
