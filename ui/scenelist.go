package ui

import (
	"fmt"
	"image"
	"image/color"
	"path/filepath"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
)

// The scene list (left) and the overview grid (centre) are virtualised: only the
// rows on screen exist, and binding a row reads one scene and a cached thumbnail.

// sceneThumb returns the preview of a scene: its result once completed, else its
// reference bracket. A miss schedules a load and answers nil.
func (w *Window) sceneThumb(s Scene) (image.Image, bool) {
	if s.Phase == PhaseSubmitted && s.Summary.OutputAssetID != "" {
		id := s.Summary.OutputAssetID
		owner := w.shootOwner() // a hot folder's results are its owner's
		if img, failed := w.thumbs.Get("asset:"+id, func() (image.Image, error) {
			return assetThumb(w.deps.Assets, owner, id)
		}); img != nil || failed {
			return img, failed
		}
		// Show the original until the result's thumbnail is there.
	}
	ref := s.Reference()
	if ref == "" {
		return nil, true
	}
	return w.thumbs.Get("file:"+ref, func() (image.Image, error) { return fileThumb(ref) })
}

// sceneStatus is the one-line state of a scene for people.
func (w *Window) sceneStatus(s Scene) string {
	n := len(s.Files)
	brackets := fmt.Sprintf("%d %s", n, plural(n, "photo", "brackets"))
	if k := len(s.SetAside); k > 0 {
		brackets += fmt.Sprintf(" (%d set aside)", k)
	}
	switch s.Phase {
	case PhaseDraft:
		if s.Problem != "" {
			return "⚠ " + s.Problem
		}
		ready, failed, reasons := w.importProgress(s)
		switch {
		case failed > 0:
			return "⚠ cannot import " + reasons[0]
		case ready < n:
			return fmt.Sprintf("%s · importing %d/%d", brackets, ready, n)
		}
		return withWarning(brackets+" · ready to process", s)
	case PhasePreparing:
		ready, _, _ := w.importProgress(s)
		if ready < n {
			return fmt.Sprintf("Importing %d/%d…", ready, n)
		}
		return "Submitting…"
	case PhaseRefused:
		return "Not processed: " + s.Problem
	}
	sum := s.Summary
	switch sum.Status {
	case core.OrderPending:
		if st := sum.ProgressStage; st != "" && st != "queued" {
			return "Queued · " + stageText(st)
		}
		return "Queued"
	case core.OrderRunning:
		t := fmt.Sprintf("%s · %.0f%%", stageText(sum.ProgressStage), sum.ProgressPercent)
		if sum.ETASeconds != nil {
			t += " · " + etaText(*sum.ETASeconds)
		}
		return t
	case core.OrderCompleted:
		if s.Problem != "" {
			return "Done · ⚠ " + s.Problem
		}
		if s.Saved != "" {
			return withWarning("Done · "+filepath.Base(s.Saved), s)
		}
		return withWarning("Done", s)
	case core.OrderFailed:
		if sum.Error != "" {
			return "Failed: " + sum.Error
		}
		return "Failed"
	case core.OrderCancelled:
		return "Cancelled"
	case core.OrderExpired:
		return "Expired before it could run"
	}
	return string(sum.Status)
}

// withWarning adds the scene's warning (brackets it lost) to a status line.
func withWarning(line string, s Scene) string {
	if s.Warning == "" {
		return line
	}
	return line + " · ⚠ " + s.Warning
}

// stageText turns a pipeline stage name into words.
func stageText(stage string) string {
	if stage == "" {
		return "starting"
	}
	return strings.ReplaceAll(stage, "_", " ")
}

// sceneRow is one row of the scene list.
type sceneRow struct {
	widget.BaseWidget
	w      *Window
	id     int
	thumb  *canvas.Image
	frame  *canvas.Rectangle
	dot    *canvas.Circle
	name   *widget.Label
	status *widget.Label
	bar    *thinBar
	cancel *widget.Button
	dragDY float32 // how far a drag moved the row (sceneactions.go)
}

