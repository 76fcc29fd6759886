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
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/adjust"
)

// sliderSpec is one slider of the panel: an order option of the one option table.
type sliderSpec struct {
	name, label string
	min, max    float64
	step        float64
}

// sliderSpecs are the panel's sliders, in the order of a raw developer's basic panel.
var sliderSpecs = []sliderSpec{
	{"exposure", "Exposure (EV)", -adjust.MaxExposure, adjust.MaxExposure, 0.05},
	{"temperature", "Temperature", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"tint", "Tint", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"contrast", "Contrast", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"highlights", "Highlights", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"shadows", "Shadows", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"whites", "Whites", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"blacks", "Blacks", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"vibrance", "Vibrance", -adjust.MaxSlider, adjust.MaxSlider, 1},
	{"saturation", "Saturation", -adjust.MaxSlider, adjust.MaxSlider, 1},
}

// sliderField reaches one slider's option in core.Options.
func sliderField(o *core.Options, name string) **float64 {
	switch name {
	case "exposure":
		return &o.Exposure
	case "temperature":
		return &o.Temperature
	case "tint":
		return &o.Tint
	case "contrast":
		return &o.Contrast
	case "highlights":
		return &o.Highlights
	case "shadows":
		return &o.Shadows
	case "whites":
		return &o.Whites
	case "blacks":
		return &o.Blacks
	case "vibrance":
		return &o.Vibrance
	case "saturation":
		return &o.Saturation
	}
	panic("ui: no slider " + name)
}

// sliderValues are the panel's values by option name; absent means 0.
type sliderValues map[string]float64

// sliderValuesOf reads the slider options of o.
func sliderValuesOf(o core.Options) sliderValues {
	v := sliderValues{}
	for _, s := range sliderSpecs {
		if p := *sliderField(&o, s.name); p != nil && *p != 0 {
			v[s.name] = *p
		}
	}
	return v
}

// sliderValuesOfResolved reads the sliders an order ran with.
func sliderValuesOfResolved(r core.Resolved) sliderValues {
	return sliderValues{"exposure": r.Exposure, "temperature": r.Temperature, "tint": r.Tint,
		"contrast": r.Contrast, "highlights": r.Highlights, "shadows": r.Shadows, "whites": r.Whites,
		"blacks": r.Blacks, "vibrance": r.Vibrance, "saturation": r.Saturation}
}

// apply writes the values into o: a moved slider as its value, one at 0 as unset,
// so a scene without sliders keeps inheriting the shoot's.
func (v sliderValues) apply(o core.Options) core.Options {
	o = cloneOptions(o)
	for _, s := range sliderSpecs {
		f := sliderField(&o, s.name)
		if x := v[s.name]; x != 0 {
			*f = &x
		} else {
			*f = nil
		}
	}
	return o
}

// settings turns the values into the adjust package's, minus those of base (the
// sliders the preview's base image already carries), clamped to the ranges.
func (v sliderValues) settings(base sliderValues) adjust.Settings {
	d := func(n string) float64 { return v[n] - base[n] }
	s := adjust.Settings{
		Exposure: d("exposure"), Temperature: d("temperature"), Tint: d("tint"),
		Contrast: d("contrast"), Highlights: d("highlights"), Shadows: d("shadows"),
		Whites: d("whites"), Blacks: d("blacks"), Vibrance: d("vibrance"), Saturation: d("saturation"),
	}
	clamp := func(x *float64, m float64) { *x = math.Max(-m, math.Min(m, *x)) }
	clamp(&s.Exposure, adjust.MaxExposure)
	for _, x := range []*float64{&s.Temperature, &s.Tint, &s.Contrast, &s.Highlights, &s.Shadows,
		&s.Whites, &s.Blacks, &s.Vibrance, &s.Saturation} {
		clamp(x, adjust.MaxSlider)
	}
	return s
}

// previewer renders slider previews off the UI goroutine. Requests coalesce: while
// one render runs, only the newest request waits, so a dragged slider never queues
// up stale frames. Each finished render goes to show (called on the previewer's
// goroutine) with the time since the request it answers.
type previewer struct {
	mu      sync.Mutex
	preview *adjust.Preview
	bufs    [2]*image.NRGBA // double-buffered: the view holds one while the other renders
	next    int
	want    *adjust.Settings
	asked   time.Time
	wake    chan struct{}
	show    func(img image.Image, took time.Duration)
}

// newPreviewer renders over base (linear light, about adjust.PreviewEdge on its long
// edge) until ctx is done.
func newPreviewer(ctx context.Context, base *imaging.Image, show func(image.Image, time.Duration)) (*previewer, error) {
	p, err := adjust.NewPreview(base)
	if err != nil {
		return nil, err
	}
	pv := &previewer{preview: p, wake: make(chan struct{}, 1), show: show}
	for i := range pv.bufs {
		pv.bufs[i] = image.NewNRGBA(image.Rect(0, 0, base.W(), base.H()))
	}
	go pv.loop(ctx)
	return pv, nil
}

