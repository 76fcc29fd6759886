package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"golang.org/x/image/draw"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/inpaint"
)

// previewFillEdge is the long edge the preview fill runs at: quick enough to wait
// for, large enough to judge the fill by.
const previewFillEdge = 1024

// genEditEraser is gen_edit's value for the magic eraser.
const genEditEraser = catalog.GenMagicEraser

// brushEditor is the brush for one scene with its tools: paint or erase, brush
// size, undo and redo, zoom, and a preview of the fill. The photo is the reference
// bracket of a scene not yet processed, or the delivered result of a finished one.
type brushEditor struct {
	w     *Window
	id    int    // the scene
	name  string // the scene's name
	key   string // the photo painted on (see Window.maskPath)
	path  string // the bracket, or "" for the result
	asset string // the result's asset id, or ""
	maskA string // the scene's mask asset when the brush opened

	view    *brushView // nil until the photo is loaded
	body    *fyne.Container
	info    *widget.Label
	mode    *widget.RadioGroup
	size    *widget.Slider
	sizeTxt *widget.Label
	undo    *widget.Button
	redo    *widget.Button
	clear   *widget.Button
	fill    *widget.Button
	tools   []fyne.Disableable
	root    fyne.CanvasObject
	syncing bool

	fillCancel context.CancelFunc
	fillGen    int // bumped by every mask change, so a late fill is dropped

	onLoaded func(error) // called on the UI goroutine once the photo is shown
}

// canPaint says whether the brush opens on the scene: while it waits (its bracket)
// or once finished (its result), not while it is being processed.
func canPaint(s Scene) bool {
	if s.Phase == PhaseSubmitted {
		return s.Summary.Status == core.OrderCompleted && s.Summary.OutputAssetID != ""
	}
	return s.Phase != PhasePreparing && s.Reference() != ""
}

func newBrushEditor(w *Window, id int) (*brushEditor, error) {
	s, ok := w.shoot.Get(id)
	if !ok {
		return nil, fmt.Errorf("scene %d is not in the shoot", id)
	}
	if !canPaint(s) {
		return nil, fmt.Errorf("%s is being processed; paint its mask once it is done or cancelled", s.Name)
	}
	e := &brushEditor{w: w, id: id, name: s.Name}
	if s.Phase == PhaseSubmitted {
		e.asset = s.Summary.OutputAssetID
		e.key = "asset:" + e.asset
	} else {
		e.path = s.Reference()
		e.key = e.path
	}
	if s.Overrides.Mask != nil {
		e.maskA = *s.Overrides.Mask
	}
	e.info = widget.NewLabel("Loading the photo…")
	e.info.Wrapping = fyne.TextWrapWord
	e.info.Importance = widget.LowImportance
	e.mode = widget.NewRadioGroup([]string{"Paint", "Erase"}, func(m string) {
		if e.view != nil && !e.syncing {
			e.view.SetErase(m == "Erase")
		}
	})
	e.mode.Horizontal, e.mode.Required = true, true
	e.mode.SetSelected("Paint")
	e.size = widget.NewSlider(minBrush, 200)
	e.size.Step = 1
	e.size.OnChanged = func(d float64) {
		if e.view != nil && !e.syncing {
			e.view.SetSize(d)
		}
	}
	e.sizeTxt = widget.NewLabel(fmt.Sprintf("%d px", maxBrush))
	sizeTxtBox := container.NewGridWrap(e.sizeTxt.MinSize(), e.sizeTxt) // room for any size, so it never truncates
	e.sizeTxt.SetText("")
	e.undo = widget.NewButtonWithIcon("", theme.ContentUndoIcon(), func() { e.view.Undo() })
	e.redo = widget.NewButtonWithIcon("", theme.ContentRedoIcon(), func() { e.view.Redo() })
	e.clear = widget.NewButtonWithIcon("Clear", theme.ContentClearIcon(), func() { e.view.Clear() })
	fit := widget.NewButtonWithIcon("Fit", theme.ZoomFitIcon(), func() { e.view.Fit() })
	actual := widget.NewButton("100 %", func() { e.view.Actual() })
	e.fill = widget.NewButtonWithIcon("Preview fill", theme.VisibilityIcon(), e.previewFill)
	e.tools = []fyne.Disableable{e.mode, e.size, e.undo, e.redo, e.clear, fit, actual, e.fill}
	for _, t := range e.tools {
		t.Disable()
	}
	sizeBox := container.NewBorder(nil, nil, widget.NewLabel("Brush"), sizeTxtBox, e.size)
	bar := container.NewBorder(nil, nil,
		container.NewHBox(e.mode, widget.NewSeparator(), e.undo, e.redo, e.clear),
		container.NewHBox(fit, actual, widget.NewSeparator(), e.fill), sizeBox)
	e.body = container.NewStack(widget.NewLabel(""))
	e.root = container.NewBorder(bar, e.info, nil, nil, e.body)
	return e, nil
}

