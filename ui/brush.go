package ui

import (
	"image"
	"image/color"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// The magic eraser's brush: the user paints over what to erase on the scene's photo
// (the reference bracket of a draft, the delivered result of a finished scene). The
// mask is held at the photo's full resolution, one byte a pixel, and strokes are
// rasterised in image coordinates, so zooming changes only what is shown.

// maxUndo is how many strokes can be undone.
const maxUndo = 50

// imgPoint is a point in image pixels; (0.5, 0.5) is the centre of the top-left pixel.
type imgPoint struct{ X, Y float64 }

// paintMask is a painted mask with its undo history. The mask is binary, so an
// undo step keeps only which pixels a stroke flipped, as runs: a stroke across a
// 24-megapixel photo costs a few kilobytes of history, not its rectangle twice.
type paintMask struct {
	w, h int
	pix  []uint8 // 255 marks a pixel to erase, 0 keeps it

	undo, redo []maskEdit
	snap       []uint8         // the mask as the stroke under way found it (reused)
	stroke     image.Rectangle // what the stroke under way touched
	value      uint8           // what the stroke under way sets
	active     bool
}

// maskEdit is one undoable stroke: the pixels it set to v (they were 255-v before),
// as runs of start offset and length.
type maskEdit struct {
	v    uint8
	runs []int32
}

func newPaintMask(w, h int) *paintMask {
	return &paintMask{w: w, h: h, pix: make([]uint8, w*h)}
}

// begin starts a stroke; what is painted until end is undone as one step.
func (m *paintMask) begin() {
	if m.active {
		return
	}
	if len(m.snap) != len(m.pix) {
		m.snap = make([]uint8, len(m.pix))
	}
	copy(m.snap, m.pix)
	m.active, m.stroke = true, image.Rectangle{}
}

// segment sets to v (0 or 255) every pixel whose centre lies within r of the
// segment a–b: a stroke with round caps (a == b is a dab). A stroke sets one value.
func (m *paintMask) segment(a, b imgPoint, r float64, v uint8) {
	m.value = v
	r = max(r, 0.5)
	x0 := max(0, int(math.Floor(min(a.X, b.X)-r)))
	y0 := max(0, int(math.Floor(min(a.Y, b.Y)-r)))
	x1 := min(m.w, int(math.Ceil(max(a.X, b.X)+r))+1)
	y1 := min(m.h, int(math.Ceil(max(a.Y, b.Y)+r))+1)
	if x0 >= x1 || y0 >= y1 {
		return
	}
	dx, dy := b.X-a.X, b.Y-a.Y
	l2, r2 := dx*dx+dy*dy, r*r
	for y := y0; y < y1; y++ {
		py := float64(y) + 0.5
		row := m.pix[y*m.w : (y+1)*m.w]
		for x := x0; x < x1; x++ {
			px := float64(x) + 0.5
			t := 0.0
			if l2 > 0 {
				t = min(max(((px-a.X)*dx+(py-a.Y)*dy)/l2, 0), 1)
			}
			ex, ey := px-a.X-t*dx, py-a.Y-t*dy
			if ex*ex+ey*ey <= r2 {
				row[x] = v
			}
		}
	}
	m.stroke = m.stroke.Union(image.Rect(x0, y0, x1, y1))
}

// end closes the stroke under way and records it for undo; it reports whether the
// mask changed.
func (m *paintMask) end() bool {
	if !m.active {
		return false
	}
	m.active = false
	r := m.stroke
	var runs []int32
	for y := r.Min.Y; y < r.Max.Y; y++ {
		start := -1
		for x := r.Min.X; x <= r.Max.X; x++ {
			i := y*m.w + x
			changed := x < r.Max.X && m.pix[i] != m.snap[i]
			switch {
			case changed && start < 0:
				start = i
			case !changed && start >= 0:
				runs = append(runs, int32(start), int32(i-start))
				start = -1
			}
		}
	}
	if len(runs) == 0 {
		return false
	}
	if len(m.undo) == maxUndo {
		m.undo = append(m.undo[:0], m.undo[1:]...)
	}
	m.undo = append(m.undo, maskEdit{v: m.value, runs: runs})
	m.redo = m.redo[:0]
	return true
}

// apply sets the pixels of e to v.
func (m *paintMask) apply(e maskEdit, v uint8) {
	for i := 0; i < len(e.runs); i += 2 {
		run := m.pix[e.runs[i] : e.runs[i]+e.runs[i+1]]
		for j := range run {
			run[j] = v
		}
	}
}

// Undo reverts the last stroke; false when there is none.
func (m *paintMask) Undo() bool {
	m.end()
	if len(m.undo) == 0 {
		return false
	}
	e := m.undo[len(m.undo)-1]
	m.undo = m.undo[:len(m.undo)-1]
	m.apply(e, 255-e.v)
	m.redo = append(m.redo, e)
	return true
}

// Redo repeats the last undone stroke; false when there is none.
func (m *paintMask) Redo() bool {
	m.end()
	if len(m.redo) == 0 {
		return false
	}
	e := m.redo[len(m.redo)-1]
	m.redo = m.redo[:len(m.redo)-1]
	m.apply(e, e.v)
	m.undo = append(m.undo, e)
	return true
}

// Clear unmarks everything, as one undoable step.
func (m *paintMask) Clear() bool {
	m.begin()
	clear(m.pix)
	m.stroke, m.value = image.Rect(0, 0, m.w, m.h), 0
	return m.end()
}

// Any reports whether some pixel is marked.
func (m *paintMask) Any() bool {
	for _, v := range m.pix {
		if v != 0 {
			return true
		}
	}
	return false
}

// Marked reports whether pixel (x, y) is marked.
func (m *paintMask) Marked(x, y int) bool { return m.pix[y*m.w+x] != 0 }

// brushView shows the photo with the painted mask over it in translucent red and
// turns the pointer into strokes: drag to paint (or erase), the wheel zooms at the
// pointer, a drag with the middle button or with Space held pans. It is focusable
// for [ and ] (brush size), Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y).
//
// Everything runs on the UI goroutine, drawing included (Fyne draws on it too).
type brushView struct {
	widget.BaseWidget

	photo   *image.NRGBA // full resolution
	small   *image.NRGBA // a reduced copy for zoomed-out views; nil uses photo
	preview *image.NRGBA // a preview fill, shown without the mask until it changes
	mask    *paintMask

	size  float64 // brush diameter in image pixels
	erase bool
	fit   bool    // the photo fits the view
	scale float64 // units per image pixel when not fit
	cx    float64 // image point at the view's centre when not fit
	cy    float64

	stroking bool
	last     imgPoint
	space    bool
	button   desktop.MouseButton
	hover    fyne.Position
	hovering bool

	out    *image.NRGBA
	xs, ys []int // per output pixel: image column/row, -1 outside the photo
	sx, sy []int // the same in the source drawn (photo, small copy or preview)

	onMask func() // the mask changed: stroke, undo, redo, clear
	onView func() // the brush size, the mode or the zoom changed

	raster *canvas.Raster
	cursor *canvas.Circle
}

// brush size bounds, in image pixels.
const (
	minBrush = 1
	maxBrush = 1000
)

func newBrushView(photo, small *image.NRGBA, mask *paintMask) *brushView {
	v := &brushView{photo: photo, small: small, mask: mask, fit: true}
	long := max(mask.w, mask.h)
	v.size = math.Round(min(max(float64(long)/40, 8), maxBrush))
	v.ExtendBaseWidget(v)
	return v
}

// SetSize sets the brush diameter in image pixels.
func (v *brushView) SetSize(d float64) {
	d = math.Round(min(max(d, minBrush), maxBrush))
	if d == v.size {
		return
	}
	v.size = d
	v.layoutCursor()
	v.viewChanged()
}

// Size of the brush; stepBrush grows or shrinks it by about 15 % (at least a pixel).
func (v *brushView) stepBrush(up bool) {
	step := max(1, math.Round(v.size*0.15))
	if up {
		v.SetSize(v.size + step)
	} else {
		v.SetSize(v.size - step)
	}
}

// SetErase switches between painting and erasing the mask.
func (v *brushView) SetErase(on bool) {
	if v.erase != on {
		v.erase = on
		v.viewChanged()
	}
}

// SetPreview shows a fill (nil: back to the photo and mask).
func (v *brushView) SetPreview(img *image.NRGBA) {
	v.preview = img
	v.Refresh()
}

// Fit fits the photo to the view.
func (v *brushView) Fit() {
	v.fit = true
	v.refreshView()
}

// Actual shows one photo pixel per screen pixel, keeping the centre.
func (v *brushView) Actual() {
	_, cx, cy := v.view()
	v.fit, v.scale, v.cx, v.cy = false, 1/float64(v.canvasScale()), cx, cy
	v.clampCentre()
	v.refreshView()
}

// Zoom is the number of screen pixels one photo pixel spans (1 at 100 %).
func (v *brushView) Zoom() float64 {
	u, _, _ := v.view()
	return u * float64(v.canvasScale())
}

// SetView zooms to u units per image pixel centred on image point (cx, cy).
func (v *brushView) SetView(u, cx, cy float64) {
	v.fit, v.scale, v.cx, v.cy = false, u, cx, cy
	v.clampCentre()
	v.refreshView()
}

// zoomAt multiplies the zoom by f, keeping the image point under p where it is.
func (v *brushView) zoomAt(p fyne.Position, f float64) {
	sz := v.Size()
	at := v.toImage(p)
	u, _, _ := v.view()
	u = min(max(u*f, v.fitScale()/2), 32)
	v.fit, v.scale = false, u
	v.cx = at.X - (float64(p.X)-float64(sz.Width)/2)/u
	v.cy = at.Y - (float64(p.Y)-float64(sz.Height)/2)/u
	v.clampCentre()
	v.refreshView()
}

// pan moves the photo by d units.
func (v *brushView) pan(d fyne.Delta) {
	u, cx, cy := v.view()
	v.fit, v.scale = false, u
	v.cx, v.cy = cx-float64(d.DX)/u, cy-float64(d.DY)/u
	v.clampCentre()
	v.refreshView()
}

func (v *brushView) clampCentre() {
	v.cx = min(max(v.cx, 0), float64(v.mask.w))
	v.cy = min(max(v.cy, 0), float64(v.mask.h))
}

func (v *brushView) refreshView() {
	v.layoutCursor()
	v.Refresh()
	v.viewChanged()
}

func (v *brushView) viewChanged() {
	if v.onView != nil {
		v.onView()
	}
}

func (v *brushView) canvasScale() float32 {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil && c.Scale() > 0 {
		return c.Scale()
	}
	return 1
}

// fitScale is the zoom (units per image pixel) that fits the photo to the view.
func (v *brushView) fitScale() float64 {
	sz := v.Size()
	if sz.Width <= 0 || sz.Height <= 0 {
		return 1
	}
	return min(float64(sz.Width)/float64(v.mask.w), float64(sz.Height)/float64(v.mask.h))
}

// view returns the zoom (units per image pixel) and the image point at the centre.
func (v *brushView) view() (u, cx, cy float64) {
	if v.fit {
		return v.fitScale(), float64(v.mask.w) / 2, float64(v.mask.h) / 2
	}
	return v.scale, v.cx, v.cy
}

// toImage maps a position in the view to image pixels.
func (v *brushView) toImage(p fyne.Position) imgPoint {
	sz := v.Size()
	u, cx, cy := v.view()
	return imgPoint{(float64(p.X)-float64(sz.Width)/2)/u + cx, (float64(p.Y)-float64(sz.Height)/2)/u + cy}
}

// toView maps image pixels to a position in the view.
func (v *brushView) toView(q imgPoint) fyne.Position {
	sz := v.Size()
	u, cx, cy := v.view()
	return fyne.NewPos(float32((q.X-cx)*u+float64(sz.Width)/2), float32((q.Y-cy)*u+float64(sz.Height)/2))
}

func (v *brushView) value() uint8 {
	if v.erase {
		return 0
	}
	return 255
}

// Dragged paints from the last point to the pointer, or pans.
func (v *brushView) Dragged(e *fyne.DragEvent) {
	if v.space || v.button == desktop.MouseButtonTertiary {
		v.pan(e.Dragged)
		return
	}
	p := v.toImage(e.Position)
	if !v.stroking {
		v.stroking = true
		v.mask.begin()
		v.last = v.toImage(e.Position.Subtract(e.Dragged))
		if v.preview != nil {
			v.maskChanged() // show the strokes, not a fill that is out of date
		}
	}
	v.mask.segment(v.last, p, v.size/2, v.value())
	v.last = p
	v.hover, v.hovering = e.Position, true
	v.layoutCursor()
	v.Refresh()
}

// DragEnd closes the stroke.
func (v *brushView) DragEnd() {
	if !v.stroking {
		return
	}
	v.stroking = false
	if v.mask.end() {
		v.maskChanged()
	}
}

// Tapped paints a dab.
func (v *brushView) Tapped(e *fyne.PointEvent) {
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		c.Focus(v)
	}
	p := v.toImage(e.Position)
	v.mask.begin()
	v.mask.segment(p, p, v.size/2, v.value())
	if v.mask.end() {
		v.maskChanged()
	}
	v.Refresh()
}