func newSceneRow(w *Window) *sceneRow {
	r := &sceneRow{w: w}
	r.thumb = canvas.NewImageFromImage(nil)
	r.thumb.FillMode = canvas.ImageFillCover
	r.thumb.ScaleMode = canvas.ImageScaleSmooth
	r.thumb.CornerRadius = 4
	r.frame = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	r.frame.CornerRadius = 4
	r.dot = canvas.NewCircle(idleGrey)
	r.name = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	r.name.Truncation = fyne.TextTruncateEllipsis
	r.status = widget.NewLabel("")
	r.status.Truncation = fyne.TextTruncateEllipsis
	r.status.SizeName = theme.SizeNameCaptionText
	r.bar = newThinBar()
	r.cancel = widget.NewButtonWithIcon("", theme.CancelIcon(), func() { w.cancelScene(r.id) })
	r.cancel.Importance = widget.LowImportance
	r.ExtendBaseWidget(r)
	return r
}

func (r *sceneRow) CreateRenderer() fyne.WidgetRenderer {
	thumb := container.NewGridWrap(fyne.NewSize(84, 56), container.NewStack(r.frame, r.thumb))
	dot := container.NewGridWrap(fyne.NewSize(10, 10), r.dot)
	nameRow := container.NewBorder(nil, nil, container.NewCenter(dot), nil, r.name)
	text := container.New(&tightVBox{}, nameRow, r.status, r.bar)
	return widget.NewSimpleRenderer(container.NewBorder(nil, nil, container.NewCenter(thumb), container.NewCenter(r.cancel), text))
}

func (r *sceneRow) bind(s Scene) {
	r.id = s.ID
	setText(r.name, s.Name)
	setText(r.status, r.w.sceneStatus(s))
	r.dot.FillColor = statusColor(s)
	r.dot.Refresh()
	img, _ := r.w.sceneThumb(s)
	if r.thumb.Image != img {
		r.thumb.Image = img
		r.thumb.Refresh()
	}
	switch {
	case s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderRunning:
		r.bar.SetValue(s.Summary.ProgressPercent / 100)
		r.bar.Show()
	case s.Phase == PhasePreparing || (s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderPending):
		r.bar.SetValue(0)
		r.bar.Show()
	default:
		r.bar.Hide()
	}
	if s.Active() {
		r.cancel.Show()
	} else {
		r.cancel.Hide()
	}
}

func (w *Window) buildList() *widget.List {
	l := widget.NewList(
		func() int { return w.shoot.Len() },
		func() fyne.CanvasObject { return newSceneRow(w) },
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if s, ok := w.shoot.At(i); ok {
				o.(*sceneRow).bind(s)
			}
		},
	)
	l.OnSelected = func(i widget.ListItemID) {
		if s, ok := w.shoot.At(i); ok && s.ID != w.selected {
			w.selectScene(s.ID)
		}
	}
	return l
}

// sceneCard is one tile of the overview grid.
type sceneCard struct {
	widget.BaseWidget
	w     *Window
	id    int
	thumb *canvas.Image
	back  *canvas.Rectangle
	dot   *canvas.Circle
	name  *widget.Label
}

func newSceneCard(w *Window) *sceneCard {
	c := &sceneCard{w: w}
	c.thumb = canvas.NewImageFromImage(nil)
	c.thumb.FillMode = canvas.ImageFillCover
	c.thumb.ScaleMode = canvas.ImageScaleSmooth
	c.thumb.CornerRadius = 6
	c.back = canvas.NewRectangle(theme.Color(theme.ColorNameInputBackground))
	c.back.CornerRadius = 6
	c.dot = canvas.NewCircle(idleGrey)
	c.name = widget.NewLabel("")
	c.name.Truncation = fyne.TextTruncateEllipsis
	c.name.SizeName = theme.SizeNameCaptionText
	c.ExtendBaseWidget(c)
	return c
}

