package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

func sp(s string) *string { return &s }
func bp(b bool) *bool     { return &b }

// Every order option of the catalog has a field, in a known section, with a label.
func TestFormCoversEveryCatalogOption(t *testing.T) {
	test.NewApp()
	f := newOptionsForm(false, nil, nil)
	params := catalog.Params()
	if len(f.fields) != len(params) {
		t.Fatalf("form has %d fields, the catalog %d options", len(f.fields), len(params))
	}
	for _, p := range params {
		fld, ok := f.fields[p.Name]
		if !ok {
			t.Errorf("no field for %s", p.Name)
			continue
		}
		if fld.show == nil || fld.enable == nil || fld.row == nil {
			t.Errorf("%s is not wired", p.Name)
		}
		found := false
		for _, s := range sectionOrder {
			found = found || s == sectionOf(p)
		}
		if !found || optionLabel(p.Name) == "" {
			t.Errorf("%s: section %q label %q", p.Name, sectionOf(p), optionLabel(p.Name))
		}
	}
}

// Fields appear only when they apply.
func TestFieldsAppearWhenTheyApply(t *testing.T) {
	cases := []struct {
		name   string
		o      core.Options
		single bool
		want   bool
	}{
		{"sky_style", core.Options{}, false, false},
		{"sky_style", core.Options{Sky: bp(true)}, false, true},
		{"perspective_strength", core.Options{Perspective: bp(true)}, false, true},
		{"tonecraft_profile", core.Options{}, false, false},
		{"tonecraft_sharpen", core.Options{Tonecraft: bp(true)}, false, true},
		{"threshold", core.Options{Privacy: bp(true)}, false, true},
		{"categories", core.Options{}, false, false},
		{"quality", core.Options{}, false, true},
		{"quality", core.Options{Format: sp("png")}, false, false},
		{"staging_style", core.Options{GenEdit: sp("indoor_staging")}, false, true},
		{"staging_style", core.Options{GenEdit: sp("mess_cleaner")}, false, false},
		{"gen_quality", core.Options{GenEdit: sp("mess_cleaner")}, false, true},
		{"gen_quality", core.Options{GenEdit: sp("declutter_local")}, false, false},
		{"style_clause", core.Options{GenEdit: sp("indoor_staging")}, false, false},
		{"style_clause", core.Options{GenEdit: sp("indoor_staging")}, true, true},
		{"mask", core.Options{GenEdit: sp("magic_eraser")}, false, true},
		{"mask", core.Options{}, false, false},
		{"align", core.Options{}, false, true},
	}
	for _, c := range cases {
		if got := applies(c.name, effective(c.o), c.single); got != c.want {
			t.Errorf("%s with %+v single=%t: applies=%t", c.name, optionsToMap(c.o), c.single, got)
		}
	}

	test.NewApp()
	f := newOptionsForm(false, nil, nil)
	if !f.fields["sky_style"].row.Hidden {
		t.Fatal("sky style shows with the sky off")
	}
	f.SetValue("sky", true)
	if f.fields["sky_style"].row.Hidden {
		t.Fatal("sky style hidden with the sky on")
	}
	f.SetValue("gen_edit", "indoor_staging")
	for _, n := range []string{"staging_preset", "staging_style", "room_type", "floor_finish", "wall_color", "gen_quality"} {
		if f.fields[n].row.Hidden {
			t.Errorf("%s hidden with indoor staging", n)
		}
	}
}

