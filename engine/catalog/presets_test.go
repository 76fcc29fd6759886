package catalog

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestTonecraftPresets(t *testing.T) {
	ps, err := Presets("tonecraft")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 5 || ps[0].Key != "signature" {
		t.Fatalf("want signature and at least four more looks, got %d", len(ps))
	}
	seen := map[string]string{}
	levels, sharpen := map[bool]bool{}, map[bool]bool{}
	for _, p := range ps {
		if p.Feature != "tonecraft" || p.Name == "" || p.Description == "" {
			t.Errorf("%s: incomplete %+v", p.Key, p)
		}
		look, ok := TonecraftLook(p.Key)
		if !ok {
			t.Fatalf("%s: no look", p.Key)
		}
		if err := look.Validate(); err != nil {
			t.Errorf("%s: %v", p.Key, err)
		}
		// The settings are the look: reading them back gives the same values.
		back, err := LookFromSettings(p.Settings)
		if err != nil || !reflect.DeepEqual(back, look) {
			t.Errorf("%s: settings read back as %+v (%v), look %+v", p.Key, back, err, look)
		}
		for _, k := range []string{"white_balance_temp", "white_balance_tint", "exposure", "contrast", "highlights",
			"shadows", "whites", "blacks", "vibrance", "saturation", "warmth", "auto_levels", "sharpen", "curve"} {
			if _, ok := p.Settings[k]; !ok {
				t.Errorf("%s: settings lack %s", p.Key, k)
			}
		}
		// Every look is distinct from every other.
		b, _ := json.Marshal(look)
		if other, dup := seen[string(b)]; dup {
			t.Errorf("%s has the same settings as %s", p.Key, other)
		}
		seen[string(b)] = p.Key
		levels[look.AutoLevels], sharpen[look.Sharpen] = true, true
		// A look that changes nothing would be a placeholder.
		if look.Exposure == 0 && look.Contrast == 0 && look.Highlights == 0 && look.Shadows == 0 {
			t.Errorf("%s changes no tone", p.Key)
		}
	}
	if len(levels) != 2 || len(sharpen) != 2 {
		t.Error("the looks should use both settings of auto-levels and of sharpen")
	}
	if _, ok := TonecraftLook("nope"); ok {
		t.Error("unknown look found")
	}
	// Callers get a copy of the curve.
	l, _ := TonecraftLook("signature")
	l.Curve[1].Y = 0.9
	if l2, _ := TonecraftLook("signature"); l2.Curve[1].Y == 0.9 {
		t.Error("TonecraftLook returned the table's curve")
	}
}

func TestLookValidate(t *testing.T) {
	good, _ := TonecraftLook("signature")
	mutate := map[string]func(*Look){
		"exposure":           func(l *Look) { l.Exposure = 2.5 },
		"contrast":           func(l *Look) { l.Contrast = -1.01 },
		"white_balance_temp": func(l *Look) { l.WhiteBalanceTemp = 1.5 },
		"curve":              func(l *Look) { l.Curve = l.Curve[:1] },
		"curve[1]":           func(l *Look) { l.Curve[1].X = 0 },
		"curve[2]":           func(l *Look) { l.Curve[2].Y = 0.1 },
		"curve[4]":           func(l *Look) { l.Curve[4].Y = 1.2 },
	}
	for field, m := range mutate {
		l := good
		l.Curve = slices.Clone(good.Curve)
		m(&l)
		wantInvalid(t, l.Validate(), field)
	}
	l := good
	l.Curve = []CurvePoint{{0.1, 0}, {1, 1}}
	wantInvalid(t, l.Validate(), "curve")
	if _, err := LookFromSettings(map[string]any{"exposure": 0.1, "glow": 1}); err == nil {
		t.Error("unknown settings key accepted")
	}
	if _, err := LookFromSettings(map[string]any{"exposure": "bright"}); err == nil {
		t.Error("string exposure accepted")
	}
}