func (v *brushView) maskChanged() {
	v.preview = nil
	v.Refresh()
	if v.onMask != nil {
		v.onMask()
	}
}

// Undo reverts the last stroke.
func (v *brushView) Undo() {
	if v.mask.Undo() {
		v.maskChanged()
	}
}

// Redo repeats the last undone stroke.
func (v *brushView) Redo() {
	if v.mask.Redo() {
		v.maskChanged()
	}
}

// Clear unmarks everything (undoable).
func (v *brushView) Clear() {
	if v.mask.Clear() {
		v.maskChanged()
	}
}

// Scrolled zooms at the pointer.
func (v *brushView) Scrolled(e *fyne.ScrollEvent) {
	switch {
	case e.Scrolled.DY > 0:
		v.zoomAt(e.Position, 1.25)
	case e.Scrolled.DY < 0:
		v.zoomAt(e.Position, 0.8)
	}
}

// MouseDown remembers the button, so a middle-button drag pans.
func (v *brushView) MouseDown(e *desktop.MouseEvent) { v.button = e.Button }

// MouseUp is part of desktop.Mouseable.
func (v *brushView) MouseUp(*desktop.MouseEvent) {}

// MouseIn shows the brush outline.
func (v *brushView) MouseIn(e *desktop.MouseEvent) { v.MouseMoved(e) }

