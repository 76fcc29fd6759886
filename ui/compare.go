package ui

import (
	"image"
	"image/color"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/draw"
)

// compareMode is what the compare view shows.
type compareMode int

const (
	modeSplit  compareMode = iota // before left of the divider, after right of it
	modeBefore                    // the reference bracket only
	modeAfter                     // the result only
)

// compareView shows a scene before and after editing: a split with a divider the
// user drags (or taps), or one of the two. At 100 % it asks for its pixel size, so a
// scroll container around it pans the full-resolution photo.
//
// Drawing happens in a raster generator: both photos are scaled once to the size on
// screen (a fast approximation at once, a filtered one shortly after) and only the
// composition runs on each drag, into a buffer that is reused.
type compareView struct {
	widget.BaseWidget
	do func(func()) // runs on the UI goroutine

	mu      sync.Mutex
	before  image.Image
	after   image.Image
	full    image.Point // the photo's pixel size at 100 % (0: from the images)
	split   float32     // divider position, 0..1 of the photo's width
	mode    compareMode
	actual  bool // 100 %: one photo pixel per screen pixel
	scaled  map[scaleKey]*image.NRGBA
	out     *image.NRGBA
	refined map[scaleKey]bool
	// named is a photo with its own tag (a straightened reference), used while it is
	// the one shown on the left.
	named struct {
		img image.Image
		tag string
	}

	raster *canvas.Raster
	handle *canvas.Circle
	line   *canvas.Rectangle
	tagL   *canvas.Text
	tagR   *canvas.Text
	pillL  *canvas.Rectangle
	pillR  *canvas.Rectangle
}

type scaleKey struct {
	src  image.Image
	w, h int
}

func newCompareView(do func(func())) *compareView {
	v := &compareView{do: do, split: 0.5, scaled: map[scaleKey]*image.NRGBA{}, refined: map[scaleKey]bool{}}
	v.ExtendBaseWidget(v)
	return v
}

// SetImages replaces the photos; either may be nil (before only while a scene is
// processing). full is the photo's size at 100 %, or zero to use the images' size.
func (v *compareView) SetImages(before, after image.Image, full image.Point) {
	v.mu.Lock()
	v.before, v.after, v.full = before, after, full
	clear(v.scaled)
	clear(v.refined)
	v.mu.Unlock()
	v.Refresh()
}

// NameImage tags img with tag wherever it is shown as the "before" photo, in place
// of BEFORE or ORIGINAL; an empty tag clears it.
func (v *compareView) NameImage(img image.Image, tag string) {
	v.mu.Lock()
	v.named.img, v.named.tag = img, tag
	v.mu.Unlock()
	v.Refresh()
}

// SetMode chooses split, before or after.
func (v *compareView) SetMode(m compareMode) {
	v.mu.Lock()
	v.mode = m
	v.mu.Unlock()
	v.Refresh()
}

// Mode returns the current mode.
func (v *compareView) Mode() compareMode {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.mode
}

// SetSplit moves the divider (0..1).
func (v *compareView) SetSplit(f float32) {
	v.mu.Lock()
	v.split = min(max(f, 0), 1)
	v.mu.Unlock()
	v.Refresh()
}

// Split returns the divider position.
func (v *compareView) Split() float32 {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.split
}

// SetActualSize switches between fitting the view and 100 %.
func (v *compareView) SetActualSize(on bool) {
	v.mu.Lock()
	v.actual = on
	v.mu.Unlock()
	v.Refresh()
}

// size is the photo's size in pixels.
func (v *compareView) sizeLocked() image.Point {
	if v.full.X > 0 && v.full.Y > 0 {
		return v.full
	}
	for _, img := range []image.Image{v.after, v.before} {
		if img != nil {
			return img.Bounds().Size()
		}
	}
	return image.Point{}
}

// MinSize at 100 % is the photo's size in screen units.
func (v *compareView) MinSize() fyne.Size {
	v.mu.Lock()
	actual, sz := v.actual, v.sizeLocked()
	v.mu.Unlock()
	if actual && sz.X > 0 {
		scale := float32(1)
		if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil && c.Scale() > 0 {
			scale = c.Scale()
		}
		return fyne.NewSize(float32(sz.X)/scale, float32(sz.Y)/scale)
	}
	return fyne.NewSize(160, 120)
}

