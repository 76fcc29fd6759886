package catalog

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/core"
)

func installUserPresets(t *testing.T, list ...UserPreset) {
	t.Helper()
	if err := SetUserPresets(list); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = SetUserPresets(nil) })
}

func fptr(v float64) *float64 { return &v }

func TestUserPresetSelectedLikeABuiltIn(t *testing.T) {
	installUserPresets(t, UserPreset{Key: "bright-kitchen", Name: "Bright kitchen", Base: "bright_airy",
		Options: core.Options{Exposure: fptr(0.5), Saturation: fptr(-20)}})

	if !slices.Contains(PresetKeys(PresetsTonecraft), "bright-kitchen") {
		t.Fatalf("keys %v lack the user preset", PresetKeys(PresetsTonecraft))
	}
	list, err := Presets(PresetsTonecraft)
	if err != nil {
		t.Fatal(err)
	}
	last := list[len(list)-1]
	if last.Key != "bright-kitchen" || last.Settings["base"] != "bright_airy" || last.Settings["exposure"] != 0.5 {
		t.Fatalf("listed as %+v", last)
	}

	o := body(t, `{"tonecraft": true, "tonecraft_profile": "bright-kitchen", "saturation": 10}`)
	r, err := Resolve(o, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.TonecraftProfile != "bright-kitchen" || r.Exposure != 0.5 || r.Saturation != 10 {
		t.Fatalf("resolved profile %q exposure %v saturation %v; want the preset's exposure and the order's saturation",
			r.TonecraftProfile, r.Exposure, r.Saturation)
	}
	base, _ := TonecraftLook("bright_airy")
	look, ok := TonecraftLook("bright-kitchen")
	if !ok || look.Exposure != base.Exposure || r.TonecraftLevels != base.AutoLevels {
		t.Fatalf("look %+v, want the base's", look)
	}
}

func TestUserPresetsRefused(t *testing.T) {
	cases := map[string]UserPreset{
		"built-in key":  {Key: "signature", Base: "natural"},
		"bad key":       {Key: "Has Space", Base: "natural"},
		"unknown base":  {Key: "mine", Base: "nope"},
		"content edit":  {Key: "mine", Base: "natural", Options: core.Options{Sky: new(bool)}},
		"out of range":  {Key: "mine", Base: "natural", Options: core.Options{Exposure: fptr(9)}},
		"user as base":  {Key: "mine", Base: "mine"},
		"zero-length":   {Key: "", Base: "natural"},
		"format option": {Key: "mine", Base: "natural", Options: core.Options{Quality: new(int)}},
	}
	for name, p := range cases {
		if err := SetUserPresets([]UserPreset{p}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := SetUserPresets([]UserPreset{{Key: "a", Base: "natural"}, {Key: "a", Base: "natural"}}); err == nil {
		t.Error("a key used twice was accepted")
	}
	if len(UserPresets()) != 0 {
		t.Fatalf("a refused list was installed: %+v", UserPresets())
	}
	if _, err := DecodeOptions(map[string]json.RawMessage{"tonecraft_profile": json.RawMessage(`"mine"`)}); err == nil {
		t.Error("an uninstalled user preset was accepted as tonecraft_profile")
	}
}

func TestUserPresetFromOptionsKeepsDevelopSettingsOnly(t *testing.T) {
	installUserPresets(t, UserPreset{Key: "warm-base", Base: "warm_inviting", Options: core.Options{Contrast: fptr(15)}})
	profile, sky := "warm-base", true
	p := UserPresetFromOptions("next", "Next", core.Options{TonecraftProfile: &profile, Sky: &sky, Exposure: fptr(1)})
	if p.Base != "warm_inviting" || p.Options.Sky != nil || p.Options.Exposure == nil || *p.Options.Exposure != 1 ||
		p.Options.Contrast == nil || *p.Options.Contrast != 15 {
		t.Fatalf("preset %+v", p)
	}
	if err := SetUserPresets(append(UserPresets(), p)); err != nil {
		t.Fatalf("a preset made from options is refused: %v", err)
	}
}

func TestUserPresetConfigEntriesRoundTrip(t *testing.T) {
	p := UserPreset{Key: "crisp-2", Name: "Crisp, lighter", Base: "crisp_modern",
		Options: core.Options{Exposure: fptr(0.3), Shadows: fptr(25)}}
	got, err := DecodeUserPresets([]map[string]any{p.Map()})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Key != p.Key || got[0].Name != p.Name || got[0].Base != p.Base ||
		*got[0].Options.Exposure != 0.3 || *got[0].Options.Shadows != 25 {
		t.Fatalf("round trip gave %+v", got)
	}
	bad := []map[string]any{
		{"key": "x", "base": "natural", "options": map[string]any{"exposure": "bright"}},
		{"key": "x", "base": "natural", "colour": 1},
		{"key": 3, "base": "natural"},
	}
	for _, e := range bad {
		if _, err := DecodeUserPresets([]map[string]any{e}); err == nil {
			t.Errorf("%v accepted", e)
		}
	}
}
