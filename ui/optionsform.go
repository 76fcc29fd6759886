package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// optionsForm is the order options panel, generated from catalog.Params(): booleans
// as checks, enums and preset keys as selects, bounded numbers as sliders, lists as
// check groups. It edits "own" options laid over "base" ones: for the shoot, base is
// empty and own are the shoot's defaults; for a scene, base are the shoot's defaults
// and own its overrides, which are marked and can be reset one by one.
type optionsForm struct {
	scene     bool                  // a scene's overrides rather than the shoot's defaults
	base      core.Options          // inherited values
	own       core.Options          // values set in this form
	single    bool                  // options go to a single order (style text allowed)
	available func(string) bool     // feature availability, for gen_edit's choices
	onChange  func(core.Options)    // called with own after every change by the user
	pickMask  func(func(id string)) // asks the user for a mask, nil when unsupported

	fields   map[string]*optionField
	order    []string
	problem  *widget.Label
	content  *fyne.Container
	disabled bool
	updating bool // widgets are being set from values; ignore their callbacks
}

// optionField is one option's row.
type optionField struct {
	p       catalog.Param
	label   *widget.Label
	hint    *widget.Label
	reset   *widget.Button
	row     *fyne.Container
	show    func(v any) // sets the widget from a value (nil: the table's default)
	enable  func(bool)
	focusOn fyne.Focusable
}

