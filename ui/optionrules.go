package ui

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// The option form is generated from catalog.Params(); this file holds what the
// table does not say: how options are grouped and named for people, and when an
// option applies.

// Form sections, in the order they are shown.
const (
	sectionEnhance  = "Enhance"
	sectionSky      = "Sky"
	sectionPrivacy  = "Privacy"
	sectionGen      = "Generative edit"
	sectionDelivery = "HDR merge and delivery"
)

var sectionOrder = []string{sectionEnhance, sectionSky, sectionPrivacy, sectionGen, sectionDelivery}

// sectionOf places an option by the first feature it belongs to.
func sectionOf(p catalog.Param) string {
	if len(p.Features) == 0 {
		return sectionGen // gen_edit selects a feature rather than belonging to one
	}
	switch {
	case len(p.Features) > 1 && slices.Contains(p.Features, catalog.FeatureAutoHDR):
		return sectionDelivery
	case p.Features[0] == catalog.FeatureEnhancer:
		return sectionEnhance
	case p.Features[0] == catalog.FeatureSkyReplacement:
		return sectionSky
	case p.Features[0] == catalog.FeaturePrivacyBlur:
		return sectionPrivacy
	}
	return sectionGen
}

// labels are the names people read; options not listed get their name humanised.
var labels = map[string]string{
	"gen_edit":             "Feature",
	"perspective":          "Straighten verticals",
	"perspective_strength": "Strength",
	"tonecraft":            "Tone look",
	"tonecraft_profile":    "Look",
	"tonecraft_levels":     "Auto levels",
	"tonecraft_sharpen":    "Sharpen",
	"color_correction":     "Neutral whites under mixed light",
	"lens_correction":      "Correct the lens",
	"align":                "Align brackets before merging",
	"format":               "Format",
	"quality":              "Quality",
	"sky":                  "Replace the sky",
	"sky_style":            "Sky style",
	"privacy":              "Blur private details",
	"categories":           "Blur",
	"threshold":            "Detection threshold",
	"gen_quality":          "Generation quality",
	"staging_preset":       "Staging look",
	"staging_style":        "Furniture style",
	"style_clause":         "Style text",
	"room_type":            "Room",
	"floor_finish":         "Floor",
	"wall_color":           "Walls",
	"mask":                 "Mask",
}

// optionLabel returns the label of option name.
func optionLabel(name string) string {
	if l, ok := labels[name]; ok {
		return l
	}
	return humanize(name)
}

// valueLabels are enum values whose humanised form reads badly.
var valueLabels = map[string]string{
	catalog.GenDeclutterLocal: "Declutter",
	"ikea":                    "IKEA",
	"jpeg":                    "JPEG",
	"png":                     "PNG",
	"webp":                    "WebP",
}

// valueLabel returns how an enum value is shown.
func valueLabel(v string) string {
	if l, ok := valueLabels[v]; ok {
		return l
	}
	return humanize(v)
}