// MouseMoved moves the brush outline.
func (v *brushView) MouseMoved(e *desktop.MouseEvent) {
	v.hover, v.hovering = e.Position, true
	v.layoutCursor()
}

// MouseOut hides the brush outline.
func (v *brushView) MouseOut() {
	v.hovering = false
	v.layoutCursor()
}

// FocusGained is part of fyne.Focusable.
func (v *brushView) FocusGained() {}

// FocusLost forgets a held Space.
func (v *brushView) FocusLost() { v.space = false }

// TypedRune: [ and ] shrink and grow the brush.
func (v *brushView) TypedRune(r rune) {
	switch r {
	case '[':
		v.stepBrush(false)
	case ']':
		v.stepBrush(true)
	}
}

// TypedKey is part of fyne.Focusable.
func (v *brushView) TypedKey(*fyne.KeyEvent) {}

// KeyDown: Space held turns drags into panning.
func (v *brushView) KeyDown(e *fyne.KeyEvent) {
	if e.Name == fyne.KeySpace {
		v.space = true
	}
}

// KeyUp is part of desktop.Keyable.
func (v *brushView) KeyUp(e *fyne.KeyEvent) {
	if e.Name == fyne.KeySpace {
		v.space = false
	}
}

// TypedShortcut: undo and redo.
func (v *brushView) TypedShortcut(s fyne.Shortcut) {
	switch s := s.(type) {
	case *fyne.ShortcutUndo:
		v.Undo()
	case *fyne.ShortcutRedo:
		v.Redo()
	case *desktop.CustomShortcut:
		switch {
		case s.KeyName == fyne.KeyZ && s.Modifier&fyne.KeyModifierShift != 0:
			v.Redo()
		case s.KeyName == fyne.KeyZ:
			v.Undo()
		case s.KeyName == fyne.KeyY:
			v.Redo()
		}
	}
}

