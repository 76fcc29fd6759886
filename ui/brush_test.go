package ui

import (
	"context"
	"image"
	"image/color"
	"os"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// newTestBrush is a brush on a flat grey w×h photo, in a test window, its view
// exactly 400×300 units.
func newTestBrush(t *testing.T, w, h int) *brushView {
	t.Helper()
	a := test.NewApp()
	t.Cleanup(a.Quit)
	photo := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range photo.Pix {
		photo.Pix[i] = 128
	}
	v := newBrushView(photo, nil, newPaintMask(w, h))
	win := test.NewWindow(v)
	t.Cleanup(win.Close)
	win.SetPadded(false)
	win.Resize(fyne.NewSize(400, 300))
	v.Resize(fyne.NewSize(400, 300))
	return v
}

// drag drags the pointer over the view through the points given, in units.
func drag(v *brushView, pts ...fyne.Position) {
	for i := 1; i < len(pts); i++ {
		v.Dragged(&fyne.DragEvent{
			PointEvent: fyne.PointEvent{Position: pts[i]},
			Dragged:    fyne.NewDelta(pts[i].X-pts[i-1].X, pts[i].Y-pts[i-1].Y),
		})
	}
	v.DragEnd()
}

func marked(m *paintMask) int {
	n := 0
	for _, b := range m.pix {
		if b != 0 {
			n++
		}
	}
	return n
}

// A stroke drawn at 2× zoom, centred on image point (100, 100), marks the pixels
// within the brush's radius of the segment it covers in image coordinates, with
// round caps, and nothing else; at fit zoom the same image segment gives the same
// mask.
func TestBrushStrokeLandsInImageCoordinatesUnderZoom(t *testing.T) {
	v := newTestBrush(t, 400, 300)
	v.SetSize(10)
	v.SetView(2, 100, 100)
	if z := v.Zoom(); z != 2 {
		t.Fatalf("zoom %v, want 2", z)
	}
	// Screen (160, 150) is image (80, 100); (240, 150) is image (120, 100).
	drag(v, fyne.NewPos(160, 150), fyne.NewPos(180, 150), fyne.NewPos(200, 150), fyne.NewPos(240, 150))
	want := func(x, y int) bool {
		px, py := float64(x)+0.5, float64(y)+0.5
		cx := min(max(px, 80), 120)
		return (px-cx)*(px-cx)+(py-100)*(py-100) <= 25
	}
	for y := range 300 {
		for x := range 400 {
			if got := v.mask.Marked(x, y); got != want(x, y) {
				t.Fatalf("pixel (%d, %d) marked %v, want %v", x, y, got, want(x, y))
			}
		}
	}
	for _, p := range []image.Point{{100, 100}, {76, 100}, {100, 95}, {100, 104}, {123, 102}} {
		if !v.mask.Marked(p.X, p.Y) {
			t.Errorf("%v not marked", p)
		}
	}
	for _, p := range []image.Point{{74, 100}, {100, 94}, {100, 105}, {126, 100}} {
		if v.mask.Marked(p.X, p.Y) {
			t.Errorf("%v marked outside the brush", p)
		}
	}
	at2 := slicesClone(v.mask.pix)

	// At fit (1 unit per pixel for a 400×300 photo in 400×300) the same segment.
	v.Clear()
	v.Fit()
	if z := v.Zoom(); z != 1 {
		t.Fatalf("fit zoom %v, want 1", z)
	}
	drag(v, fyne.NewPos(80, 100), fyne.NewPos(120, 100))
	for i := range at2 {
		if at2[i] != v.mask.pix[i] {
			t.Fatalf("pixel %d differs between zooms", i)
		}
	}

	// The wheel zooms about the pointer: the image point under it stays put.
	p := fyne.NewPos(300, 80)
	before := v.toImage(p)
	v.Scrolled(&fyne.ScrollEvent{PointEvent: fyne.PointEvent{Position: p}, Scrolled: fyne.NewDelta(0, 10)})
	if v.Zoom() <= 1 {
		t.Fatalf("the wheel did not zoom in: %v", v.Zoom())
	}
	if after := v.toImage(p); abs(after.X-before.X) > 1e-3 || abs(after.Y-before.Y) > 1e-3 {
		t.Fatalf("the point under the pointer moved from %v to %v", before, after)
	}
	// 100 % is one photo pixel per screen pixel.
	v.Actual()
	if z := v.Zoom(); z != 1 {
		t.Fatalf("100%% zoom %v", z)
	}

	// The view shows the mask as translucent red over the photo.
	v.Fit()
	img := v.generate(400, 300)
	if c := img.At(100, 100).(color.NRGBA); c.R <= 128 || c.G >= 128 || c.A != 255 {
		t.Errorf("marked pixel drawn %v, want red over grey", c)
	}
	if c := img.At(200, 200).(color.NRGBA); c.R != 128 || c.G != 128 {
		t.Errorf("unmarked pixel drawn %v, want the photo", c)
	}
}

func slicesClone(b []uint8) []uint8 { return append([]uint8(nil), b...) }

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// Every dab is a step: Ctrl+Z undoes the last 30 one at a time, Ctrl+Shift+Z (and
// Ctrl+Y) redoes them, a new stroke drops what was undone; [ and ] size the brush.
func TestBrushUndoRedoAndSize(t *testing.T) {
	v := newTestBrush(t, 400, 300)
	v.SetSize(6)
	undo := &desktop.CustomShortcut{KeyName: fyne.KeyZ, Modifier: fyne.KeyModifierShortcutDefault}
	redo := &desktop.CustomShortcut{KeyName: fyne.KeyZ, Modifier: fyne.KeyModifierShortcutDefault | fyne.KeyModifierShift}
	const n = 35
	dab := func(i int) fyne.Position { return fyne.NewPos(float32(10+(i%10)*38), float32(20+(i/10)*60)) }
	counts := []int{0}
	for i := range n {
		v.Tapped(&fyne.PointEvent{Position: dab(i)})
		counts = append(counts, marked(v.mask))
	}
	if counts[n] <= counts[n-1] || counts[1] == 0 {
		t.Fatalf("dabs marked %v", counts)
	}
	for i := n; i > n-30; i-- {
		v.TypedShortcut(undo)
		if got := marked(v.mask); got != counts[i-1] {
			t.Fatalf("after undoing dab %d: %d marked, want %d", i, got, counts[i-1])
		}
	}
	for i := n - 30; i < n; i++ {
		if i%2 == 0 {
			v.TypedShortcut(redo)
		} else {
			v.TypedShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyY, Modifier: fyne.KeyModifierShortcutDefault})
		}
		if got := marked(v.mask); got != counts[i+1] {
			t.Fatalf("after redoing dab %d: %d marked, want %d", i+1, got, counts[i+1])
		}
	}
	v.TypedShortcut(&fyne.ShortcutUndo{})
	v.TypedShortcut(&fyne.ShortcutUndo{})
	v.Tapped(&fyne.PointEvent{Position: fyne.NewPos(390, 290)})
	if len(v.mask.redo) != 0 {
		t.Fatal("a new stroke kept the undone ones for redo")
	}
	v.TypedShortcut(redo)
	if got := marked(v.mask); got != counts[n-2]+marked(dabOnly(400, 300, 6, 390, 290)) {
		t.Fatalf("redo after a new stroke changed the mask: %d", got)
	}

	v.SetSize(20)
	v.TypedRune('[')
	if v.size != 17 {
		t.Fatalf("[ gave %v, want 17", v.size)
	}
	v.TypedRune(']')
	v.TypedRune(']')
	if v.size <= 17 || v.size > 24 {
		t.Fatalf("] gave %v", v.size)
	}
	for range 100 {
		v.TypedRune('[')
	}
	if v.size != minBrush {
		t.Fatalf("the brush shrank to %v", v.size)
	}
}