// Request asks for a render of s; it never blocks.
func (p *previewer) Request(s adjust.Settings) {
	p.mu.Lock()
	p.want, p.asked = &s, time.Now()
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

func (p *previewer) loop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		p.mu.Lock()
		want, asked := p.want, p.asked
		p.want = nil
		p.mu.Unlock()
		if want == nil {
			continue
		}
		dst := p.bufs[p.next]
		p.next = 1 - p.next
		if err := p.preview.RenderInto(dst, *want); err != nil {
			continue // settings come from the panel's clamped ranges; nothing to show
		}
		p.show(dst, time.Since(asked))
	}
}

// sliderPanel is the re-edit panel of a scene: the ten sliders over a cached preview
// of the develop result, with reset, copy and paste, apply to all and save as preset.
// Moving a slider calls onMove with the new values; the owner previews them and
// keeps them as the scene's options.
type sliderPanel struct {
	root    fyne.CanvasObject
	rows    *fyne.Container // the scrolled sections and sliders
	sliders map[string]*widget.Slider
	labels  map[string]*widget.Label
	values  sliderValues
	quiet   bool // set while the panel itself moves the sliders
	onMove  func(sliderValues)

	render, copyB, paste, all, preset, reset *widget.Button
	note                                     *widget.Label
}

// sliderActions are what the panel's buttons do.
type sliderActions struct {
	Render, Copy, Paste, ApplyAll, SavePreset func()
}

func newSliderPanel(onMove func(sliderValues), act sliderActions) *sliderPanel {
	p := &sliderPanel{sliders: map[string]*widget.Slider{}, labels: map[string]*widget.Label{},
		values: sliderValues{}, onMove: onMove}
	rows := container.NewVBox()
	p.rows = rows
	for _, s := range sliderSpecs {
		s := s
		sl := widget.NewSlider(s.min, s.max)
		sl.Step = s.step
		lbl := widget.NewLabel(s.label)
		val := widget.NewLabel("0")
		sl.OnChanged = func(x float64) {
			setText(val, formatSlider(s, x))
			if p.quiet {
				return
			}
			p.values[s.name] = x
			if p.onMove != nil {
				p.onMove(p.Values())
			}
		}
		p.sliders[s.name], p.labels[s.name] = sl, val
		rows.Add(container.NewBorder(nil, nil, lbl, val))
		rows.Add(sl)
	}
	p.reset = widget.NewButtonWithIcon("Reset", theme.ContentUndoIcon(), func() {
		p.Set(sliderValues{})
		if p.onMove != nil {
			p.onMove(p.Values())
		}
	})
	p.render = widget.NewButtonWithIcon("Render full size", theme.ConfirmIcon(), act.Render)
	p.render.Importance = widget.HighImportance
	p.copyB = widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), act.Copy)
	p.paste = widget.NewButtonWithIcon("Paste", theme.ContentPasteIcon(), act.Paste)
	p.all = widget.NewButton("Apply to all scenes", act.ApplyAll)
	p.preset = widget.NewButtonWithIcon("Save as preset…", theme.DocumentSaveIcon(), act.SavePreset)
	p.note = widget.NewLabel("")
	p.note.Wrapping = fyne.TextWrapWord
	p.note.Importance = widget.LowImportance
	buttons := container.NewVBox(
		container.NewGridWithColumns(2, p.reset, p.render),
		container.NewGridWithColumns(3, p.copyB, p.paste, p.all),
		p.preset, p.note)
	p.root = container.NewBorder(widget.NewLabelWithStyle("Adjust", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		buttons, nil, nil, container.NewVScroll(rows))
	return p
}

func formatSlider(s sliderSpec, x float64) string {
	if s.step < 1 {
		return fmt.Sprintf("%+.2f", x)
	}
	return fmt.Sprintf("%+.0f", x)
}

// Object is the panel's canvas object.
func (p *sliderPanel) Object() fyne.CanvasObject { return p.root }

// Values returns a copy of the panel's values.
func (p *sliderPanel) Values() sliderValues {
	out := sliderValues{}
	for k, v := range p.values {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// Set moves the sliders to v without calling onMove (UI goroutine).
func (p *sliderPanel) Set(v sliderValues) {
	p.quiet = true
	defer func() { p.quiet = false }()
	p.values = sliderValues{}
	for _, s := range sliderSpecs {
		p.values[s.name] = v[s.name]
		p.sliders[s.name].SetValue(v[s.name])
		setText(p.labels[s.name], formatSlider(s, v[s.name]))
	}
}

// AddSection puts a section above the sliders, in their scroll, so it shows without
// scrolling (geometry before tone, as a raw developer's panels go).
func (p *sliderPanel) AddSection(obj fyne.CanvasObject) {
	p.rows.Objects = append([]fyne.CanvasObject{obj, widget.NewSeparator()}, p.rows.Objects...)
	p.rows.Refresh()
}

// SetNote shows a line under the buttons (where the preview comes from, how fast).
func (p *sliderPanel) SetNote(s string) { setText(p.note, s) }
