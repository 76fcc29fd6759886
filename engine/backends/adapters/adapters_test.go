package adapters_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/adapters"
)

func TestRegistryFromConfig(t *testing.T) {
	t.Setenv("PL_TEST_OPENAI_KEY", "sk-from-env")
	specs := map[string]map[string]any{
		"GPU": {"type": "comfyui", "url": "http://127.0.0.1:8188/", "timeout": "15m",
			"workflows": map[string]any{"indoor_staging": "../comfyui/workflows/img2img.json",
				"magic_eraser": "../comfyui/workflows/inpaint.json"}, "model": "sdxl.safetensors"},
		"eraser": {"type": "iopaint", "url": "http://127.0.0.1:8080", "retries": 1},
		"sd":     {"type": "a1111", "url": "http://127.0.0.1:7860", "sampler": "Euler a"},
		"cloud":  {"type": "openai", "url": "https://api.openai.com", "api_key_env": "PL_TEST_OPENAI_KEY"},
		"studio": {"type": "remote", "url": "http://studio.lan:8787", "api_key": "sk-studio"},
	}
	features := map[string]string{
		"indoor_staging":  "gpu",
		"outdoor_staging": "sd",
		"mess_cleaner":    "cloud",
		"declutter_local": "studio", // the gen_edit spelling works too
		"magic_eraser":    "eraser",
		"room_classifier": "sd",
	}
	reg, err := adapters.NewRegistry(specs, features)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"indoor_staging": "gpu (comfyui)", "outdoor_staging": "sd (a1111)", "mess_cleaner": "cloud (openai)",
		"declutter": "studio (remote)", "magic_eraser": "eraser (iopaint)"}
	for f, label := range want {
		b, err := reg.For(f)
		if err != nil || backends.Label(b) != label || !reg.Available(f) {
			t.Errorf("%s: %v %v", f, b, err)
		}
	}
	if reg.RoomClassifier() == nil {
		t.Error("no room classifier")
	}
	if len(reg.Backends()) != 5 || strings.Join(reg.Features(), ",") != "declutter,indoor_staging,magic_eraser,mess_cleaner,outdoor_staging" {
		t.Errorf("backends %v features %v", reg.Backends(), reg.Features())
	}
}

// A feature without a backend is unavailable and its error says how to configure one.
func TestUnconfiguredFeature(t *testing.T) {
	reg, err := adapters.NewRegistry(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if reg.Available("indoor_staging") {
		t.Error("available without config")
	}
	_, err = reg.For("indoor_staging")
	if !errors.Is(err, backends.ErrNotConfigured) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"indoor_staging has no model backend", "`backends`", "`features`", "type: comfyui", "features: {indoor_staging: gpu}"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not say %q", err, s)
		}
	}
	var nilReg *backends.Registry
	if nilReg.Available("declutter") || len(nilReg.Features()) != 0 {
		t.Error("a nil registry has backends")
	}
}

func TestConfigMistakesNameTheKey(t *testing.T) {
	dir := t.TempDir()
	wf := filepath.Join(dir, "wf.json")
	os.WriteFile(wf, []byte(`{"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}}, "2": {"class_type": "SaveImage", "inputs": {"images": ["1", 0]}}}`), 0o644)
	ok := map[string]any{"type": "iopaint", "url": "http://127.0.0.1:8080"}
	cases := []struct {
		specs    map[string]map[string]any
		features map[string]string
		want     string
	}{
		{map[string]map[string]any{"x": {"url": "http://h"}}, nil, "backends.x.type is missing"},
		{map[string]map[string]any{"x": {"type": "iopaint"}}, nil, "backends.x.url is missing"},
		{map[string]map[string]any{"x": {"type": "midjourney", "url": "http://h"}}, nil, `unknown type "midjourney"`},
		{map[string]map[string]any{"x": {"type": "iopaint", "url": "ftp://h"}}, nil, "backends.x.url"},
		{map[string]map[string]any{"x": {"type": "iopaint", "url": "http://h", "timeout": "soon"}}, nil, "backends.x.timeout"},
		{map[string]map[string]any{"x": {"type": "iopaint", "url": "http://h", "modle": "lama"}}, nil, "backends.x.modle: unknown key"},
		{map[string]map[string]any{"x": {"type": "openai", "url": "http://h", "api_key_env": "PL_TEST_UNSET_VAR"}}, nil, "PL_TEST_UNSET_VAR"},
		{map[string]map[string]any{"x": ok}, map[string]string{"indoor_staging": "y"}, `names backend "y", which is not defined`},
		{nil, map[string]string{"indoor_staging": "y"}, "no backend is defined"},
		{map[string]map[string]any{"x": ok}, map[string]string{"sky_replacement": "x"}, "features.sky_replacement: not a feature"},
		{map[string]map[string]any{"x": {"type": "comfyui", "url": "http://h", "workflows": map[string]any{"declutter": wf}}},
			map[string]string{"indoor_staging": "x"}, "workflows.indoor_staging is not set"},
		{map[string]map[string]any{"x": {"type": "remote", "url": "http://h"}}, nil, "api_key"},
		{map[string]map[string]any{"x": ok}, map[string]string{"room_classifier": "x"}, "cannot classify rooms"},
	}
	for _, c := range cases {
		_, err := adapters.NewRegistry(c.specs, c.features)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v %v: err = %v, want %q", c.specs, c.features, err, c.want)
		}
	}
}