// Object is the editor's canvas object.
func (e *brushEditor) Object() fyne.CanvasObject { return e.root }

// load decodes the photo at full resolution and the mask kept for it in the
// background, then shows the brush.
func (e *brushEditor) load() {
	w := e.w
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		var photo image.Image
		var err error
		if e.path != "" {
			photo, err = decodeFile(e.path, 0)
		} else {
			photo, _, err = decodeAsset(w.deps.Assets, e.asset, 0)
		}
		var full, small *image.NRGBA
		var m *paintMask
		if err == nil {
			full = photo.(*image.NRGBA)
			b := full.Bounds()
			if sw, sh := imaging.FitWithin(b.Dx(), b.Dy(), previewEdge); sw != b.Dx() || sh != b.Dy() {
				small = image.NewNRGBA(image.Rect(0, 0, sw, sh))
				draw.BiLinear.Scale(small, small.Bounds(), full, b, draw.Src, nil)
			}
			m, err = w.loadPaintedMask(e.key, e.maskA, b.Dx(), b.Dy())
			if err != nil {
				err = fmt.Errorf("the mask kept for this photo cannot be used (%v); starting afresh", err)
				m = nil
			}
			if m == nil {
				m = newPaintMask(b.Dx(), b.Dy())
			}
		}
		w.do(func() {
			if full == nil {
				e.info.SetText("Cannot show the photo: " + err.Error())
			} else {
				e.show(full, small, m)
				if err != nil {
					e.info.SetText(err.Error())
				}
			}
			if e.onLoaded != nil {
				e.onLoaded(err)
			}
		})
	}()
}

// show puts the brush on the loaded photo (UI goroutine).
func (e *brushEditor) show(full, small *image.NRGBA, m *paintMask) {
	v := newBrushView(full, small, m)
	v.onView = e.syncTools
	v.onMask = e.maskChanged
	e.view = v
	e.size.Max = min(maxBrush, max(50, float64(max(m.w, m.h))/4))
	e.body.Objects = []fyne.CanvasObject{v}
	e.body.Refresh()
	for _, t := range e.tools {
		t.Enable()
	}
	e.syncTools()
	e.maskChanged()
	e.info.SetText("Paint over what to erase. [ and ] change the brush, the wheel zooms, Space or the middle button and a drag pan, Ctrl+Z undoes.")
	if c := fyne.CurrentApp().Driver().CanvasForObject(v); c != nil {
		c.Focus(v)
	}
}

// syncTools shows the brush's size and mode in the toolbar.
func (e *brushEditor) syncTools() {
	v := e.view
	e.syncing = true
	defer func() { e.syncing = false }()
	if e.size.Value != v.size {
		e.size.SetValue(v.size)
	}
	setText(e.sizeTxt, fmt.Sprintf("%d px", int(v.size)))
	mode := "Paint"
	if v.erase {
		mode = "Erase"
	}
	if e.mode.Selected != mode {
		e.mode.SetSelected(mode)
	}
}

// maskChanged drops a preview fill that no longer matches the mask and updates the
// undo buttons.
func (e *brushEditor) maskChanged() {
	e.cancelFill()
	setEnabled(e.undo, len(e.view.mask.undo) > 0)
	setEnabled(e.redo, len(e.view.mask.redo) > 0)
	e.fill.SetText("Preview fill")
}

func (e *brushEditor) cancelFill() {
	e.fillGen++
	if e.fillCancel != nil {
		e.fillCancel()
		e.fillCancel = nil
	}
}

// previewFill runs the built-in eraser on a reduced copy of the photo and shows the
// result, or hides a preview that is showing. A change to the mask cancels it.
func (e *brushEditor) previewFill() {
	v := e.view
	if v == nil {
		return
	}
	if v.preview != nil || e.fillCancel != nil {
		e.cancelFill()
		v.SetPreview(nil)
		e.fill.SetText("Preview fill")
		return
	}
	if !v.mask.Any() {
		e.info.SetText("Paint over what to erase first.")
		return
	}
	ctx, cancel := context.WithCancel(e.w.ctx)
	e.fillCancel = cancel
	e.fillGen++
	gen := e.fillGen
	src := v.small
	if src == nil {
		src = v.photo
	}
	pix, mw, mh := slices.Clone(v.mask.pix), v.mask.w, v.mask.h
	e.fill.SetText("Cancel preview")
	e.info.SetText("Filling the painted area…")
	w := e.w
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		out, err := previewErase(ctx, src, pix, mw, mh, previewFillEdge)
		w.do(func() {
			if gen != e.fillGen {
				return // the mask changed or the preview was cancelled
			}
			cancel()
			e.fillCancel = nil
			if err != nil {
				e.fill.SetText("Preview fill")
				e.info.SetText("The fill cannot be previewed: " + err.Error())
				return
			}
			e.fill.SetText("Hide preview")
			e.info.SetText("The fill, previewed at reduced size. Paint again to change the mask.")
			v.SetPreview(out)
		})
	}()
}