func TestStagingPresets(t *testing.T) {
	ps, err := Presets("indoor_staging")
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) < 6 {
		t.Fatalf("%d staging presets, want at least 6", len(ps))
	}
	styles := map[string]bool{}
	var keepPreset bool
	for _, p := range ps {
		s, ok := StagingPreset(p.Key)
		if !ok {
			t.Fatalf("%s missing", p.Key)
		}
		if err := s.Validate(); err != nil {
			t.Errorf("%s: %v", p.Key, err)
		}
		back, err := StagingFromSettings(p.Settings)
		if err != nil || back != s {
			t.Errorf("%s: settings read back as %+v (%v)", p.Key, back, err)
		}
		for _, k := range []string{"staging_style", "floor_finish", "wall_color"} {
			if _, ok := p.Settings[k]; !ok {
				t.Errorf("%s: settings lack %s", p.Key, k)
			}
		}
		if _, has := p.Settings["style_clause"]; has != (s.Clause != "") {
			t.Errorf("%s: style_clause shown %v with clause %q", p.Key, has, s.Clause)
		}
		styles[s.Style] = true
		if s.Style == "keep" {
			keepPreset = true
		}
		// Each preset resolves on a single order and in a batch.
		for _, inBatch := range []bool{false, true} {
			r, err := Resolve(body(t, `{"gen_edit":"indoor_staging","staging_preset":"`+p.Key+`"}`), inBatch)
			if err != nil {
				t.Errorf("%s: %v", p.Key, err)
				continue
			}
			if r.StagingPreset != p.Key || r.StagingStyle != s.Style || r.StyleClause != s.Clause ||
				r.FloorFinish != s.FloorFinish || r.WallColor != s.WallColor {
				t.Errorf("%s resolved to %+v", p.Key, r)
			}
		}
	}
	fr, _ := StagingPreset("finishes_refresh")
	if !keepPreset || fr.Style != "keep" || fr.Clause != "" || (fr.FloorFinish == "keep" && fr.WallColor == "keep") {
		t.Errorf("finishes_refresh %+v", fr)
	}
	if len(styles) < 5 {
		t.Errorf("presets use only styles %v", styles)
	}
	for _, bad := range []Staging{
		{Style: "baroque", FloorFinish: "keep", WallColor: "keep"},
		{Style: "keep", FloorFinish: "keep", WallColor: "keep"},
		{Style: "keep", Clause: "oak", FloorFinish: "tiles_grey", WallColor: "keep"},
		{Style: "modern", FloorFinish: "marble", WallColor: "keep"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

func TestPresetsByFeature(t *testing.T) {
	all, err := Presets("")
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := Presets("tonecraft")
	st, _ := Presets("indoor_staging")
	if len(all) != len(tc)+len(st) {
		t.Errorf("all %d != %d + %d", len(all), len(tc), len(st))
	}
	for _, f := range []string{"sky_replacement", "outdoor_staging", "enhancer", "declutter", "declutter_local", "magic_eraser"} {
		ps, err := Presets(f)
		if err != nil || ps == nil || len(ps) != 0 {
			t.Errorf("%s: %v %v, want an empty list", f, ps, err)
		}
	}
	for _, f := range []string{"nope", "Tonecraft", "staging"} {
		_, err := Presets(f)
		wantInvalid(t, err, "feature")
	}
	// JSON shape {key, name, feature, description, settings}.
	b, _ := json.Marshal(tc[0])
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	if keys := sortedKeys(m); !slices.Equal(keys, []string{"description", "feature", "key", "name", "settings"}) {
		t.Errorf("preset JSON keys %v", keys)
	}
	if p, ok := LookupPreset("indoor_staging", "scandi_minimal"); !ok || p.Name == "" {
		t.Error("scandi_minimal not found")
	}
	if _, ok := LookupPreset("tonecraft", "scandi_minimal"); ok {
		t.Error("a staging key found among tonecraft presets")
	}
	// Presets are copies.
	tc[0].Settings["exposure"] = 9.0
	if p, _ := LookupPreset("tonecraft", tc[0].Key); p.Settings["exposure"] == 9.0 {
		t.Error("settings map shared")
	}
}
