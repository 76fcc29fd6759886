package ui

import (
	"image"
	"image/color"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
)

func solid(w, h int, c color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	return img
}

var (
	red  = color.NRGBA{R: 200, A: 255}
	blue = color.NRGBA{B: 200, A: 255}
)

func TestCompareViewSplitsAndToggles(t *testing.T) {
	test.NewApp()
	v := newCompareView(func(func()) {})
	w := test.NewWindow(v)
	defer w.Close()
	w.Resize(fyne.NewSize(420, 220))
	v.SetImages(solid(400, 200, red), solid(400, 200, blue), image.Point{})

	img := v.generate(400, 200)
	if img.At(100, 100) != red || img.At(300, 100) != blue {
		t.Fatalf("split at 0.5: left %v right %v", img.At(100, 100), img.At(300, 100))
	}
	v.SetSplit(0.9)
	img = v.generate(400, 200)
	if img.At(300, 100) != red || img.At(395, 100) != blue {
		t.Fatal("divider did not move")
	}
	v.SetMode(modeAfter)
	if img = v.generate(400, 200); img.At(5, 100) != blue {
		t.Fatal("after mode shows the original")
	}
	v.SetMode(modeBefore)
	if img = v.generate(400, 200); img.At(395, 100) != red {
		t.Fatal("before mode shows the result")
	}

	// A wider view letterboxes the photo and keeps its aspect.
	v.SetMode(modeSplit)
	v.SetSplit(0.5)
	img = v.generate(800, 200)
	if _, _, _, a := img.At(10, 100).RGBA(); a != 0 {
		t.Fatal("the margin beside the photo is painted")
	}
	if img.At(350, 100) != red || img.At(450, 100) != blue {
		t.Fatal("letterboxed split is off centre")
	}

	// Dragging moves the divider to the pointer.
	v.Resize(fyne.NewSize(400, 200))
	v.Dragged(&fyne.DragEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(100, 50)}})
	if s := v.Split(); s < 0.24 || s > 0.26 {
		t.Fatalf("split after drag %.2f", s)
	}

	// Before only: the whole photo is the original and no divider shows.
	v.SetImages(solid(400, 200, red), nil, image.Point{})
	if img = v.generate(400, 200); img.At(395, 100) != red {
		t.Fatal("before-only view is not the original")
	}

	// 100 %: the view asks for the photo's full size.
	v.SetImages(solid(400, 200, red), solid(400, 200, blue), image.Pt(4000, 2000))
	v.SetActualSize(true)
	if m := v.MinSize(); m.Width < 3999 || m.Height < 1999 {
		t.Fatalf("100%% min size %v", m)
	}
}

func BenchmarkCompareDrag(b *testing.B) {
	test.NewApp()
	v := newCompareView(func(f func()) {})
	v.SetImages(solid(2048, 1365, red), solid(2048, 1365, blue), image.Point{})
	v.generate(1200, 800) // scale once, as the first frame does
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v.SetSplit(float32(i%100) / 100)
		v.generate(1200, 800)
	}
}
