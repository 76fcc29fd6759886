package catalog

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// body decodes a JSON object of options, failing the test on a decode error.
func body(t *testing.T, js string) core.Options {
	t.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &fields); err != nil {
		t.Fatalf("test body %s: %v", js, err)
	}
	o, err := DecodeOptions(fields)
	if err != nil {
		t.Fatalf("decode %s: %v", js, err)
	}
	return o
}

func TestResolveDefaults(t *testing.T) {
	r, err := Resolve(core.Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := TonecraftLook("signature")
	want := core.Resolved{
		PerspectiveStrength: 1, TonecraftProfile: "signature",
		TonecraftLevels: sig.AutoLevels, TonecraftSharpen: sig.Sharpen,
		Align: true, Format: "jpeg", Quality: 92, SkyStyle: "high_cloud",
		Categories: []string{"human face", "license plate", "photo or frame"}, Threshold: 0.3,
		GenQuality: "balanced", StagingStyle: "contemporary", RoomType: "auto",
		FloorFinish: "keep", WallColor: "keep", Flambient: true, ShootConsistency: true,
	}
	if !reflect.DeepEqual(r, want) {
		t.Errorf("defaults\n got %+v\nwant %+v", r, want)
	}
	// Every default of the table lands in Resolved.
	rv := reflect.ValueOf(r)
	for _, p := range Params() {
		if p.Default == nil {
			continue
		}
		if got := rv.Field(byName[p.Name].out).Interface(); !reflect.DeepEqual(got, p.Default) {
			t.Errorf("%s resolved to %v, default %v", p.Name, got, p.Default)
		}
	}
}

func TestResolveExplicitValuesWin(t *testing.T) {
	r, err := Resolve(body(t, `{"perspective":true,"perspective_strength":0,"align":false,"format":"webp",
		"quality":1,"sky":true,"sky_style":"clear","privacy":true,"categories":["license plate"],"threshold":1,
		"gen_edit":"outdoor_staging","gen_quality":"best","room_type":"kitchen"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Perspective || r.PerspectiveStrength != 0 || r.Align || r.Format != "webp" || r.Quality != 1 ||
		!r.Sky || r.SkyStyle != "clear" || !r.Privacy || r.Threshold != 1 || r.GenEdit != "outdoor_staging" ||
		r.GenQuality != "best" || r.RoomType != "kitchen" {
		t.Errorf("resolved %+v", r)
	}
	if !reflect.DeepEqual(r.Categories, []string{"license plate"}) {
		t.Errorf("categories %v", r.Categories)
	}
	r, _ = Resolve(body(t, `{"categories":[]}`), false)
	if len(r.Categories) != 3 {
		t.Errorf("empty categories resolved to %v, want the defaults", r.Categories)
	}
}

func TestResolveTonecraft(t *testing.T) {
	for _, key := range PresetKeys(PresetsTonecraft) {
		look, _ := TonecraftLook(key)
		r, err := Resolve(body(t, `{"tonecraft":true,"tonecraft_profile":"`+key+`"}`), false)
		if err != nil {
			t.Fatal(err)
		}
		if r.TonecraftProfile != key || r.TonecraftLevels != look.AutoLevels || r.TonecraftSharpen != look.Sharpen {
			t.Errorf("%s: omitted levels/sharpen resolved to %v/%v, preset says %v/%v",
				key, r.TonecraftLevels, r.TonecraftSharpen, look.AutoLevels, look.Sharpen)
		}
		// Explicit values win in both directions, false included.
		for _, v := range []bool{false, true} {
			js := `{"tonecraft":true,"tonecraft_profile":"` + key + `","tonecraft_levels":` + boolText(v) + `,"tonecraft_sharpen":` + boolText(v) + `}`
			r, err := Resolve(body(t, js), false)
			if err != nil || r.TonecraftLevels != v || r.TonecraftSharpen != v {
				t.Errorf("%s explicit %v: %v/%v %v", key, v, r.TonecraftLevels, r.TonecraftSharpen, err)
			}
		}
	}
	// The presets disagree on levels and sharpen, so "preset decides" is observable.
	sig, _ := TonecraftLook("signature")
	nat, _ := TonecraftLook("natural")
	if sig.Sharpen == nat.Sharpen {
		t.Fatal("signature and natural should differ on sharpen")
	}
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// staging resolves js as a single order (inBatch false) or in a batch.
func staging(t *testing.T, js string, inBatch bool) (core.Resolved, error) {
	t.Helper()
	return Resolve(body(t, js), inBatch)
}

func TestStagingRules(t *testing.T) {
	type want struct{ style, clause, floor, wall string }
	mf, _ := StagingPreset("modern_family")
	il, _ := StagingPreset("industrial_loft")
	fr, _ := StagingPreset("finishes_refresh")
	ok := []struct {
		name, js string
		inBatch  bool
		want     want
	}{
		{"defaults", `{"gen_edit":"indoor_staging"}`, false, want{"contemporary", "", "keep", "keep"}},
		{"rule 2: preset values", `{"gen_edit":"indoor_staging","staging_preset":"industrial_loft"}`, false,
			want{"industrial", il.Clause, "concrete_light_grey", "keep"}},
		{"rule 2: explicit style overrides preset, clause inherited", `{"staging_preset":"modern_family","staging_style":"luxury"}`, false,
			want{"luxury", mf.Clause, "keep", "keep"}},
		{"rule 2: explicit clause replaces preset clause", `{"staging_preset":"modern_family","style_clause":"  mid-century teak  "}`, false,
			want{"modern", "mid-century teak", "keep", "keep"}},
		{"rule 2: explicit finishes override preset", `{"staging_preset":"industrial_loft","floor_finish":"keep","wall_color":"sage_green"}`, false,
			want{"industrial", il.Clause, "keep", "sage_green"}},
		{"rule 2: room_type and gen_quality are not preset settings", `{"staging_preset":"modern_family","room_type":"bedroom","gen_quality":"fast"}`, false,
			want{"modern", mf.Clause, "keep", "keep"}},
		{"rule 3: keep with a floor", `{"staging_style":"keep","floor_finish":"tiles_white"}`, false, want{"keep", "", "tiles_white", "keep"}},
		{"rule 3: keep with a wall", `{"staging_style":"keep","wall_color":"charcoal"}`, false, want{"keep", "", "keep", "charcoal"}},
		{"rule 3: keep preset", `{"staging_preset":"finishes_refresh"}`, false, want{"keep", "", fr.FloorFinish, fr.WallColor}},
		{"rule 3: keep preset, one finish reset, the other remains", `{"staging_preset":"finishes_refresh","wall_color":"keep"}`, false,
			want{"keep", "", fr.FloorFinish, "keep"}},
		{"rule 5: blank clause is omitted and keeps the preset clause", `{"staging_preset":"modern_family","style_clause":"   \t\n"}`, false,
			want{"modern", mf.Clause, "keep", "keep"}},
		{"rule 5: empty clause with keep is fine", `{"staging_style":"keep","wall_color":"cream","style_clause":""}`, false,
			want{"keep", "", "keep", "cream"}},
		{"rule 5: blank clause in a batch counts as omitted", `{"staging_preset":"modern_family","style_clause":""}`, true,
			want{"modern", mf.Clause, "keep", "keep"}},
		{"preset clause applies in batches", `{"staging_preset":"luxury_penthouse"}`, true,
			want{"luxury", mustStaging("luxury_penthouse").Clause, "keep", "greige"}},
		{"clause at the length limit", `{"style_clause":"` + strings.Repeat("a", 1500) + `"}`, false,
			want{"contemporary", strings.Repeat("a", 1500), "keep", "keep"}},
	}
	for _, c := range ok {
		t.Run(c.name, func(t *testing.T) {
			r, err := staging(t, c.js, c.inBatch)
			if err != nil {
				t.Fatal(err)
			}
			got := want{r.StagingStyle, r.StyleClause, r.FloorFinish, r.WallColor}
			if got != c.want {
				t.Errorf("got %+v\nwant %+v", got, c.want)
			}
		})
	}

	bad := []struct {
		name, js string
		inBatch  bool
		field    string
		mention  string // the reason must contain this
	}{
		{"rule 3: keep without finishes", `{"staging_style":"keep"}`, false, "staging_style", "floor_finish or wall_color"},
		{"rule 3: keep with explicit keep finishes", `{"staging_style":"keep","floor_finish":"keep","wall_color":"keep"}`, false, "staging_style", "keep"},
		{"rule 3: keep preset with both finishes reset", `{"staging_preset":"finishes_refresh","floor_finish":"keep","wall_color":"keep"}`, false, "staging_style", "floor_finish"},
		{"rule 3: explicit keep over a preset without finishes", `{"staging_preset":"contemporary_neutral","staging_style":"keep"}`, false, "staging_style", "floor_finish"},
		{"rule 4: explicit clause with explicit keep", `{"staging_style":"keep","wall_color":"white","style_clause":"oak"}`, false, "style_clause", "staging_style"},
		{"rule 4: explicit keep overriding a preset with a clause", `{"staging_preset":"modern_family","staging_style":"keep","wall_color":"white"}`, false, "style_clause", "staging_style"},
		{"rule 4: explicit keep over a preset's clause even when the request's clause is blank", `{"staging_preset":"scandi_minimal","staging_style":"keep","style_clause":" "}`, false, "style_clause", "preset scandi_minimal"},
		{"rule 4: clause with a keep preset", `{"staging_preset":"finishes_refresh","style_clause":"rattan"}`, false, "style_clause", "staging_style"},
		{"rule 4: clause checked before finishes", `{"staging_style":"keep","style_clause":"rattan"}`, false, "style_clause", "keep"},
		{"style_clause in a batch", `{"style_clause":"velvet"}`, true, "style_clause", "batch"},
		{"style_clause in a batch with a preset", `{"staging_preset":"modern_family","style_clause":"velvet"}`, true, "style_clause", "single orders"},
		{"clause over the length limit", `{"style_clause":"` + strings.Repeat("a", 1501) + `"}`, false, "style_clause", "1500"},
		{"unknown staging preset", `{"staging_preset":"nope"}`, false, "staging_preset", "modern_family"},
		{"unknown tonecraft profile", `{"tonecraft":true,"tonecraft_profile":"nope"}`, false, "tonecraft_profile", "signature"},
		{"magic eraser without mask", `{"gen_edit":"magic_eraser"}`, false, "mask", "magic_eraser"},
		{"magic eraser with null mask", `{"gen_edit":"magic_eraser","mask":null}`, false, "mask", "required"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(c.js), &fields); err != nil {
				t.Fatal(err)
			}
			o, err := DecodeOptions(fields)
			if err == nil {
				_, err = Resolve(o, c.inBatch)
			}
			wantInvalid(t, err, c.field)
			var e *core.Error
			errors.As(err, &e)
			if !strings.Contains(e.Reason, c.mention) {
				t.Errorf("reason %q does not mention %q", e.Reason, c.mention)
			}
		})
	}
}

func mustStaging(key string) Staging {
	s, ok := StagingPreset(key)
	if !ok {
		panic(key)
	}
	return s
}

func TestMagicEraserWithMask(t *testing.T) {
	r, err := Resolve(body(t, `{"gen_edit":"magic_eraser","mask":"3F2B8C1E-9A4D-4E6F-8B1A-2C3D4E5F6A7B"}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Mask != "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b" || r.GenEdit != "magic_eraser" {
		t.Errorf("resolved %+v", r)
	}
	if err := CheckInputs(r, 1, MaxInputs); err != nil {
		t.Error(err)
	}
	wantInvalid(t, CheckInputs(r, 2, MaxInputs), "inputs")
	wantInvalid(t, CheckInputs(r, 2, 9), "inputs")
}

func TestCheckInputs(t *testing.T) {
	r, _ := Resolve(core.Options{}, false)
	for n := 1; n <= 5; n++ {
		if err := CheckInputs(r, n, MaxInputs); err != nil {
			t.Errorf("%d inputs: %v", n, err)
		}
	}
	wantInvalid(t, CheckInputs(r, 0, MaxInputs), "inputs")
	wantInvalid(t, CheckInputs(r, 6, MaxInputs), "inputs")
	// A front door that takes more brackets passes its own limit.
	if err := CheckInputs(r, 9, 9); err != nil {
		t.Errorf("9 inputs up to 9: %v", err)
	}
	wantInvalid(t, CheckInputs(r, 10, 9), "inputs")
	wantInvalid(t, CheckInputs(r, 0, 9), "inputs")
}

func TestMerge(t *testing.T) {
	base := body(t, `{"sky":true,"sky_style":"clear","tonecraft":true,"privacy":true,"categories":["human face"],"quality":80,"staging_preset":"modern_family"}`)
	scene := body(t, `{"sky":false,"quality":95,"categories":[],"staging_style":"keep","wall_color":"white"}`)
	m := Merge(base, scene)
	if m.Sky == nil || *m.Sky {
		t.Error("explicit scene false must win over base true")
	}
	if *m.SkyStyle != "clear" || !*m.Tonecraft || !*m.Privacy {
		t.Error("absent scene fields must inherit the base")
	}
	if *m.Quality != 95 {
		t.Errorf("quality %d", *m.Quality)
	}
	if m.Categories == nil || len(m.Categories) != 0 {
		t.Errorf("explicit empty categories must win: %#v", m.Categories)
	}
	if m.Perspective != nil || m.Mask != nil {
		t.Error("fields given by neither must stay absent")
	}
	// Preset resolution uses the merged options: the base's preset has a clause and
	// the scene's keep overrides its style, which rule 4 refuses.
	_, err := Resolve(m, true)
	wantInvalid(t, err, "style_clause")
	// A clause-less keep preset in the base with a scene finish override works.
	m = Merge(body(t, `{"gen_edit":"indoor_staging","staging_preset":"finishes_refresh"}`), body(t, `{"floor_finish":"tiles_grey"}`))
	r, err := Resolve(m, true)
	if err != nil || r.StagingStyle != "keep" || r.FloorFinish != "tiles_grey" || r.WallColor != "warm_white" {
		t.Errorf("merged staging %+v %v", r, err)
	}
	// Merge shares no slice with its arguments, and leaves them alone.
	base = body(t, `{"categories":["human face"]}`)
	m = Merge(base, core.Options{})
	m.Categories[0] = "license plate"
	if base.Categories[0] != "human face" {
		t.Error("Merge aliased the base categories")
	}
	scene = body(t, `{"categories":["photo or frame"]}`)
	m = Merge(base, scene)
	m.Categories[0] = "x"
	if scene.Categories[0] != "photo or frame" {
		t.Error("Merge aliased the scene categories")
	}
	// Merging nothing over nothing is nothing.
	if got := Merge(core.Options{}, core.Options{}); !reflect.DeepEqual(got, core.Options{}) {
		t.Errorf("empty merge %+v", got)
	}
}

func TestRecipesFor(t *testing.T) {
	cases := []struct {
		js     string
		inputs int
		want   map[string]string
	}{
		{`{}`, 1, map[string]string{"develop": "1.3.0"}},
		{`{}`, 3, map[string]string{"develop": "1.3.0"}},
		{`{"perspective":true,"tonecraft":true}`, 1, map[string]string{"develop": "1.3.0"}},
		{`{"sky":true}`, 1, map[string]string{"develop": "1.3.0", "sky": "4.1.0"}},
		{`{"sky":true,"privacy":true}`, 2, map[string]string{"develop": "1.3.0", "sky": "4.1.0", "privacy": "1.1.0"}},
		{`{"gen_edit":"indoor_staging"}`, 1, map[string]string{"develop": "1.3.0", "indoor_staging": "1.18.0"}},
		{`{"gen_edit":"outdoor_staging"}`, 1, map[string]string{"develop": "1.3.0", "outdoor_staging": "1.9.0"}},
		{`{"gen_edit":"mess_cleaner"}`, 1, map[string]string{"develop": "1.3.0", "mess_cleaner": "1.8.0"}},
		{`{"gen_edit":"declutter_local","privacy":true}`, 5, map[string]string{"develop": "1.3.0", "declutter_local": "2.2.0", "privacy": "1.1.0"}},
		{`{"gen_edit":"magic_eraser","mask":"3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b"}`, 1, map[string]string{"develop": "1.3.0", "magic_eraser": "4.2.0"}},
	}
	for _, c := range cases {
		r, err := Resolve(body(t, c.js), false)
		if err != nil {
			t.Fatal(err)
		}
		if got := RecipesFor(r, c.inputs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s with %d inputs: %v, want %v", c.js, c.inputs, got, c.want)
		}
	}
}

// The corrections are on for enhancement orders (tonecraft on, or brackets to
// merge) and off otherwise; an explicit value wins either way.
func TestCorrectionsDefaultRule(t *testing.T) {
	on, off := true, false
	cases := []struct {
		name  string
		o     core.Options
		n     int
		color bool
		lens  bool
	}{
		{"single plain", core.Options{}, 1, false, false},
		{"single tonecraft", core.Options{Tonecraft: &on}, 1, true, true},
		{"brackets", core.Options{}, 3, true, true},
		{"brackets, colour off", core.Options{ColorCorrection: &off}, 3, false, true},
		{"tonecraft, lens off", core.Options{Tonecraft: &on, LensCorrection: &off}, 1, true, false},
		{"single, both on", core.Options{ColorCorrection: &on, LensCorrection: &on}, 1, true, true},
	}
	for _, c := range cases {
		r, err := ResolveScene(c.o, false, c.n)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if r.ColorCorrection != c.color || r.LensCorrection != c.lens {
			t.Errorf("%s: color %v lens %v, want %v %v", c.name, r.ColorCorrection, r.LensCorrection, c.color, c.lens)
		}
	}
	if _, err := ResolveScene(core.Options{}, false, MaxInputs+1); err == nil {
		t.Error("ResolveScene accepted too many inputs")
	}
	r, err := ResolveSceneUpTo(core.Options{}, false, 9, 9)
	if err != nil || !r.ColorCorrection || !r.LensCorrection {
		t.Errorf("ResolveSceneUpTo 9 of 9: %+v, %v", r, err)
	}
	if _, err := ResolveSceneUpTo(core.Options{}, false, 10, 9); err == nil {
		t.Error("ResolveSceneUpTo accepted too many inputs")
	}
	d := CorrectionsOn(core.Options{LensCorrection: &off})
	if d.ColorCorrection == nil || !*d.ColorCorrection || d.LensCorrection == nil || *d.LensCorrection {
		t.Errorf("CorrectionsOn: %+v", d)
	}
	o, err := DecodeStrings(map[string]string{"color-correction": "true", "lens-correction": "false"})
	if err != nil || o.ColorCorrection == nil || !*o.ColorCorrection || o.LensCorrection == nil || *o.LensCorrection {
		t.Errorf("flags: %+v, %v", o, err)
	}
}

// flambient is on unless set false: the pipeline blends only a scene with a flash
// frame, which the decoded inputs tell.
func TestResolveFlambient(t *testing.T) {
	off := false
	for _, c := range []struct {
		o    core.Options
		n    int
		want bool
	}{{core.Options{}, 1, true}, {core.Options{}, 2, true}, {core.Options{Flambient: &off}, 2, false}} {
		r, err := ResolveScene(c.o, false, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if r.Flambient != c.want {
			t.Errorf("%+v with %d inputs: flambient %v, want %v", c.o, c.n, r.Flambient, c.want)
		}
	}
}