func newOptionsForm(scene bool, available func(string) bool, onChange func(core.Options)) *optionsForm {
	f := &optionsForm{scene: scene, available: available, onChange: onChange, fields: map[string]*optionField{}}
	f.problem = widget.NewLabel("")
	f.problem.Wrapping = fyne.TextWrapWord
	f.problem.Importance = widget.DangerImportance
	f.problem.Hide()
	sections := map[string][]fyne.CanvasObject{}
	for _, p := range catalog.Params() {
		fld := f.build(p)
		f.fields[p.Name] = fld
		f.order = append(f.order, p.Name)
		sec := sectionOf(p)
		sections[sec] = append(sections[sec], fld.row)
	}
	box := container.NewVBox(f.problem)
	for i, sec := range sectionOrder {
		rows := sections[sec]
		if len(rows) == 0 {
			continue
		}
		if i > 0 {
			box.Add(widget.NewSeparator())
		}
		h := widget.NewLabelWithStyle(sec, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
		h.Importance = widget.HighImportance
		box.Add(h)
		box.Objects = append(box.Objects, rows...)
	}
	f.content = box
	f.sync()
	return f
}

// Object is the form's canvas object.
func (f *optionsForm) Object() fyne.CanvasObject { return f.content }

// Set replaces the base and own options and redraws every field.
func (f *optionsForm) Set(base, own core.Options, single bool) {
	f.base, f.own, f.single = cloneOptions(base), cloneOptions(own), single
	f.sync()
}

// Own returns the options set in the form.
func (f *optionsForm) Own() core.Options { return cloneOptions(f.own) }

// SetDisabled makes the form read-only (a submitted scene).
func (f *optionsForm) SetDisabled(d bool) {
	f.disabled = d
	for _, fld := range f.fields {
		fld.enable(!d)
		if fld.reset != nil {
			if d {
				fld.reset.Disable()
			} else {
				fld.reset.Enable()
			}
		}
	}
}

// merged is what the options resolve from: own laid over base.
func (f *optionsForm) merged() core.Options { return catalog.Merge(f.base, f.own) }

// sync shows every field's value, hides the ones that do not apply and shows the
// catalog's verdict on the whole.
func (f *optionsForm) sync() {
	f.updating = true
	defer func() { f.updating = false }()
	m := f.merged()
	eff := effective(m)
	for _, name := range f.order {
		fld := f.fields[name]
		v, ok := optionValue(m, name)
		if !ok {
			v = nil
		}
		fld.show(v)
		_, overridden := optionValue(f.own, name)
		if f.scene {
			fld.label.TextStyle.Bold = overridden
			fld.label.Refresh()
			if overridden {
				fld.reset.Show()
			} else {
				fld.reset.Hide()
			}
		}
		if applies(name, eff, f.single) {
			fld.row.Show()
		} else {
			fld.row.Hide()
		}
	}
	f.validate()
}

// validate shows the catalog's message for the merged options, if any.
func (f *optionsForm) validate() {
	err := checkOptions(f.merged(), f.single)
	if err == nil || (!f.scene && isMissingMask(err)) {
		// The shoot's defaults cannot carry a mask: each scene picks its own.
		f.problem.Hide()
		return
	}
	f.problem.SetText(describe(err).Message)
	f.problem.Show()
}

// Problem returns the message shown, "" when the options are valid.
func (f *optionsForm) Problem() string {
	if f.problem.Hidden {
		return ""
	}
	return f.problem.Text
}

func isMissingMask(err error) bool {
	p := describe(err)
	return p.Option == "mask"
}

// changed records a value the user set (nil clears it) and tells the owner.
func (f *optionsForm) changed(name string, v any) {
	if f.updating {
		return
	}
	setOption(&f.own, name, v)
	f.sync()
	if f.onChange != nil {
		f.onChange(f.Own())
	}
}

// SetValue sets one option as the user would (tests and shortcuts use it).
func (f *optionsForm) SetValue(name string, v any) { f.changed(name, v) }

// build makes the widget of one option.
func (f *optionsForm) build(p catalog.Param) *optionField {
	fld := &optionField{p: p, label: widget.NewLabel(optionLabel(p.Name))}
	fld.hint = widget.NewLabel("")
	fld.hint.Wrapping = fyne.TextWrapWord
	fld.hint.Importance = widget.LowImportance
	fld.hint.TextStyle.Italic = true
	fld.hint.Hide()
	var input fyne.CanvasObject
	switch {
	case p.Type == catalog.TypeBoolean && p.Default != nil:
		input = f.buildCheck(fld)
	case p.Type == catalog.TypeBoolean:
		input = f.buildTriState(fld)
	case p.Type == catalog.TypeEnum:
		input = f.buildEnum(fld)
	case p.Name == "tonecraft_profile":
		input = f.buildPreset(fld, catalog.PresetsTonecraft)
	case p.Name == "staging_preset":
		input = f.buildPreset(fld, catalog.PresetsIndoorStaging)
	case (p.Type == catalog.TypeNumber || p.Type == catalog.TypeInteger) && p.Min != nil && p.Max != nil:
		input = f.buildSlider(fld)
	case p.Type == catalog.TypeArray:
		input = f.buildList(fld)
	case p.Type == catalog.TypeUUID:
		input = f.buildAsset(fld)
	default:
		input = f.buildText(fld)
	}
	if f.scene {
		fld.reset = widget.NewButtonWithIcon("", theme.ContentUndoIcon(), func() { f.changed(p.Name, nil) })
		fld.reset.Importance = widget.LowImportance
		fld.reset.Hide()
	}
	top := fyne.CanvasObject(fld.label)
	if fld.reset != nil {
		top = container.NewBorder(nil, nil, nil, fld.reset, fld.label)
	}
	if p.Type == catalog.TypeBoolean && p.Default != nil {
		// A check carries its own label.
		top = nil
		if fld.reset != nil {
			input = container.NewBorder(nil, nil, nil, fld.reset, input)
		}
	}
	var objs []fyne.CanvasObject
	if top != nil {
		objs = append(objs, top)
	}
	objs = append(objs, input, fld.hint)
	fld.row = container.NewVBox(objs...)
	return fld
}

func (f *optionsForm) buildCheck(fld *optionField) fyne.CanvasObject {
	c := widget.NewCheck(optionLabel(fld.p.Name), func(b bool) { f.changed(fld.p.Name, b) })
	fld.label = widget.NewLabel(c.Text) // kept for the overridden mark
	def, _ := fld.p.Default.(bool)
	fld.show = func(v any) {
		b, ok := v.(bool)
		if !ok {
			b = def
		}
		c.SetChecked(b)
		if f.scene {
			_, over := optionValue(f.own, fld.p.Name)
			c.Text = optionLabel(fld.p.Name)
			if over {
				c.Text += " •"
			}
			c.Refresh()
		}
	}
	fld.enable = enabler(c)
	fld.focusOn = c
	return c
}

// Tri-state booleans have no default: the selected look decides unless set.
func (f *optionsForm) buildTriState(fld *optionField) fyne.CanvasObject {
	const decides, on, off = "As the look decides", "On", "Off"
	s := widget.NewSelect([]string{decides, on, off}, func(v string) {
		switch v {
		case on:
			f.changed(fld.p.Name, true)
		case off:
			f.changed(fld.p.Name, false)
		default:
			f.changed(fld.p.Name, nil)
		}
	})
	fld.show = func(v any) {
		switch b, ok := v.(bool); {
		case !ok:
			s.SetSelected(decides)
		case b:
			s.SetSelected(on)
		default:
			s.SetSelected(off)
		}
	}
	fld.enable = enabler(s)
	return s
}

func (f *optionsForm) buildEnum(fld *optionField) fyne.CanvasObject {
	const none = "None"
	var labels []string
	byLabel := map[string]string{}
	byValue := map[string]string{}
	if fld.p.Default == nil {
		labels = append(labels, none)
	}
	for _, v := range fld.p.Enum {
		l := valueLabel(v)
		if fld.p.Name == "gen_edit" && f.available != nil {
			if feat, ok := catalog.GenEditFeature(v); ok && !f.available(feat) {
				l += " (needs a model backend)"
			}
		}
		labels = append(labels, l)
		byLabel[l], byValue[v] = v, l
	}
	s := widget.NewSelect(labels, func(l string) {
		if l == none {
			f.changed(fld.p.Name, nil)
			return
		}
		f.changed(fld.p.Name, byLabel[l])
	})
	def, _ := fld.p.Default.(string)
	fld.show = func(v any) {
		str, ok := v.(string)
		if !ok {
			str = def
		}
		if l, ok := byValue[str]; ok {
			s.SetSelected(l)
		} else {
			s.SetSelected(none)
		}
	}
	fld.enable = enabler(s)
	return s
}

func (f *optionsForm) buildPreset(fld *optionField, feature string) fyne.CanvasObject {
	const none = "None"
	var labels []string
	byLabel := map[string]catalog.Preset{}
	byKey := map[string]string{}
	// The list is read again on every show: the photographer's own looks come and
	// go while the window is open.
	reload := func() {
		presets, _ := catalog.Presets(feature)
		labels = labels[:0]
		clear(byLabel)
		clear(byKey)
		if fld.p.Default == nil {
			labels = append(labels, none)
		}
		for _, p := range presets {
			labels = append(labels, p.Name)
			byLabel[p.Name], byKey[p.Key] = p, p.Name
		}
	}
	reload()
	s := widget.NewSelect(slices.Clone(labels), func(l string) {
		if l == none {
			f.changed(fld.p.Name, nil)
			return
		}
		f.changed(fld.p.Name, byLabel[l].Key)
	})
	def, _ := fld.p.Default.(string)
	fld.show = func(v any) {
		reload()
		if !slices.Equal(s.Options, labels) {
			s.Options = slices.Clone(labels)
			s.Refresh()
		}
		key, ok := v.(string)
		if !ok {
			key = def
		}
		l, ok := byKey[key]
		if !ok {
			s.SetSelected(none)
			fld.hint.Hide()
			return
		}
		s.SetSelected(l)
		if d := byLabel[l].Description; d != "" {
			fld.hint.SetText(d)
			fld.hint.Show()
		}
	}
	fld.enable = enabler(s)
	return s
}

func (f *optionsForm) buildSlider(fld *optionField) fyne.CanvasObject {
	lo, hi := *fld.p.Min, *fld.p.Max
	integer := fld.p.Type == catalog.TypeInteger
	step := (hi - lo) / 100
	if integer {
		step = 1
	}
	s := widget.NewSlider(lo, hi)
	s.Step = step
	val := widget.NewLabel("")
	format := func(x float64) string {
		if integer {
			return strconv.Itoa(int(math.Round(x)))
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	s.OnChanged = func(x float64) {
		val.SetText(format(x))
		if integer {
			f.changed(fld.p.Name, int(math.Round(x)))
		} else {
			f.changed(fld.p.Name, math.Round(x*100)/100)
		}
	}
	fld.show = func(v any) {
		var x float64
		switch n := v.(type) {
		case float64:
			x = n
		case int:
			x = float64(n)
		default:
			switch d := fld.p.Default.(type) {
			case float64:
				x = d
			case int:
				x = float64(d)
			}
		}
		s.SetValue(x)
		val.SetText(format(x))
	}
	fld.enable = enabler(s)
	return container.NewBorder(nil, nil, nil, val, s)
}

func (f *optionsForm) buildList(fld *optionField) fyne.CanvasObject {
	choices := slices.Clone(catalog.DefaultCategories)
	g := widget.NewCheckGroup(choices, func(sel []string) {
		if len(sel) == 0 || len(sel) == len(choices) {
			f.changed(fld.p.Name, nil) // empty or all: the defaults
			return
		}
		f.changed(fld.p.Name, slices.Clone(sel))
	})
	g.Horizontal = false
	fld.hint.SetText("With none checked, all three are blurred.")
	fld.show = func(v any) {
		sel, ok := v.([]string)
		if !ok || len(sel) == 0 {
			sel = choices
		}
		g.SetSelected(sel)
	}
	fld.enable = enabler(g)
	return g
}

func (f *optionsForm) buildText(fld *optionField) fyne.CanvasObject {
	e := widget.NewMultiLineEntry()
	e.Wrapping = fyne.TextWrapWord
	e.SetMinRowsVisible(3)
	if fld.p.MaxLength > 0 {
		e.SetPlaceHolder(fmt.Sprintf("Up to %d characters; replaces the look's style text", fld.p.MaxLength))
	}
	e.OnChanged = func(s string) {
		if s == "" {
			f.changed(fld.p.Name, nil)
			return
		}
		f.changed(fld.p.Name, s)
	}
	fld.show = func(v any) {
		s, _ := v.(string)
		if e.Text != s {
			e.SetText(s)
		}
	}
	fld.enable = enabler(e)
	fld.focusOn = e
	return e
}

// buildAsset is the mask picker: the chosen file is imported as an asset.
func (f *optionsForm) buildAsset(fld *optionField) fyne.CanvasObject {
	chosen := widget.NewLabel("No mask chosen")
	chosen.Truncation = fyne.TextTruncateEllipsis
	b := widget.NewButtonWithIcon("Choose mask…", theme.FolderOpenIcon(), func() {
		if f.pickMask != nil {
			f.pickMask(func(id string) { f.changed(fld.p.Name, id) })
		}
	})
	fld.hint.SetText("A white-on-transparent PNG the size of the photo; white marks what to erase.")
	fld.show = func(v any) {
		if id, ok := v.(string); ok && id != "" {
			chosen.SetText("Mask " + id[:8])
		} else {
			chosen.SetText("No mask chosen")
		}
		fld.hint.Show()
	}
	fld.enable = enabler(b)
	return container.NewBorder(nil, nil, b, nil, chosen)
}

type enablable interface {
	Enable()
	Disable()
}

func enabler(w enablable) func(bool) {
	return func(on bool) {
		if on {
			w.Enable()
		} else {
			w.Disable()
		}
	}
}
