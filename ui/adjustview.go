package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"fyne.io/fyne/v2"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/adjust"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// adjustView drives the sliders of the scene the detail view shows: it loads the
// scene's preview base (its newest version's image before the sliders, kept by the
// pipeline), renders every slider move over it off the UI goroutine, shows the
// result as the "after" image, and keeps the values as the scene's options. The
// full-size render is a new version of the scene, processed when the photographer
// asks for it. Its Perspective section (perspectivePanel) straightens the scene's
// reference bracket at the chosen strength and shows it as the "before".
type adjustView struct {
	w     *Window
	panel *sliderPanel

	sceneID int
	orderID string       // the version the base belongs to
	base    sliderValues // the sliders the base already carries
	pv      *previewer
	stop    context.CancelFunc
	full    image.Point
	before  image.Image

	// onPreview shows a rendered preview (UI goroutine); took is from the move.
	onPreview func(img image.Image, full image.Point, took time.Duration)
	clip      sliderValues       // copied settings, for paste
	clipPersp *perspectiveValues // and the perspective copied with them

	persp    *perspectivePanel
	straight *straightener
	// straightened is the reference as the perspective section shows it (corrected,
	// or as shot when turned off), once the section has been used on the scene: it is
	// the compare view's "before" until the scene changes.
	straightened image.Image
	perspFrom    perspectiveValues // the scene's perspective options the section last read
	// onStraightened is told of each perspective preview shown (UI goroutine).
	onStraightened func(straightened)
}

func newAdjustView(w *Window) *adjustView {
	a := &adjustView{w: w}
	a.panel = newSliderPanel(a.moved, sliderActions{
		Render:     a.renderFull,
		Copy:       a.copySettings,
		Paste:      a.paste,
		ApplyAll:   a.applyAll,
		SavePreset: a.savePreset,
	})
	a.persp = newPerspectivePanel(a.straighten)
	a.straight = newStraightener(w.ctx, &w.busy)
	a.panel.AddSection(a.persp.Object())
	return a
}

// Object is the panel.
func (a *adjustView) Object() fyne.CanvasObject { return a.panel.Object() }

// show points the sliders at scene s (UI goroutine): its own slider options, and the
// preview base of its newest finished version, loaded in the background when it
// changed.
func (a *adjustView) show(s Scene) {
	done := s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderCompleted
	ran := catalog.Merge(a.w.shoot.Options(), s.Overrides)
	if s.Phase != PhaseDraft && len(s.Versions) > 0 {
		ran = s.Versions[len(s.Versions)-1].Options // what the version shown was made with
	}
	pv := perspectiveValuesOf(ran)
	if s.ID != a.sceneID {
		a.sceneID = s.ID
		a.panel.Set(sliderValuesOf(s.Overrides))
		a.persp.Set(pv)
		a.persp.SetNote("")
		a.straightened, a.perspFrom = nil, pv
	} else if pv != a.perspFrom {
		// The scene's options changed elsewhere (the Scene tab, a preset): they win
		// over what the section held, and a shown preview is brought up to date.
		a.perspFrom = pv
		if pv != a.persp.Values() {
			a.persp.Set(pv)
			if a.straightened != nil {
				a.straighten(pv)
			}
		}
	}
	if !done {
		a.close()
		a.panel.SetNote("The sliders preview a processed scene; process it first. Values set now are used when it is processed.")
		return
	}
	if s.OrderID == a.orderID && a.pv != nil {
		return
	}
	a.close()
	a.orderID = s.OrderID
	a.panel.SetNote("Loading the preview…")
	ctx, cancel := context.WithCancel(a.w.ctx)
	a.stop = cancel
	id, order, out, ref := s.ID, s.OrderID, s.Summary.OutputAssetID, s.Reference()
	a.w.busy.Add(1)
	go func() {
		defer a.w.busy.Done()
		base, carried, full, note, err := a.loadBase(ctx, order, out)
		var before image.Image
		if err == nil {
			before, _ = decodeFile(ref, adjust.PreviewEdge)
		}
		var pv *previewer
		if err == nil {
			pv, err = newPreviewer(ctx, base, func(img image.Image, took time.Duration) {
				// The view scales what it holds in the background; it gets its own
				// copy, and the previewer keeps its buffers.
				img = cloneNRGBA(img.(*image.NRGBA))
				a.w.do(func() {
					if a.sceneID == id && a.onPreview != nil {
						a.onPreview(img, a.full, took)
					}
				})
			})
		}
		a.w.do(func() {
			if ctx.Err() != nil || a.sceneID != id {
				return
			}
			if err != nil {
				a.panel.SetNote("No preview: " + err.Error())
				return
			}
			if a.straightened != nil {
				before = a.straightened // the perspective section's frame stays
			}
			a.pv, a.base, a.before = pv, carried, before
			a.full = full
			a.panel.SetNote(note)
			pv.Request(a.panel.Values().settings(carried)) // the scene as the sliders stand
		})
	}()
}