// MinSize is small: the view takes what the dialog gives it.
func (v *brushView) MinSize() fyne.Size { return fyne.NewSize(320, 240) }

// overlay is the painted area's colour; alpha 0.45 of red over the photo.
const overlayAlpha = 115

// generate draws the view at w×h pixels: the photo (or the preview fill) sampled at
// the zoom, the mask blended over it.
func (v *brushView) generate(w, h int) image.Image {
	if v.out == nil || v.out.Bounds().Dx() != w || v.out.Bounds().Dy() != h {
		v.out = image.NewNRGBA(image.Rect(0, 0, w, h))
	}
	sz := v.Size()
	if sz.Width <= 0 || w <= 0 || h <= 0 {
		return v.out
	}
	src, mask := v.photo, v.mask.pix
	u, cx, cy := v.view()
	dpu := float64(w) / float64(sz.Width) // device pixels per unit
	if v.preview != nil {
		src, mask = v.preview, nil
	} else if v.small != nil && u*dpu <= float64(v.small.Bounds().Dx())/float64(v.mask.w) {
		src = v.small
	}
	sw, sh := src.Bounds().Dx(), src.Bounds().Dy()
	axis := func(n int, half, c float64, size int, srcSize int, img, s []int) ([]int, []int) {
		img, s = img[:0], s[:0]
		for i := range n {
			p := int(math.Floor(((float64(i)+0.5)/dpu-half)/u + c))
			if p < 0 || p >= size {
				img, s = append(img, -1), append(s, -1)
				continue
			}
			img, s = append(img, p), append(s, min(srcSize-1, p*srcSize/size))
		}
		return img, s
	}
	v.xs, v.sx = axis(w, float64(sz.Width)/2, cx, v.mask.w, sw, v.xs, v.sx)
	v.ys, v.sy = axis(h, float64(sz.Height)/2, cy, v.mask.h, sh, v.ys, v.sy)
	const bg = 0x20
	for y := range h {
		row := v.out.Pix[y*v.out.Stride : y*v.out.Stride+w*4]
		iy := v.ys[y]
		if iy < 0 {
			for i := 0; i < len(row); i += 4 {
				row[i], row[i+1], row[i+2], row[i+3] = bg, bg, bg, 255
			}
			continue
		}
		srow := src.Pix[v.sy[y]*src.Stride:]
		var mrow []uint8
		if mask != nil {
			mrow = mask[iy*v.mask.w : (iy+1)*v.mask.w]
		}
		for x := range w {
			o := x * 4
			ix := v.xs[x]
			if ix < 0 {
				row[o], row[o+1], row[o+2], row[o+3] = bg, bg, bg, 255
				continue
			}
			s := srow[v.sx[x]*4 : v.sx[x]*4+3]
			r, g, b := s[0], s[1], s[2]
			if mrow != nil && mrow[ix] != 0 {
				r = uint8((uint32(r)*(255-overlayAlpha) + 255*overlayAlpha) / 255)
				g = uint8(uint32(g) * (255 - overlayAlpha) / 255)
				b = uint8(uint32(b) * (255 - overlayAlpha) / 255)
			}
			row[o], row[o+1], row[o+2], row[o+3] = r, g, b, 255
		}
	}
	return v.out
}