// fitRect places a photo of size sz within an area w×h, centred.
func fitRect(sz image.Point, w, h float32) (x, y, fw, fh float32) {
	if sz.X <= 0 || sz.Y <= 0 || w <= 0 || h <= 0 {
		return 0, 0, 0, 0
	}
	ar := float32(sz.X) / float32(sz.Y)
	fw, fh = w, w/ar
	if fh > h {
		fh, fw = h, h*ar
	}
	return (w - fw) / 2, (h - fh) / 2, fw, fh
}

// Dragged moves the divider with the pointer.
func (v *compareView) Dragged(e *fyne.DragEvent) { v.splitAt(e.Position) }

// DragEnd is part of fyne.Draggable.
func (v *compareView) DragEnd() {}

// Tapped moves the divider to where the user tapped.
func (v *compareView) Tapped(e *fyne.PointEvent) { v.splitAt(e.Position) }

func (v *compareView) splitAt(p fyne.Position) {
	v.mu.Lock()
	if v.mode != modeSplit {
		v.mu.Unlock()
		return
	}
	sz := v.sizeLocked()
	v.mu.Unlock()
	s := v.Size()
	x, _, fw, _ := fitRect(sz, s.Width, s.Height)
	if fw <= 0 {
		return
	}
	v.SetSplit((p.X - x) / fw)
}

// generate draws the view at w×h pixels.
func (v *compareView) generate(w, h int) image.Image {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.out == nil || v.out.Bounds().Dx() != w || v.out.Bounds().Dy() != h {
		v.out = image.NewNRGBA(image.Rect(0, 0, w, h))
	} else {
		clear(v.out.Pix)
	}
	sz := v.sizeLocked()
	fx, fy, fw, fh := fitRect(sz, float32(w), float32(h))
	r := image.Rect(int(fx+0.5), int(fy+0.5), int(fx+fw+0.5), int(fy+fh+0.5))
	if r.Empty() {
		return v.out
	}
	left, right := v.before, v.after
	switch {
	case v.mode == modeBefore || right == nil:
		right = left
	case v.mode == modeAfter || left == nil:
		left = right
	}
	split := r.Min.X + int(float32(r.Dx())*v.split+0.5)
	if left == right {
		split = r.Max.X
	}
	if a := v.scaledLocked(left, r.Dx(), r.Dy()); a != nil {
		draw.Draw(v.out, image.Rect(r.Min.X, r.Min.Y, split, r.Max.Y), a, image.Pt(0, 0), draw.Src)
	}
	if split < r.Max.X {
		if b := v.scaledLocked(right, r.Dx(), r.Dy()); b != nil {
			draw.Draw(v.out, image.Rect(split, r.Min.Y, r.Max.X, r.Max.Y), b, image.Pt(split-r.Min.X, 0), draw.Src)
		}
	}
	return v.out
}

// scaledLocked returns src at w×h: exact when the sizes match, else from the cache,
// else a fast approximation now and a filtered version shortly after.
func (v *compareView) scaledLocked(src image.Image, w, h int) image.Image {
	if src == nil {
		return nil
	}
	if b := src.Bounds(); b.Dx() == w && b.Dy() == h {
		if b.Min == (image.Point{}) {
			return src
		}
	}
	k := scaleKey{src, w, h}
	if img, ok := v.scaled[k]; ok {
		return img
	}
	if len(v.scaled) > 8 {
		clear(v.scaled)
		clear(v.refined)
	}
	quick := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(quick, quick.Bounds(), src, src.Bounds(), draw.Src, nil)
	v.scaled[k] = quick
	if !v.refined[k] {
		v.refined[k] = true
		go func() {
			fine := image.NewNRGBA(image.Rect(0, 0, w, h))
			draw.BiLinear.Scale(fine, fine.Bounds(), src, src.Bounds(), draw.Src, nil)
			v.mu.Lock()
			if _, still := v.scaled[k]; still {
				v.scaled[k] = fine
			}
			v.mu.Unlock()
			v.do(v.Refresh)
		}()
	}
	return quick
}