// dabOnly is the mask of one dab of diameter d at image point (x, y) on a w×h photo.
func dabOnly(w, h int, d float64, x, y float64) *paintMask {
	m := newPaintMask(w, h)
	m.segment(imgPoint{x, y}, imgPoint{x, y}, d/2, 255)
	return m
}

// Erase mode clears what the brush covers and is undone like painting.
func TestBrushEraseMode(t *testing.T) {
	v := newTestBrush(t, 400, 300)
	v.SetSize(20)
	drag(v, fyne.NewPos(50, 150), fyne.NewPos(350, 150))
	painted := marked(v.mask)
	v.SetErase(true)
	v.SetSize(10)
	drag(v, fyne.NewPos(200, 100), fyne.NewPos(200, 200))
	if v.mask.Marked(200, 150) || v.mask.Marked(196, 145) {
		t.Error("erasing left the middle marked")
	}
	if !v.mask.Marked(100, 150) || !v.mask.Marked(300, 150) || !v.mask.Marked(206, 150) {
		t.Error("erasing cleared more than the brush covered")
	}
	if got := marked(v.mask); got >= painted || got < painted-10*20-10 {
		t.Errorf("%d marked after erasing a 10 px strip across a 20 px stroke of %d", got, painted)
	}
	v.Undo()
	if marked(v.mask) != painted {
		t.Error("undo did not bring the erased part back")
	}
}

