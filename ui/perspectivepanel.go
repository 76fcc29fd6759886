package ui

import (
	"context"
	"fmt"
	"image"
	"math"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/perspective"
)

// perspectiveEdge is the long edge the perspective preview works at: the model is
// estimated and applied on the reference bracket decoded this small, so a strength
// change shows well within a frame or two of dragging.
const perspectiveEdge = 1024

// perspectiveValues are the scene's perspective options as the panel shows them.
type perspectiveValues struct {
	On       bool
	Strength float64 // 0..1
}

// perspectiveValuesOf reads the options in force for a scene (the shoot's laid
// under its own, the table's defaults under both).
func perspectiveValuesOf(o core.Options) perspectiveValues {
	e := effective(o)
	v := perspectiveValues{On: boolOpt(e.Perspective), Strength: 1}
	if e.PerspectiveStrength != nil {
		v.Strength = math.Max(0, math.Min(1, *e.PerspectiveStrength))
	}
	return v
}

// apply writes the values into the scene's own options own, given what it inherits
// from the shoot (inherited). An option the scene already sets, or one whose value
// differs from the inherited one, is written; one that matches what it inherits and
// was never set stays unset, so the scene keeps following the shoot.
func (v perspectiveValues) apply(own, inherited core.Options) core.Options {
	o := cloneOptions(own)
	in := perspectiveValuesOf(inherited)
	if o.Perspective != nil || v.On != in.On {
		on := v.On
		o.Perspective = &on
	}
	if o.PerspectiveStrength != nil || v.Strength != in.Strength {
		s := v.Strength
		o.PerspectiveStrength = &s
	}
	return o
}

// perspectivePanel is the Adjust tab's Perspective section: the scene's
// "Straighten verticals" option, its strength in per cent, and a line saying what the
// correction does to the frame (the corrected frame itself is shown in the compare
// view). Changing either calls onChange with the new values (UI goroutine).
type perspectivePanel struct {
	root     fyne.CanvasObject
	check    *widget.Check
	strength *widget.Slider
	value    *widget.Label
	note     *widget.Label
	values   perspectiveValues
	quiet    bool
	onChange func(perspectiveValues)
}