// The form's values go into the options under their API names, the validator is
// the catalog's, and a scene form marks and resets its overrides.
func TestFormEditsOptions(t *testing.T) {
	test.NewApp()
	var got core.Options
	shoot := newOptionsForm(false, nil, func(o core.Options) { got = o })
	shoot.SetValue("tonecraft", true)
	shoot.SetValue("tonecraft_profile", "twilight")
	shoot.SetValue("threshold", 0.55)
	if !boolOpt(got.Tonecraft) || strOpt(got.TonecraftProfile) != "twilight" || got.Threshold == nil || *got.Threshold != 0.55 {
		t.Fatalf("options %v", optionsToMap(got))
	}
	if shoot.Problem() != "" {
		t.Fatalf("valid options flagged: %s", shoot.Problem())
	}
	// Out of the table's bounds: the catalog's reason, with the option's label.
	shoot.SetValue("quality", 500)
	want := describe(catalog.Validate(core.Options{Quality: intp(500)})).Message
	if shoot.Problem() != want || !strings.HasPrefix(want, "Quality: ") {
		t.Fatalf("problem %q, catalog says %q", shoot.Problem(), want)
	}
	shoot.SetValue("quality", nil)

	scene := newOptionsForm(true, nil, func(o core.Options) { got = o })
	scene.Set(shoot.Own(), core.Options{}, false)
	if fld := scene.fields["tonecraft_profile"]; fld.row.Hidden {
		t.Fatal("the scene does not see the shoot's tone look")
	}
	scene.SetValue("sky", true)
	if got.Sky == nil || got.Tonecraft != nil {
		t.Fatalf("scene overrides %v: only what the scene changed belongs there", optionsToMap(got))
	}
	if scene.fields["sky"].reset.Hidden || !scene.fields["tonecraft"].reset.Hidden {
		t.Fatal("overridden fields are not marked")
	}
	scene.fields["sky"].reset.OnTapped()
	if got.Sky != nil {
		t.Fatal("reset kept the override")
	}
	// The mask is required by magic eraser in a scene, not in the shoot's defaults.
	shoot.SetValue("gen_edit", "magic_eraser")
	if shoot.Problem() != "" {
		t.Fatalf("shoot flags the per-scene mask: %s", shoot.Problem())
	}
	scene.Set(shoot.Own(), core.Options{}, false)
	if !strings.HasPrefix(scene.Problem(), "Mask: is required") {
		t.Fatalf("scene without a mask: %q", scene.Problem())
	}
}

func intp(i int) *int { return &i }

func TestOptionsRoundTripThroughConfig(t *testing.T) {
	o := core.Options{Tonecraft: bp(true), TonecraftProfile: sp("bright_airy"), Quality: intp(80),
		Categories: []string{"license plate"}, Sky: bp(false)}
	back := optionsFromConfig(optionsToMap(o))
	if a, b := optionsToMap(o), optionsToMap(back); len(a) != len(b) || a["quality"] != b["quality"] || a["tonecraft_profile"] != b["tonecraft_profile"] || b["sky"] != false {
		t.Fatalf("%v became %v", a, b)
	}
	// A value that no longer validates is dropped alone.
	m := optionsToMap(o)
	m["quality"] = 900
	m["unknown_option"] = true
	back = optionsFromConfig(m)
	if back.Quality != nil || !boolOpt(back.Tonecraft) {
		t.Fatalf("bad values: %v", optionsToMap(back))
	}
}

func TestDescribeNamesTheOption(t *testing.T) {
	err := core.WithPrefix("scenes[3]", core.Invalid("threshold", "must be between 0 and 1"))
	p := describe(err)
	if p.Option != "threshold" || p.Message != "Detection threshold: must be between 0 and 1" {
		t.Fatalf("%+v", p)
	}
	if sceneOfField(err) != 3 {
		t.Fatalf("scene index %d", sceneOfField(err))
	}
	if p := describe(core.Conflict("nope")); p.Option != "" || p.Message != "nope" {
		t.Fatalf("%+v", p)
	}
}

func TestResolvedLinesDescribeWhatRan(t *testing.T) {
	r, err := catalog.Resolve(core.Options{Tonecraft: bp(true), TonecraftProfile: sp("bright_airy"), Sky: bp(true), SkyStyle: sp("low_cloud")}, true)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(resolvedLines(r, 1), "\n")
	for _, want := range []string{"Tone look: on", "Look: Bright", "Sky style: Low cloud", "Quality: 92", "Replace the sky: on"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	for _, absent := range []string{"Align", "Detection threshold", "Strength", "Furniture"} {
		if strings.Contains(got, absent) {
			t.Errorf("%q does not apply but is listed:\n%s", absent, got)
		}
	}
	if !strings.Contains(strings.Join(resolvedLines(r, 3), "\n"), "Align brackets before merging: on") {
		t.Error("alignment of brackets not listed")
	}
}