// The mask painted in the window is kept with the scene: as a PNG in the data
// folder that the engine's mask decoder reads back pixel for pixel, as an asset the
// scene's options name for the magic eraser, and reopening the brush shows it. A
// real magic-eraser order with that mask on the real photo changes the painted area
// and leaves the rest as it was; the preview fill changes the painted area of the
// reduced photo.
func TestPaintedMaskErasesThroughTheEngine(t *testing.T) {
	path := testphotos.Path(t, "interiors", "houses_109_bedroom.jpg")
	h := newHarness(t, 1)
	ids := h.drop(path)
	if len(ids) != 1 {
		t.Fatalf("scenes %v", ids)
	}
	id := ids[0]

	// The detail view opens the brush on the scene.
	h.w.selectScene(id)
	h.waitFor("the paint button", 10*time.Second, func() bool { return !h.w.detail.paint.Disabled() })
	test.Tap(h.w.detail.paint)
	if h.w.win.Canvas().Overlays().Top() == nil {
		t.Fatal("Paint mask… opened no dialog")
	}

	open := func() *brushEditor {
		e, err := newBrushEditor(h.w, id)
		if err != nil {
			t.Fatal(err)
		}
		done := false
		e.onLoaded = func(err error) {
			if err != nil {
				t.Errorf("load: %v", err)
			}
			done = true
		}
		e.load()
		h.waitFor("the photo in the brush", time.Minute, func() bool { return done })
		win := test.NewWindow(e.Object())
		t.Cleanup(win.Close)
		win.Resize(fyne.NewSize(1200, 800))
		e.view.Resize(fyne.NewSize(1024, 576))
		return e
	}
	e := open()
	v := e.view
	if v.mask.w != 1024 || v.mask.h != 576 {
		t.Fatalf("mask %dx%d, want the photo's 1024x576", v.mask.w, v.mask.h)
	}
	v.SetView(1, 512, 288)
	v.SetSize(50)
	drag(v, fyne.NewPos(600, 380), fyne.NewPos(680, 400), fyne.NewPos(760, 380))
	v.SetSize(30)
	v.Tapped(&fyne.PointEvent{Position: fyne.NewPos(300, 200)})
	if marked(v.mask) < 4000 {
		t.Fatalf("only %d pixels painted", marked(v.mask))
	}

	// Preview: a change to the mask cancels a fill under way; the fill shown
	// changes the painted area.
	e.previewFill()
	v.Tapped(&fyne.PointEvent{Position: fyne.NewPos(300, 200)}) // the same dab: no change
	v.SetSize(20)
	v.Tapped(&fyne.PointEvent{Position: fyne.NewPos(100, 500)})
	if e.fillCancel != nil || v.preview != nil {
		t.Fatal("painting kept the fill under way")
	}
	e.previewFill()
	h.waitFor("the preview fill", time.Minute, func() bool { return v.preview != nil })
	if b := v.preview.Bounds(); b.Dx() != 1024 || b.Dy() != 576 {
		t.Fatalf("preview %v", b)
	}
	in, out, n := diffIn(v.photo, v.preview, v.mask, 4)
	t.Logf("preview: mean change %.1f inside the mask, %.2f outside (%d pixels)", in, out, n)
	if in < 8 || out > 0.5 {
		t.Errorf("preview: mean change %.1f inside the mask, %.2f outside", in, out)
	}

	saved := false
	e.save(func(err error) {
		if err != nil {
			t.Errorf("save: %v", err)
		}
		saved = true
	})
	h.waitFor("the mask to be saved", time.Minute, func() bool { return saved })
	s, _ := h.w.shoot.Get(id)
	if s.Overrides.GenEdit == nil || *s.Overrides.GenEdit != "magic_eraser" || s.Overrides.Mask == nil {
		t.Fatalf("overrides after saving: %+v", s.Overrides)
	}
	maskID := *s.Overrides.Mask
	file := h.w.maskPath(path)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	dec, err := codec.DecodeMask(f, st.Size())
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if dec.W() != 1024 || dec.H() != 576 {
		t.Fatalf("saved mask %dx%d", dec.W(), dec.H())
	}
	for y := range 576 {
		for x := range 1024 {
			if (dec.At(x, y, 0) > 0.5) != v.mask.Marked(x, y) {
				t.Fatalf("saved mask differs at (%d, %d)", x, y)
			}
		}
	}
	if a, err := h.sys.assets.Get(h.w.owner, maskID); err != nil || a.Status != core.AssetReady {
		t.Fatalf("mask asset: %+v %v", a, err)
	}

	// Reopened, the brush shows the same mask.
	e2 := open()
	for i := range v.mask.pix {
		if e2.view.mask.pix[i] != v.mask.pix[i] {
			t.Fatalf("reopened mask differs at %d", i)
		}
	}

	// A real magic-eraser order with the mask through the real engine.
	photo, err := h.w.upload(path)
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the photo's ingest", time.Minute, func() bool {
		a, err := h.sys.assets.Get(h.w.owner, photo.ID)
		return err == nil && a.Status == core.AssetReady
	})
	off, png, ge := false, "png", "magic_eraser"
	opts := core.Options{GenEdit: &ge, Mask: &maskID, Format: &png, Perspective: &off, Tonecraft: &off,
		ColorCorrection: &off, LensCorrection: &off}
	sum, err := h.sys.engine.Submit(context.Background(), h.w.owner, []string{photo.ID}, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the order", 2*time.Minute, func() bool {
		sum, err = h.sys.engine.Order(context.Background(), h.w.owner, sum.OrderUUID)
		return err != nil || sum.Status.Terminal()
	})
	if err != nil || sum.Status != core.OrderCompleted {
		t.Fatalf("order: %v %+v", err, sum)
	}
	result, _, err := decodeAsset(h.sys.assets, sum.OutputAssetID, 0)
	if err != nil {
		t.Fatal(err)
	}
	in, out, n = diffIn(v.photo, result.(*image.NRGBA), v.mask, 4)
	t.Logf("order: mean change %.1f inside the mask, %.3f outside (%d pixels)", in, out, n)
	if in < 8 || out > 0.1 {
		t.Errorf("order: mean change %.1f inside the mask, %.3f outside", in, out)
	}
}