func newPerspectivePanel(onChange func(perspectiveValues)) *perspectivePanel {
	p := &perspectivePanel{values: perspectiveValues{Strength: 1}, onChange: onChange}
	p.value = widget.NewLabel("100 %")
	p.strength = widget.NewSlider(0, 100)
	p.strength.Step = 1
	p.strength.SetValue(100)
	p.strength.OnChanged = func(x float64) {
		setText(p.value, fmt.Sprintf("%.0f %%", x))
		if p.quiet {
			return
		}
		p.values.Strength = x / 100
		p.changed()
	}
	p.check = widget.NewCheck("Straighten verticals", func(on bool) {
		p.enableStrength()
		if p.quiet {
			return
		}
		p.values.On = on
		p.changed()
	})
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.Importance = widget.LowImportance
	p.enableStrength()
	// Compact: the check and the strength share a row, so the section costs the
	// sliders below it little height.
	p.root = container.NewVBox(
		widget.NewLabelWithStyle("Perspective", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		container.NewBorder(nil, nil, p.check, p.value, p.strength),
		p.note)
	return p
}

func (p *perspectivePanel) changed() {
	if p.onChange != nil {
		p.onChange(p.values)
	}
}

// enableStrength leaves the strength to move only while the correction is on.
func (p *perspectivePanel) enableStrength() {
	if p.check.Checked {
		p.strength.Enable()
	} else {
		p.strength.Disable()
	}
}

// Object is the section's canvas object.
func (p *perspectivePanel) Object() fyne.CanvasObject { return p.root }

// Values returns the panel's values.
func (p *perspectivePanel) Values() perspectiveValues { return p.values }

// Set shows v without calling onChange (UI goroutine).
func (p *perspectivePanel) Set(v perspectiveValues) {
	p.quiet = true
	defer func() { p.quiet = false }()
	p.values = v
	p.check.SetChecked(v.On)
	p.strength.SetValue(math.Round(v.Strength * 100))
	setText(p.value, fmt.Sprintf("%.0f %%", math.Round(v.Strength*100)))
	p.enableStrength()
}

// SetNote shows what the correction does (or why there is none).
func (p *perspectivePanel) SetNote(s string) { setText(p.note, s) }

// straightened is one perspective preview: the reference bracket at about
// perspectiveEdge with the correction applied (or as shot), and its one-line note.
type straightened struct {
	Scene  int
	Values perspectiveValues
	Image  *image.NRGBA
	Result perspective.Result // zero when the correction is off
	Note   string
	Took   time.Duration // from the request to the image
}

// straightener renders perspective previews off the UI goroutine. The newest request
// wins: it cancels the one before. The reference decoded small and the model
// estimated on it are kept per scene (the model for every scene seen, the image for
// the last one), so a strength change costs one warp.
type straightener struct {
	base context.Context // the window's: loads end with it
	busy *sync.WaitGroup // counts the goroutines, so the window waits for them on close

	mu     sync.Mutex
	cancel context.CancelFunc
	models map[string]perspective.Model // by reference path
	// load is the scene loading now or last, shared by the requests that need it, so
	// a cancelled strength change does not throw away a half-done estimate.
	load *sceneLoad
}

type sceneLoad struct {
	ref   string
	stop  context.CancelFunc
	done  chan struct{}
	small *imaging.Image
	model perspective.Model
	err   error
}

func newStraightener(base context.Context, busy *sync.WaitGroup) *straightener {
	return &straightener{base: base, busy: busy, models: map[string]perspective.Model{}}
}

// Request renders scene id (reference bracket ref) at v and hands the result to show
// on a background goroutine, unless a newer request or ctx ends it first.
func (s *straightener) Request(ctx context.Context, id int, ref string, v perspectiveValues, show func(straightened)) {
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.cancel = cancel
	ld := s.loadLocked(ref)
	s.mu.Unlock()
	asked := time.Now()
	s.busy.Add(1)
	go func() {
		defer s.busy.Done()
		defer cancel()
		out, err := s.render(ctx, ld, v)
		if ctx.Err() != nil {
			return // a newer request took over
		}
		if err != nil {
			out.Note = "No perspective preview: " + err.Error()
		}
		out.Scene, out.Values, out.Took = id, v, time.Since(asked)
		show(out)
	}()
}

// loadLocked returns the load of ref, starting one when it is not the current
// scene's or the last one failed. It runs under the window's lifetime rather than
// the request's: a newer request of the same scene waits for it instead of starting
// over. A load of another scene is cancelled.
func (s *straightener) loadLocked(ref string) *sceneLoad {
	if ld := s.load; ld != nil && ld.ref == ref {
		select {
		case <-ld.done:
			if ld.err == nil {
				return ld
			}
		default:
			return ld
		}
	}
	if s.load != nil {
		s.load.stop()
	}
	ctx, stop := context.WithCancel(s.base)
	ld := &sceneLoad{ref: ref, stop: stop, done: make(chan struct{})}
	model, known := s.models[ref]
	s.load = ld
	s.busy.Add(1)
	go func() {
		defer s.busy.Done()
		defer close(ld.done)
		small, _, err := codec.DecodeFile(ref, codec.DecodeOptions{ScaleToMaxEdge: perspectiveEdge, MaxPixels: -1})
		if err != nil {
			ld.err = err
			return
		}
		ld.small = small
		if !known {
			model, err = perspective.Estimate(ctx, small)
			if err != nil {
				ld.err = err
				return
			}
			s.mu.Lock()
			s.models[ref] = model
			s.mu.Unlock()
		}
		ld.model = model
	}()
	return ld
}

// render waits for the scene's load and applies the model at v.
func (s *straightener) render(ctx context.Context, ld *sceneLoad, v perspectiveValues) (straightened, error) {
	select {
	case <-ctx.Done():
		return straightened{}, ctx.Err()
	case <-ld.done:
	}
	if ld.err != nil {
		return straightened{}, ld.err
	}
	if !v.On {
		return straightened{Image: ld.small.ToNRGBA(), Note: "Straighten verticals is off: the frame as shot."}, nil
	}
	out, res, err := straighten(ctx, ld.small, ld.model, v.Strength)
	if err != nil {
		return straightened{}, err
	}
	return straightened{Image: out.ToNRGBA(), Result: res, Note: perspectiveNote(res)}, nil
}

// straighten applies model m to img at strength within the limits delivered photos
// are corrected within, so the preview shows what the full render will make.
func straighten(ctx context.Context, img *imaging.Image, m perspective.Model, strength float64) (*imaging.Image, perspective.Result, error) {
	return perspective.ApplyWith(ctx, img, m, strength, perspective.SafeLimits)
}

// perspectiveNote says in one line what a correction did.
func perspectiveNote(r perspective.Result) string {
	kept := fmt.Sprintf("%.0f %% of the frame kept", 100*r.Frame.KeptArea)
	switch {
	case !r.Applied && r.Reason != "":
		return "Left as shot: " + r.Reason + "."
	case !r.Applied:
		return "Left as shot."
	case r.Limited:
		return fmt.Sprintf("%.1f° of %.1f° straightened, %s (a full correction would mean %s).",
			r.RotationDeg, r.FullRotationDeg, kept, r.Limit)
	}
	return fmt.Sprintf("%.1f° straightened, %s.", r.RotationDeg, kept)
}
