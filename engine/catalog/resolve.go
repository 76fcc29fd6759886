package catalog

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/porchlight/porchlight/core"
)

// MaxInputs is the most brackets one order or batch scene takes.
const MaxInputs = 5

// Merge lays a batch scene over the batch defaults: a field the scene does not give
// inherits the base value; a field it gives wins, even false, zero or an empty
// categories list. Neither argument is changed and the result shares no slice with
// them.
func Merge(base, scene core.Options) core.Options {
	out := base
	ov := reflect.ValueOf(&out).Elem()
	sv := reflect.ValueOf(scene)
	for i := range options {
		opt := &options[i]
		f := sv.Field(opt.in)
		if !f.IsNil() {
			ov.Field(opt.in).Set(f)
		}
		if v, ok := opt.get(out); ok && ov.Field(opt.in).Kind() == reflect.Slice {
			opt.set(&out, v) // get copies the slice
		}
	}
	return out
}

// Resolve turns options as given (a single order's, or a batch scene merged over the
// batch defaults with inBatch true) into the concrete settings the engine runs:
//
//   - every value is validated as DecodeOptions does, preset keys must exist;
//   - anything not given takes the table's default;
//   - a tonecraft_profile naming a user preset (SetUserPresets) fills the options
//     the order leaves unset with the preset's, then applies its base look;
//   - tonecraft_levels and tonecraft_sharpen, when not given, come from the selected
//     tonecraft profile; an explicit value wins, false included;
//   - color_correction and lens_correction, when not given, follow tonecraft
//     (ResolveScene also turns them on for brackets to merge); an explicit value
//     wins, false included;
//   - flambient, when not given, is on: "on when the scene has a flash frame",
//     and whether one has is known only once the inputs are decoded (EXIF Flash),
//     so the pipeline blends a flash frame when this is on and a frame's flash
//     fired; an explicit false merges a flash frame like any bracket;
//   - categories omitted or empty become the three default concepts;
//   - indoor staging follows the spec's rules 1 to 5: the staging_preset's values
//     first, then explicit staging_style, style_clause, floor_finish and wall_color;
//     a blank style_clause counts as omitted; a resolved keep needs a finish change
//     and refuses any clause, explicit or inherited;
//   - style_clause is refused in batches; magic eraser needs a mask.
//
// The staging rules are checked whatever gen_edit says, so contradictory staging
// options are refused rather than carried along unused.
func Resolve(o core.Options, inBatch bool) (core.Resolved, error) {
	o, err := normalized(o)
	if err != nil {
		return core.Resolved{}, err
	}
	if o.StyleClause != nil {
		if c := strings.TrimSpace(*o.StyleClause); c == "" {
			o.StyleClause = nil // rule 5: blank counts as omitted
		} else {
			o.StyleClause = &c
		}
	}
	if inBatch && o.StyleClause != nil {
		return core.Resolved{}, core.Invalid("style_clause",
			"is accepted on single orders only, not in batch defaults or scene overrides; a staging_preset can carry style text")
	}

	if o.TonecraftProfile != nil {
		if u, ok := findUser(*o.TonecraftProfile); ok {
			o = Merge(u.Options, o) // the look's settings fill what the order leaves unset
		}
	}

	var r core.Resolved
	rv := reflect.ValueOf(&r).Elem()
	for i := range options {
		opt := &options[i]
		v, ok := opt.get(o)
		if !ok {
			v = opt.clone().Default
		}
		if v != nil {
			rv.Field(opt.out).Set(reflect.ValueOf(v))
		}
	}

	look, ok := TonecraftLook(r.TonecraftProfile)
	if !ok { // only a default missing from the preset list can get here
		return core.Resolved{}, fmt.Errorf("catalog: default tonecraft profile %q has no preset", r.TonecraftProfile)
	}
	if o.TonecraftLevels == nil {
		r.TonecraftLevels = look.AutoLevels
	}
	if o.TonecraftSharpen == nil {
		r.TonecraftSharpen = look.Sharpen
	}

	// Without the input count, an enhancement order is one with tonecraft on;
	// ResolveScene adds the orders with brackets to merge.
	if o.ColorCorrection == nil {
		r.ColorCorrection = r.Tonecraft
	}
	if o.LensCorrection == nil {
		r.LensCorrection = r.Tonecraft
	}
	if o.Flambient == nil {
		r.Flambient = true
	}

	if len(r.Categories) == 0 {
		r.Categories = append([]string(nil), DefaultCategories...)
	}

	st, err := resolveStaging(o)
	if err != nil {
		return core.Resolved{}, err
	}
	r.StagingStyle, r.StyleClause, r.FloorFinish, r.WallColor = st.Style, st.Clause, st.FloorFinish, st.WallColor

	if r.GenEdit == GenMagicEraser && r.Mask == "" {
		return core.Resolved{}, core.Invalid("mask",
			"is required with gen_edit magic_eraser: the asset id of a white-on-transparent PNG marking what to erase")
	}
	return r, nil
}