// humanize turns snake_case into a sentence-case phrase.
func humanize(s string) string {
	s = strings.ReplaceAll(s, "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// generative are the gen_edit values that take gen_quality.
var generative = []string{catalog.GenIndoorStaging, catalog.GenOutdoorStaging, catalog.GenMessCleaner}

// applies reports whether option name matters for the effective options o (defaults
// and presets already laid under o by the caller): sky style only with the sky,
// staging options only with indoor staging, and so on. single is true when the
// options go to a single order rather than a batch (style text is refused in
// batches).
func applies(name string, o core.Options, single bool) bool {
	genEdit := strOpt(o.GenEdit)
	switch name {
	case "perspective_strength":
		return boolOpt(o.Perspective)
	case "tonecraft_profile", "tonecraft_levels", "tonecraft_sharpen":
		return boolOpt(o.Tonecraft)
	case "sky_style":
		return boolOpt(o.Sky)
	case "categories", "threshold":
		return boolOpt(o.Privacy)
	case "quality":
		return strOpt(o.Format) != "png"
	case "gen_quality":
		return slices.Contains(generative, genEdit)
	case "staging_preset", "staging_style", "room_type", "floor_finish", "wall_color":
		return genEdit == catalog.GenIndoorStaging
	case "style_clause":
		return genEdit == catalog.GenIndoorStaging && single
	case "mask":
		return genEdit == catalog.GenMagicEraser
	}
	return true
}

// effective lays o over the table's defaults, so rules can read every value.
func effective(o core.Options) core.Options {
	out := cloneOptions(o)
	for _, p := range catalog.Params() {
		if _, ok := optionValue(out, p.Name); !ok && p.Default != nil {
			setOption(&out, p.Name, p.Default)
		}
	}
	return out
}

func boolOpt(b *bool) bool { return b != nil && *b }

func strOpt(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// fieldIndex maps option names to their field in core.Options.
var fieldIndex = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[core.Options]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = i
	}
	return m
}()

// optionValue returns the value of option name in o (dereferenced), false when unset.
func optionValue(o core.Options, name string) (any, bool) {
	i, ok := fieldIndex[name]
	if !ok {
		return nil, false
	}
	f := reflect.ValueOf(o).Field(i)
	if f.IsNil() {
		return nil, false
	}
	if f.Kind() == reflect.Pointer {
		return f.Elem().Interface(), true
	}
	return slices.Clone(f.Interface().([]string)), true
}

// setOption sets option name in o; v nil clears it. Numbers are converted to the
// field's type, so table defaults (float64, int) and widget values both fit.
func setOption(o *core.Options, name string, v any) {
	i, ok := fieldIndex[name]
	if !ok {
		return
	}
	f := reflect.ValueOf(o).Elem().Field(i)
	if v == nil {
		f.Set(reflect.Zero(f.Type()))
		return
	}
	if f.Kind() == reflect.Slice {
		if s, ok := v.([]string); ok {
			f.Set(reflect.ValueOf(slices.Clone(s)))
		}
		return
	}
	rv := reflect.ValueOf(v)
	et := f.Type().Elem()
	if !rv.Type().ConvertibleTo(et) {
		return
	}
	p := reflect.New(et)
	p.Elem().Set(rv.Convert(et))
	f.Set(p)
}

// problem is a validation message for people: the option's label and the
// catalog's reason, plus the option's name so the form can point at it.
type problem struct {
	Option  string // option name ("" when the message is about the whole request)
	Message string
}

// describe turns a catalog or engine error into a problem. Field paths such as
// "scenes[3].quality" name their last element.
func describe(err error) problem {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return problem{Message: err.Error()}
	}
	field := ce.Field
	if i := strings.LastIndex(field, "."); i >= 0 {
		field = field[i+1:]
	}
	if i := strings.Index(field, "["); i > 0 {
		field = field[:i]
	}
	if _, ok := catalog.LookupParam(field); ok {
		return problem{Option: field, Message: optionLabel(field) + ": " + ce.Reason}
	}
	return problem{Message: err.Error()}
}

// checkOptions validates options the way the engine will: every value against the
// table, then the cross-field rules and presets through catalog.Resolve.
func checkOptions(o core.Options, single bool) error {
	if err := catalog.Validate(o); err != nil {
		return err
	}
	_, err := catalog.Resolve(o, !single)
	return err
}

// resolvedLines describes what an order runs with, option by option, leaving out
// what does not apply (the sky style without the sky, alignment of a single photo).
func resolvedLines(r core.Resolved, inputs int) []string {
	b, err := json.Marshal(r)
	if err != nil {
		return nil
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil
	}
	eff := optionsFromConfig(m)
	var out []string
	for _, p := range catalog.Params() {
		v, ok := m[p.Name]
		if !ok || v == nil || v == "" || !applies(p.Name, eff, r.StyleClause != "") {
			continue
		}
		if p.Name == "align" && inputs < 2 {
			continue
		}
		if isSlider(p.Name) && v == 0.0 {
			continue // a slider left at 0 did nothing
		}
		out = append(out, optionLabel(p.Name)+": "+formatValue(p.Name, v))
	}
	return out
}

// formatValue writes one resolved value for people.
func formatValue(name string, v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "on"
		}
		return "off"
	case float64:
		if p, ok := catalog.LookupParam(name); ok && p.Type == catalog.TypeInteger {
			return strconv.Itoa(int(x))
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	case string:
		switch name {
		case "tonecraft_profile":
			if p, ok := catalog.LookupPreset(catalog.PresetsTonecraft, x); ok {
				return p.Name
			}
		case "staging_preset":
			if p, ok := catalog.LookupPreset(catalog.PresetsIndoorStaging, x); ok {
				return p.Name
			}
		case "style_clause", "mask":
			return x
		}
		return valueLabel(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = fmt.Sprint(e)
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprint(v)
}

// isSlider reports whether name is one of the Adjust tab's sliders.
func isSlider(name string) bool {
	for _, s := range sliderSpecs {
		if s.name == name {
			return true
		}
	}
	return false
}