func (c *sceneCard) CreateRenderer() fyne.WidgetRenderer {
	dot := container.NewGridWrap(fyne.NewSize(9, 9), c.dot)
	label := container.NewBorder(nil, nil, container.NewCenter(dot), nil, c.name)
	pic := container.NewStack(c.back, c.thumb)
	return widget.NewSimpleRenderer(container.NewBorder(nil, label, nil, nil, pic))
}

// Tapped opens the scene.
func (c *sceneCard) Tapped(*fyne.PointEvent) { c.w.selectScene(c.id) }

func (c *sceneCard) bind(s Scene) {
	c.id = s.ID
	setText(c.name, s.Name)
	c.dot.FillColor = statusColor(s)
	c.dot.Refresh()
	img, _ := c.w.sceneThumb(s)
	if c.thumb.Image != img {
		c.thumb.Image = img
		c.thumb.Refresh()
	}
}

func (w *Window) buildGrid() *widget.GridWrap {
	return widget.NewGridWrap(
		func() int { return w.shoot.Len() },
		func() fyne.CanvasObject {
			c := newSceneCard(w)
			return container.NewGridWrap(fyne.NewSize(228, 176), c)
		},
		func(i widget.GridWrapItemID, o fyne.CanvasObject) {
			if s, ok := w.shoot.At(i); ok {
				o.(*fyne.Container).Objects[0].(*sceneCard).bind(s)
			}
		},
	)
}

func (w *Window) buildOverview() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("Overview", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	hint := widget.NewLabel("Click a scene to compare before and after.")
	hint.Importance = widget.LowImportance
	return container.NewBorder(container.NewHBox(title, hint), nil, nil, nil, w.grid)
}

// thinBar is a slim progress bar for list rows.
type thinBar struct {
	widget.BaseWidget
	value float64
	track *canvas.Rectangle
	fill  *canvas.Rectangle
}

func newThinBar() *thinBar {
	b := &thinBar{
		track: canvas.NewRectangle(color.NRGBA{R: 0x80, G: 0x80, B: 0x80, A: 0x40}),
		fill:  canvas.NewRectangle(theme.Color(theme.ColorNamePrimary)),
	}
	b.track.CornerRadius, b.fill.CornerRadius = 2, 2
	b.ExtendBaseWidget(b)
	return b
}

// SetValue sets the fraction done (0..1).
func (b *thinBar) SetValue(v float64) {
	v = min(max(v, 0), 1)
	if v == b.value {
		return
	}
	b.value = v
	b.Refresh()
}

func (b *thinBar) CreateRenderer() fyne.WidgetRenderer { return &thinBarRenderer{b: b} }

type thinBarRenderer struct{ b *thinBar }

func (r *thinBarRenderer) Layout(s fyne.Size) {
	r.b.track.Resize(s)
	r.b.fill.Resize(fyne.NewSize(s.Width*float32(r.b.value), s.Height))
}

func (r *thinBarRenderer) MinSize() fyne.Size { return fyne.NewSize(40, 4) }

func (r *thinBarRenderer) Refresh() {
	r.b.fill.FillColor = theme.Color(theme.ColorNamePrimary)
	r.Layout(r.b.Size())
	canvas.Refresh(r.b)
}

func (r *thinBarRenderer) Objects() []fyne.CanvasObject {
	return []fyne.CanvasObject{r.b.track, r.b.fill}
}

func (r *thinBarRenderer) Destroy() {}

// tightVBox stacks objects with no padding, for dense rows.
type tightVBox struct{}

func (tightVBox) MinSize(objs []fyne.CanvasObject) fyne.Size {
	var s fyne.Size
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		m := o.MinSize()
		s.Width = max(s.Width, m.Width)
		s.Height += m.Height
	}
	return s
}

func (tightVBox) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	y := float32(0)
	for _, o := range objs {
		if !o.Visible() {
			continue
		}
		h := o.MinSize().Height
		o.Resize(fyne.NewSize(size.Width, h))
		o.Move(fyne.NewPos(0, y))
		y += h
	}
}
