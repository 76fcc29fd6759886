package comfyui_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/comfyui"
)

func newBackend(t testing.TB, url string, extra map[string]any) backends.Backend {
	t.Helper()
	raw := map[string]any{"type": "comfyui", "url": url, "model": "realisticVision_v51.safetensors",
		"poll_interval": "20ms",
		"workflows": map[string]any{
			"magic_eraser":   "workflows/inpaint.json",
			"indoor_staging": "workflows/img2img.json",
			"declutter":      "workflows/img2img.json",
		}}
	for k, v := range extra {
		raw[k] = v
	}
	b, err := comfyui.New(backendtest.Spec(t, "gpu", raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContract(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	backendtest.RunContract(t, backendtest.Contract{
		Fake:          fake,
		New:           func(t testing.TB, extra map[string]any) backends.Backend { return newBackend(t, fake.URL, extra) },
		Progress:      true,
		ServerCancels: true,
	})
}

// The placeholders reach the KSampler typed (seed and steps integers), the checkpoint
// name comes from model, and the mask travels only where the workflow loads one.
func TestWorkflowFilled(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	b := newBackend(t, fake.URL, nil)
	photo := backendtest.Photo(t, 256)
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureIndoorStaging, Image: photo,
		Prompt: "a bright living room, contemporary sofa", Negative: "cartoon", Seed: 987654, Steps: 7, Strength: 0.65, Guidance: 6})
	if err != nil {
		t.Fatal(err)
	}
	j := fake.Jobs()[0]
	if j.Seed != 987654 || j.Steps != 7 || j.Strength != 0.65 || j.Guidance != 6 || j.Model != "realisticVision_v51.safetensors" ||
		j.Prompt != "a bright living room, contemporary sofa" || j.Negative != "cartoon" {
		t.Errorf("job %+v", j)
	}
	for _, u := range fake.Uploads() {
		if strings.Contains(u, "mask") {
			t.Errorf("img2img workflow uploaded a mask: %v", fake.Uploads())
		}
	}
}

// A workflow that breaks ComfyUI's validation is refused with the node's error, and
// is not queued again.
func TestInvalidWorkflowRefused(t *testing.T) {
	dir := t.TempDir()
	wf := `{"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}},
	        "2": {"class_type": "SaveImage", "inputs": {"images": ["1", 0], "filename_prefix": "x", "quality": 3}}}`
	p := filepath.Join(dir, "bad.json")
	os.WriteFile(p, []byte(wf), 0o644)
	fake := backendtest.NewComfyUI(t)
	b := newBackend(t, fake.URL, map[string]any{"workflows": map[string]any{"declutter": p}})
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Steps: 3, Strength: 0.8})
	var be *backends.Error
	if err == nil || !errors.As(err, &be) || be.Status != 400 || !strings.Contains(err.Error(), "quality") {
		t.Fatalf("err = %v", err)
	}
	if fake.Attempts() != 1 {
		t.Errorf("%d attempts", fake.Attempts())
	}
}

func TestConfigRefusals(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	noImage := write("noimage.json", `{"1": {"class_type": "SaveImage", "inputs": {"images": ["2", 0]}}}`)
	unknown := write("unknown.json", `{"1": {"class_type": "LoadImage", "inputs": {"image": "{{picture}}"}}, "2": {"class_type": "SaveImage", "inputs": {}}}`)
	twoOut := write("two.json", `{"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}}, "2": {"class_type": "SaveImage", "inputs": {}}, "3": {"class_type": "PreviewImage", "inputs": {}}}`)
	uiFormat := write("ui.json", `{"nodes": [], "links": []}`)
	cases := []struct {
		workflows map[string]any
		extra     map[string]any
		want      string
	}{
		{map[string]any{}, nil, "needs a workflow"},
		{map[string]any{"declutter": filepath.Join(dir, "missing.json")}, nil, "missing.json"},
		{map[string]any{"declutter": noImage}, nil, "{{image}}"},
		{map[string]any{"declutter": unknown}, nil, "{{picture}}"},
		{map[string]any{"declutter": twoOut}, nil, "output_node"},
		{map[string]any{"declutter": uiFormat}, nil, "API Format"},
		{map[string]any{"staging": "workflows/img2img.json"}, nil, "not a feature"},
		{map[string]any{"declutter": "workflows/img2img.json"}, map[string]any{"model": ""}, "{{model}}"},
	}
	for _, c := range cases {
		raw := map[string]any{"type": "comfyui", "url": "http://127.0.0.1:1", "model": "m", "workflows": c.workflows}
		for k, v := range c.extra {
			raw[k] = v
		}
		_, err := comfyui.New(backendtest.Spec(t, "gpu", raw))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want it to mention %s", c.workflows, err, c.want)
		}
	}
	// The magic eraser needs a workflow that loads the mask.
	b, err := comfyui.New(backendtest.Spec(t, "gpu", map[string]any{"type": "comfyui", "url": "http://127.0.0.1:1", "model": "m",
		"workflows": map[string]any{"magic_eraser": "workflows/img2img.json"}}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.(backends.FeatureChecker).CheckFeature(backends.FeatureMagicEraser); err == nil || !strings.Contains(err.Error(), "{{mask}}") {
		t.Errorf("magic eraser without a mask workflow: %v", err)
	}
	if err := b.(backends.FeatureChecker).CheckFeature(backends.FeatureOutdoorStaging); err == nil {
		t.Error("a feature without a workflow was accepted")
	}
}