// diffIn is the mean absolute difference (8-bit levels, over RGB) between a and b
// inside the mask, and outside it beyond grow pixels of it (the eraser grows the
// hole a little); n counts the pixels inside.
func diffIn(a, b *image.NRGBA, m *paintMask, grow int) (in, out float64, n int) {
	var sin, sout float64
	nout := 0
	near := func(x, y int) bool {
		for dy := -grow; dy <= grow; dy++ {
			for dx := -grow; dx <= grow; dx++ {
				xx, yy := x+dx, y+dy
				if xx >= 0 && yy >= 0 && xx < m.w && yy < m.h && m.Marked(xx, yy) {
					return true
				}
			}
		}
		return false
	}
	for y := range m.h {
		for x := range m.w {
			pa, pb := a.PixOffset(x, y), b.PixOffset(x, y)
			d := 0.0
			for c := range 3 {
				d += abs(float64(a.Pix[pa+c]) - float64(b.Pix[pb+c]))
			}
			d /= 3
			switch {
			case m.Marked(x, y):
				sin += d
				n++
			case !near(x, y):
				sout += d
				nout++
			}
		}
	}
	return sin / float64(max(n, 1)), sout / float64(max(nout, 1)), n
}

// BenchmarkBrushDraw draws a 1800×1000 view of a 24-megapixel photo with a painted
// mask, fitted (from the reduced copy) and at 100 %: the cost of every drag event.
func BenchmarkBrushDraw(b *testing.B) {
	a := test.NewApp()
	defer a.Quit()
	photo := image.NewNRGBA(image.Rect(0, 0, 6000, 4000))
	small := image.NewNRGBA(image.Rect(0, 0, 2048, 1365))
	m := newPaintMask(6000, 4000)
	m.segment(imgPoint{1000, 2000}, imgPoint{5000, 2000}, 300, 255)
	v := newBrushView(photo, small, m)
	v.Resize(fyne.NewSize(1800, 1000))
	for _, c := range []struct {
		name string
		set  func()
	}{{"fit", v.Fit}, {"100%", func() { v.SetView(1, 3000, 2000) }}} {
		c.set()
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				v.generate(1800, 1000)
			}
		})
	}
}

// BenchmarkBrushStroke paints a 20-segment stroke of a 200 px brush on a
// 24-megapixel mask and closes it for undo.
func BenchmarkBrushStroke(b *testing.B) {
	m := newPaintMask(6000, 4000)
	b.ReportAllocs()
	for b.Loop() {
		m.begin()
		for i := range 20 {
			m.segment(imgPoint{float64(1000 + i*100), 2000}, imgPoint{float64(1100 + i*100), 2050}, 100, 255)
		}
		m.end()
		m.Undo()
	}
}