func (v *compareView) CreateRenderer() fyne.WidgetRenderer {
	v.raster = canvas.NewRaster(v.generate)
	v.raster.ScaleMode = canvas.ImageScaleFastest
	v.line = canvas.NewRectangle(color.NRGBA{R: 255, G: 255, B: 255, A: 230})
	v.handle = canvas.NewCircle(color.NRGBA{R: 255, G: 255, B: 255, A: 240})
	v.handle.StrokeColor = color.NRGBA{A: 90}
	v.handle.StrokeWidth = 1
	v.tagL = tagText("BEFORE")
	v.tagR = tagText("AFTER")
	v.pillL, v.pillR = tagPill(), tagPill()
	return &compareRenderer{v: v}
}

// tagPill is the dark rounded backing that keeps a tag readable on any photo.
func tagPill() *canvas.Rectangle {
	r := canvas.NewRectangle(color.NRGBA{A: 150})
	r.CornerRadius = 4
	return r
}

func tagText(s string) *canvas.Text {
	t := canvas.NewText(s, color.NRGBA{R: 255, G: 255, B: 255, A: 235})
	t.TextStyle = fyne.TextStyle{Bold: true}
	t.TextSize = theme.CaptionTextSize()
	return t
}

type compareRenderer struct {
	v *compareView
}

func (r *compareRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.v.raster, r.v.line, r.v.handle, r.v.pillL, r.v.tagL, r.v.pillR, r.v.tagR}
}

func (r *compareRenderer) Layout(size fyne.Size) {
	v := r.v
	v.raster.Resize(size)
	v.raster.Move(fyne.NewPos(0, 0))
	v.mu.Lock()
	sz, mode, split := v.sizeLocked(), v.mode, v.split
	hasBefore, hasAfter := v.before != nil, v.after != nil
	named := ""
	if hasBefore && v.named.img == v.before {
		named = v.named.tag
	}
	v.mu.Unlock()
	x, y, fw, fh := fitRect(sz, size.Width, size.Height)
	showSplit := mode == modeSplit && hasBefore && hasAfter && fw > 0
	v.line.Hidden, v.handle.Hidden = !showSplit, !showSplit
	pad := theme.Padding() * 2
	if showSplit {
		sx := x + fw*split
		v.line.Resize(fyne.NewSize(2, fh))
		v.line.Move(fyne.NewPos(sx-1, y))
		d := float32(22)
		v.handle.Resize(fyne.NewSize(d, d))
		v.handle.Move(fyne.NewPos(sx-d/2, y+fh/2-d/2))
	}
	v.tagL.Text, v.tagR.Text = "BEFORE", "AFTER"
	v.tagL.Hidden, v.tagR.Hidden = fw <= 0, fw <= 0
	switch {
	case !hasAfter:
		v.tagL.Text, v.tagR.Hidden = "ORIGINAL", true
	case mode == modeBefore:
		v.tagR.Hidden = true
	case mode == modeAfter:
		v.tagL.Hidden = true
	}
	if named != "" {
		v.tagL.Text = named
	}
	v.tagL.Refresh()
	v.tagR.Refresh()
	place := func(t *canvas.Text, pill *canvas.Rectangle, px float32) {
		ts := t.MinSize()
		pill.Hidden = t.Hidden
		pill.Resize(fyne.NewSize(ts.Width+pad*2, ts.Height+pad))
		pill.Move(fyne.NewPos(px, y+pad))
		t.Move(fyne.NewPos(px+pad, y+pad*1.5))
	}
	place(v.tagL, v.pillL, x+pad)
	rx := x + fw - v.tagR.MinSize().Width - pad*3
	if mode == modeAfter && hasAfter {
		rx = x + pad
	}
	place(v.tagR, v.pillR, rx)
}

func (r *compareRenderer) MinSize() fyne.Size { return r.v.MinSize() }

func (r *compareRenderer) Refresh() {
	r.Layout(r.v.Size())
	r.v.raster.Refresh()
	canvas.Refresh(r.v)
}

func (r *compareRenderer) Destroy() {}