// ResolveScene is Resolve for an order or batch scene of n inputs, followed by
// CheckInputs with the spec's MaxInputs. It completes the default rule of the
// corrections: they are on for enhancement orders, those with tonecraft on or with
// brackets to merge (n > 1), unless the options set them explicitly.
func ResolveScene(o core.Options, inBatch bool, n int) (core.Resolved, error) {
	return ResolveSceneUpTo(o, inBatch, n, MaxInputs)
}

// ResolveSceneUpTo is ResolveScene for a front door that takes up to maxInputs
// brackets (the window, hot folders and process take more than the spec's five).
func ResolveSceneUpTo(o core.Options, inBatch bool, n, maxInputs int) (core.Resolved, error) {
	r, err := Resolve(o, inBatch)
	if err != nil {
		return core.Resolved{}, err
	}
	if err := CheckInputs(r, n, maxInputs); err != nil {
		return core.Resolved{}, err
	}
	if n > 1 {
		if o.ColorCorrection == nil {
			r.ColorCorrection = true
		}
		if o.LensCorrection == nil {
			r.LensCorrection = true
		}
	}
	return r, nil
}

// CorrectionsOn returns o with color_correction and lens_correction turned on where
// o leaves them unset: the window's and hot folders' defaults, which deliver
// listing photos whatever the order.
func CorrectionsOn(o core.Options) core.Options {
	// Separate variables, so the two options never share a pointer.
	color, lens := true, true
	if o.ColorCorrection == nil {
		o.ColorCorrection = &color
	}
	if o.LensCorrection == nil {
		o.LensCorrection = &lens
	}
	return o
}

// resolveStaging applies staging rules 2 to 5 to normalised options whose blank
// clause was already dropped.
func resolveStaging(o core.Options) (Staging, error) {
	st := Staging{
		Style:       byName["staging_style"].Default.(string),
		FloorFinish: byName["floor_finish"].Default.(string),
		WallColor:   byName["wall_color"].Default.(string),
	}
	preset := ""
	if o.StagingPreset != nil {
		preset = *o.StagingPreset
		p, ok := StagingPreset(preset)
		if !ok { // normalized checked the key; this guards options built past it
			return Staging{}, core.Invalid("staging_preset", "unknown preset %q", clip(preset))
		}
		st = p
	}
	clauseFrom := "preset " + preset
	if o.StagingStyle != nil {
		st.Style = *o.StagingStyle
	}
	if o.StyleClause != nil {
		st.Clause = *o.StyleClause
		clauseFrom = "request"
	}
	if o.FloorFinish != nil {
		st.FloorFinish = *o.FloorFinish
	}
	if o.WallColor != nil {
		st.WallColor = *o.WallColor
	}
	if st.Style != StyleKeep {
		return st, nil
	}
	if st.Clause != "" {
		why := "staging_style keep"
		switch {
		case o.StagingStyle != nil && preset != "":
			why = fmt.Sprintf("the explicit staging_style keep overrides preset %s's style", preset)
		case o.StagingStyle == nil:
			why = fmt.Sprintf("staging_style keep comes from preset %s", preset)
		}
		return Staging{}, core.Invalid("style_clause",
			"a style clause (from the %s) cannot be used when the resolved staging_style is keep (%s); keep restyles finishes only",
			clauseFrom, why)
	}
	if st.FloorFinish == "keep" && st.WallColor == "keep" {
		return Staging{}, core.Invalid("staging_style",
			"keep changes finishes without restaging, so it needs floor_finish or wall_color other than keep")
	}
	return st, nil
}

// CheckInputs checks the number of inputs of an order or batch scene: 1 to
// maxInputs (MaxInputs for the spec's API), and exactly one image for magic eraser
// (its mask travels in `mask`).
func CheckInputs(r core.Resolved, n, maxInputs int) error {
	if n < 1 || n > maxInputs {
		return core.Invalid("inputs", "needs 1 to %d asset ids (the brackets of one scene), got %d", maxInputs, n)
	}
	if r.GenEdit == GenMagicEraser && n != 1 {
		return core.Invalid("inputs", "magic eraser takes exactly one image (the mask goes in mask), got %d", n)
	}
	return nil
}

// RecipesFor returns recipe name -> version for the steps an order with these
// settings runs. The base pipeline (decode, normalise, resolution cap, encode) runs
// on every order and belongs to the develop recipe, together with the HDR merge
// (inputCount > 1), perspective and tonecraft, so develop is recorded for every
// order whatever inputCount is; sky, privacy and the gen_edit recipe are recorded
// when selected.
func RecipesFor(r core.Resolved, inputCount int) map[string]string {
	out := map[string]string{RecipeDevelop: recipes[RecipeDevelop]}
	if r.Sky {
		out[RecipeSky] = recipes[RecipeSky]
	}
	if r.Privacy {
		out[RecipePrivacy] = recipes[RecipePrivacy]
	}
	if rec := genEditRecipe(r.GenEdit); rec != "" {
		out[rec] = recipes[rec]
	}
	return out
}
