package ui

import (
	"path/filepath"
	"slices"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

func TestPresetKeyFromName(t *testing.T) {
	for name, want := range map[string]string{
		"Bright kitchen":     "bright-kitchen",
		"  Dusk / exterior ": "dusk-exterior",
		"Ätsch 2":            "tsch-2",
		"!!!":                "",
	} {
		if got := presetKey(name); got != want {
			t.Errorf("presetKey(%q) = %q, want %q", name, got, want)
		}
	}
}

// A saved preset is installed at once and written to the config file in the form
// the config loader reads back.
func TestSavePresetInstallsAndWritesIt(t *testing.T) {
	t.Cleanup(func() { _ = catalog.SetUserPresets(nil) })
	file := filepath.Join(t.TempDir(), "config.yaml")
	cfg := NewConfig(viper.New(), file)
	ev, profile := 0.7, "warm_inviting"
	key, err := savePreset(cfg, "Warm kitchen", core.Options{TonecraftProfile: &profile, Exposure: &ev})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := catalog.LookupPreset(catalog.PresetsTonecraft, key); !ok || p.Settings["exposure"] != 0.7 {
		t.Fatalf("preset %s not installed: %+v", key, p)
	}
	// Saving again under the same name replaces it.
	ev = -0.3
	if _, err := savePreset(cfg, "Warm kitchen", core.Options{TonecraftProfile: &profile, Exposure: &ev}); err != nil {
		t.Fatal(err)
	}
	if n := len(catalog.UserPresets()); n != 1 {
		t.Fatalf("%d presets after saving one name twice", n)
	}

	v := viper.New()
	v.SetConfigFile(file)
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	var entries []map[string]any
	if err := v.UnmarshalKey(KeyPresets, &entries); err != nil {
		t.Fatal(err)
	}
	got, err := catalog.DecodeUserPresets(entries)
	if err != nil {
		t.Fatalf("the file's presets do not load: %v", err)
	}
	if len(got) != 1 || got[0].Key != "warm-kitchen" || got[0].Base != "warm_inviting" || *got[0].Options.Exposure != -0.3 {
		t.Fatalf("file holds %+v", got)
	}

	if _, err := savePreset(cfg, "Signature", core.Options{}); err == nil {
		t.Error("a preset named after a built-in look was saved")
	}
}

// A look saved while the window is open is offered by the forms at their next show.
func TestSavedPresetIsOfferedByTheForm(t *testing.T) {
	test.NewTempApp(t)
	t.Cleanup(func() { _ = catalog.SetUserPresets(nil) })
	f := newOptionsForm(false, nil, nil)
	f.Set(core.Options{}, core.Options{}, false)
	sel := func() *widget.Select {
		var found *widget.Select
		var walk func(o fyne.CanvasObject)
		walk = func(o fyne.CanvasObject) {
			switch v := o.(type) {
			case *widget.Select:
				if slices.Contains(v.Options, "Signature") {
					found = v
				}
			case *fyne.Container:
				for _, c := range v.Objects {
					walk(c)
				}
			}
		}
		walk(f.fields["tonecraft_profile"].row)
		return found
	}
	if s := sel(); s == nil || slices.Contains(s.Options, "Dusk glow") {
		t.Fatalf("the look list before saving: %v", s)
	}
	cfg := NewConfig(viper.New(), filepath.Join(t.TempDir(), "config.yaml"))
	if _, err := savePreset(cfg, "Dusk glow", core.Options{}); err != nil {
		t.Fatal(err)
	}
	f.Set(core.Options{}, core.Options{}, false)
	if s := sel(); s == nil || !slices.Contains(s.Options, "Dusk glow") {
		t.Fatalf("the look list after saving: %v", s.Options)
	}
}