// previewErase fills the marked area of a copy of src reduced to edge pixels on its
// long side with the engine's eraser (inpaint.Erase, the seed the pipeline uses). A
// reduced pixel is erased when any of the mask pixels it covers is, so thin strokes
// survive the reduction.
func previewErase(ctx context.Context, src *image.NRGBA, pix []uint8, mw, mh, edge int) (*image.NRGBA, error) {
	img := imaging.FromImage(src, false)
	pw, ph := imaging.FitWithin(img.W(), img.H(), edge)
	if pw != img.W() || ph != img.H() {
		var err error
		if img, err = imaging.ResizeCtx(ctx, img, pw, ph); err != nil {
			return nil, err
		}
	}
	m := imaging.New(pw, ph, 1)
	for y := range ph {
		y0, y1 := y*mh/ph, max(y*mh/ph+1, (y+1)*mh/ph)
		row := m.Row(y)
		for x := range pw {
			x0, x1 := x*mw/pw, max(x*mw/pw+1, (x+1)*mw/pw)
		block:
			for yy := y0; yy < min(y1, mh); yy++ {
				for _, b := range pix[yy*mw+x0 : yy*mw+min(x1, mw)] {
					if b != 0 {
						row[x] = 1
						break block
					}
				}
			}
		}
	}
	out, err := inpaint.Erase(ctx, img, m, inpaint.Options{Seed: 1})
	if err != nil {
		return nil, err
	}
	return out.ToNRGBA(), nil
}

// close stops a preview under way.
func (e *brushEditor) close() { e.cancelFill() }

// save keeps the painted mask with the scene: the PNG in the data folder, the asset
// in the store and, while the scene waits, its options set to the magic eraser with
// this mask. An empty mask removes the kept one. done, when set, is called on the UI
// goroutine.
func (e *brushEditor) save(done func(error)) {
	w := e.w
	finish := func(err error) {
		if err != nil {
			w.showError(fmt.Errorf("mask: %w", err))
		}
		if done != nil {
			done(err)
		}
	}
	if e.view == nil {
		finish(nil)
		return
	}
	m := &paintMask{w: e.view.mask.w, h: e.view.mask.h, pix: slices.Clone(e.view.mask.pix)}
	if !m.Any() {
		err := os.Remove(w.maskPath(e.key))
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if err == nil && e.path != "" {
			e.setSceneMask("")
		}
		finish(err)
		return
	}
	w.setActivity("Saving the mask…")
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		path, a, err := w.storeMask(e.key, m)
		w.do(func() {
			w.setActivity("")
			if err == nil {
				if e.path != "" && e.setSceneMask(a.ID) {
					w.setStatus("The magic eraser will erase the painted area of " + e.name + ".")
				} else {
					w.setStatus("Mask saved to " + path + " (asset " + a.ID + "); use it as mask through the API.")
				}
			}
			finish(err)
		})
	}()
}

// setSceneMask sets the scene's overrides to erase with mask id ("" drops the mask
// and the eraser); false when the scene can no longer change.
func (e *brushEditor) setSceneMask(id string) bool {
	w := e.w
	s, ok := w.shoot.Get(e.id)
	if !ok || s.Phase != PhaseDraft {
		return false
	}
	o := cloneOptions(s.Overrides)
	if id == "" {
		if o.Mask == nil {
			return true
		}
		o.Mask = nil
		if o.GenEdit != nil && *o.GenEdit == genEditEraser {
			o.GenEdit = nil
		}
	} else {
		ge, mask := genEditEraser, id
		o.GenEdit, o.Mask = &ge, &mask
	}
	if err := w.shoot.SetOverrides(e.id, o); err != nil {
		w.setStatus(err.Error())
		return false
	}
	w.updateSceneForm()
	w.markDirty()
	return true
}

// openBrush opens the brush on scene id in a dialog; "Use mask" keeps the mask with
// the scene.
func openBrush(w *Window, id int) *brushEditor {
	e, err := newBrushEditor(w, id)
	if err != nil {
		w.showError(err)
		return nil
	}
	dlg := dialog.NewCustomConfirm("Paint mask: "+e.name, "Use mask", "Cancel", e.Object(), func(ok bool) {
		e.close()
		if ok {
			e.save(nil)
		}
	}, w.win)
	sz := w.win.Canvas().Size()
	dlg.Resize(fyne.NewSize(sz.Width*0.9, sz.Height*0.9))
	dlg.Show()
	e.load()
	return e
}