// loadBase reads the version's preview base; an order run before the window kept
// bases has its delivered photo as the base, with its own sliders carried.
// It also returns the delivered photo's full size, for the 100 % view.
func (a *adjustView) loadBase(ctx context.Context, orderID, outputID string) (*imaging.Image, sliderValues, image.Point, string, error) {
	rec, err := a.w.deps.Engine.OrderRecord(ctx, a.w.owner, orderID)
	if err != nil {
		return nil, nil, image.Point{}, "", err
	}
	f, asset, err := a.w.deps.Assets.Open(outputID)
	if err != nil {
		return nil, nil, image.Point{}, "", err
	}
	defer f.Close()
	full := image.Pt(asset.Width, asset.Height)
	if dir := a.w.deps.PreviewDir; dir != "" {
		base, err := pipeline.LoadPreviewBase(dir, orderID)
		if err == nil {
			return base, nil, full, "Previewing this version. Render full size makes a new version with these settings.", nil
		}
		if !errors.Is(err, pipeline.ErrNoPreviewBase) {
			return nil, nil, image.Point{}, "", err
		}
	}
	img, _, err := codec.Decode(f, asset.Size, codec.DecodeOptions{ScaleToMaxEdge: adjust.PreviewEdge, MaxPixels: -1})
	if err != nil {
		return nil, nil, image.Point{}, "", fmt.Errorf("the result does not decode: %w", err)
	}
	return img, sliderValuesOfResolved(rec.Resolved), full,
		"Previewing over the delivered photo (this version kept no preview base); the full-size render is exact.", nil
}

func (a *adjustView) close() {
	if a.stop != nil {
		a.stop()
	}
	a.stop, a.pv, a.orderID = nil, nil, ""
}

// moved previews the values; a draft keeps them as its options at once, a
// processed scene when it is rendered again (Render full size).
func (a *adjustView) moved(v sliderValues) {
	if s, ok := a.w.shoot.Get(a.sceneID); ok && s.Phase == PhaseDraft {
		_ = a.w.shoot.SetOverrides(a.sceneID, v.apply(s.Overrides))
	}
	if a.pv != nil {
		a.pv.Request(v.settings(a.base))
	}
}

// renderFull processes the scene again with the sliders: a new version, full size.
func (a *adjustView) renderFull() {
	s, ok := a.w.shoot.Get(a.sceneID)
	if !ok {
		return
	}
	o := a.panel.Values().apply(s.Overrides)
	o = a.persp.Values().apply(o, a.w.shoot.Options())
	a.w.reprocessWith(a.sceneID, o)
}

// straighten previews the perspective section's values over the scene's reference
// bracket; a draft keeps them as its options at once, a processed scene when it is
// rendered again.
func (a *adjustView) straighten(v perspectiveValues) {
	s, ok := a.w.shoot.Get(a.sceneID)
	if !ok {
		return
	}
	if s.Phase == PhaseDraft {
		o := v.apply(s.Overrides, a.w.shoot.Options())
		a.perspFrom = perspectiveValuesOf(catalog.Merge(a.w.shoot.Options(), o))
		_ = a.w.shoot.SetOverrides(a.sceneID, o)
	}
	ref := s.Reference()
	if ref == "" {
		a.persp.SetNote("No perspective preview: the scene has no photo.")
		return
	}
	id := s.ID
	a.straight.Request(a.w.ctx, id, ref, v, func(r straightened) {
		a.w.do(func() { a.showStraightened(r) })
	})
}

// showStraightened shows a perspective preview as the scene's "before", or as the
// whole view while the scene has no result (UI goroutine).
func (a *adjustView) showStraightened(r straightened) {
	if r.Scene != a.sceneID || r.Values != a.persp.Values() {
		return // the scene or the values moved on; a newer preview follows
	}
	a.persp.SetNote(r.Note)
	if r.Image == nil {
		return
	}
	a.straightened, a.before = r.Image, r.Image
	if a.w.selected == r.Scene && a.w.detail != nil {
		c := a.w.detail.compare
		var after image.Image
		var full image.Point
		if s, ok := a.w.shoot.Get(r.Scene); ok && s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderCompleted {
			c.mu.Lock()
			after, full = c.after, c.full
			c.mu.Unlock()
		}
		tag := ""
		if r.Result.Applied {
			tag = "STRAIGHTENED"
		}
		c.NameImage(r.Image, tag)
		c.SetImages(r.Image, after, full)
	}
	if a.onStraightened != nil {
		a.onStraightened(r)
	}
}

// copySettings keeps the sliders and the perspective of this scene for Paste.
func (a *adjustView) copySettings() {
	a.clip = a.panel.Values()
	pv := a.persp.Values()
	a.clipPersp = &pv
	a.w.setStatus("Copied the sliders and the perspective of this scene.")
}

func (a *adjustView) paste() {
	if a.clip == nil {
		a.w.setStatus("Copy the settings of a scene first.")
		return
	}
	a.panel.Set(a.clip)
	a.moved(a.panel.Values())
	if a.clipPersp != nil {
		a.persp.Set(*a.clipPersp)
		a.straighten(*a.clipPersp)
	}
}

// applyAll gives every scene of the shoot not processed yet these sliders and this
// perspective, as their options; a processed scene keeps its own until it is
// adjusted (its result would not match them otherwise).
func (a *adjustView) applyAll() {
	v, pv := a.panel.Values(), a.persp.Values()
	n := 0
	for _, s := range a.w.shoot.Scenes() {
		o := pv.apply(v.apply(s.Overrides), a.w.shoot.Options())
		if err := a.w.shoot.SetOverrides(s.ID, o); err == nil {
			n++
		}
	}
	a.w.setStatus(fmt.Sprintf("Applied these sliders and this perspective to %d %s not processed yet; a processed scene keeps its own until you adjust it.",
		n, plural(n, "scene", "scenes")))
	a.w.refresh()
}

func (a *adjustView) savePreset() {
	s, ok := a.w.shoot.Get(a.sceneID)
	if !ok {
		return
	}
	base := catalog.Merge(a.w.shoot.Options(), s.Overrides)
	o := a.persp.Values().apply(a.panel.Values().apply(base), core.Options{})
	a.w.savePresetDialog(o, nil)
}

func cloneNRGBA(src *image.NRGBA) *image.NRGBA {
	dst := image.NewNRGBA(src.Rect)
	copy(dst.Pix, src.Pix)
	return dst
}