// layoutCursor places the brush outline at the pointer.
func (v *brushView) layoutCursor() {
	if v.cursor == nil {
		return
	}
	if !v.hovering || v.preview != nil {
		v.cursor.Hide()
		return
	}
	u, _, _ := v.view()
	d := float32(v.size * u)
	v.cursor.Resize(fyne.NewSize(d, d))
	v.cursor.Move(v.hover.SubtractXY(d/2, d/2))
	v.cursor.Show()
	v.cursor.Refresh()
}

func (v *brushView) CreateRenderer() fyne.WidgetRenderer {
	v.raster = canvas.NewRaster(v.generate)
	v.raster.ScaleMode = canvas.ImageScaleFastest
	v.cursor = canvas.NewCircle(color.Transparent)
	v.cursor.StrokeColor = color.NRGBA{R: 255, G: 255, B: 255, A: 220}
	v.cursor.StrokeWidth = 1.5
	v.cursor.Hide()
	return &brushRenderer{v: v}
}

type brushRenderer struct{ v *brushView }

func (r *brushRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.v.raster, r.v.cursor}
}

func (r *brushRenderer) Layout(size fyne.Size) {
	r.v.raster.Resize(size)
	r.v.layoutCursor()
}

func (r *brushRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func (r *brushRenderer) Refresh() {
	r.Layout(r.v.Size())
	r.v.raster.Refresh()
}

func (r *brushRenderer) Destroy() {}

var (
	_ fyne.Focusable      = (*brushView)(nil)
	_ fyne.Shortcutable   = (*brushView)(nil)
	_ fyne.Draggable      = (*brushView)(nil)
	_ fyne.Scrollable     = (*brushView)(nil)
	_ desktop.Mouseable   = (*brushView)(nil)
	_ desktop.Hoverable   = (*brushView)(nil)
	_ desktop.Keyable     = (*brushView)(nil)
	_ fyne.Tappable       = (*brushView)(nil)
	_ fyne.WidgetRenderer = (*brushRenderer)(nil)
)
