package comfyui_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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

// The contract runs on a server of each kind: one whose /interrupt stops whatever
// runs, a newer one that takes our prompt ids and stops only the prompt named, and
// an older one whose history has no status.
func TestContract(t *testing.T) {
	for _, kind := range []string{"global interrupt", "modern", "no status"} {
		t.Run(kind, func(t *testing.T) {
			fake := backendtest.NewComfyUI(t)
			switch kind {
			case "modern":
				fake.Modern()
			case "no status":
				fake.NoStatus()
			}
			backendtest.RunContract(t, backendtest.Contract{
				Fake:          fake,
				New:           func(t testing.TB, extra map[string]any) backends.Backend { return newBackend(t, fake.URL, extra) },
				Progress:      true,
				ServerCancels: true,
			})
		})
	}
}

// A workflow with two samplers (a base pass, then a refiner) reports each from zero:
// progress keeps the highest fraction.
func TestProgressOfSeveralSamplersNeverGoesBack(t *testing.T) {
	wf := `{
  "1": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": "{{model}}"}},
  "2": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}},
  "3": {"class_type": "VAEEncode", "inputs": {"pixels": ["2", 0], "vae": ["1", 2]}},
  "4": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{prompt}}", "clip": ["1", 1]}},
  "5": {"class_type": "CLIPTextEncode", "inputs": {"text": "{{negative}}", "clip": ["1", 1]}},
  "6": {"class_type": "KSampler", "inputs": {"seed": "{{seed}}", "steps": "{{steps}}", "cfg": "{{cfg}}", "sampler_name": "dpmpp_2m",
    "scheduler": "karras", "denoise": "{{denoise}}", "model": ["1", 0], "positive": ["4", 0], "negative": ["5", 0], "latent_image": ["3", 0]}},
  "7": {"class_type": "KSampler", "inputs": {"seed": "{{seed}}", "steps": 3, "cfg": "{{cfg}}", "sampler_name": "euler",
    "scheduler": "normal", "denoise": 0.3, "model": ["1", 0], "positive": ["4", 0], "negative": ["5", 0], "latent_image": ["6", 0]}},
  "8": {"class_type": "VAEDecode", "inputs": {"samples": ["7", 0], "vae": ["1", 2]}},
  "9": {"class_type": "SaveImage", "inputs": {"filename_prefix": "porchlight", "images": ["8", 0]}}
}`
	p := filepath.Join(t.TempDir(), "refine.json")
	os.WriteFile(p, []byte(wf), 0o644)
	fake := backendtest.NewComfyUI(t)
	b := newBackend(t, fake.URL, map[string]any{"workflows": map[string]any{"declutter": p}})
	var seen []float64
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128),
		Prompt: "x", Seed: 5, Steps: 6, Strength: 0.8, Guidance: 5, Progress: func(f float64) { seen = append(seen, f) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] < seen[i-1] {
			t.Fatalf("progress went back: %v", seen)
		}
	}
	if len(seen) < 3 || seen[len(seen)-1] != 1 {
		t.Errorf("progress %v", seen)
	}
}

// On a server whose history has no status, a failed run ends the job with the
// WebSocket's error at once, and without the WebSocket from the empty history entry,
// instead of polling until the timeout.
func TestFailureOnServerWithoutStatus(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	fake.NoStatus()
	fake.Set(backendtest.Script{Mode: backendtest.ModeFail})
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Seed: 5, Steps: 4, Strength: 0.8, Guidance: 5}
	for _, progress := range []bool{true, false} {
		_, err := newBackend(t, fake.URL, map[string]any{"progress": progress, "timeout": "20s"}).Edit(context.Background(), req)
		want := "CUDA out of memory"
		if !progress {
			want = "without an image from node 8"
		}
		if err == nil || errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), want) {
			t.Errorf("progress %v: err = %v, want it to say %q", progress, err, want)
		}
	}
}

// A prompt whose answer was lost may be queued: it is found by our client id and
// taken back, never queued again.
func TestLostQueueAnswerTakenBack(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	fake.Set(backendtest.Script{DropAnswer: true, Mode: backendtest.ModeHang})
	_, err := newBackend(t, fake.URL, map[string]any{"retries": 3, "backoff": "1ms"}).Edit(context.Background(),
		backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Seed: 5, Steps: 4, Strength: 0.8, Guidance: 5})
	if !errors.Is(err, backends.ErrMaybeStarted) {
		t.Fatalf("err = %v", err)
	}
	if !fake.WaitOutcome(0, 10*time.Second, backendtest.Outcome.Cancelled) {
		t.Errorf("the prompt whose answer was lost: %s", fake.Jobs()[0].Outcome)
	}
	if n := len(fake.Jobs()); n != 1 {
		t.Errorf("queued %d times", n)
	}
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

// A workflow that breaks ComfyUI's validation (a checkpoint or sampler the server
// lacks, a number out of bounds) is refused with the node's error, and is not
// queued again.
func TestInvalidWorkflowRefused(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	img, err := os.ReadFile("workflows/img2img.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		from, to, model, want string
		steps                 int
	}{
		{"", "", "sdxl.safetensors", "node 1 (CheckpointLoaderSimple): Value not in list: ckpt_name: 'sdxl.safetensors' not in ['realisticVision_v51.safetensors'", 3},
		{`"dpmpp_2m"`, `"dpmpp_2m_karras"`, "", "node 6 (KSampler): Value not in list: sampler_name: 'dpmpp_2m_karras' not in", 3},
		{"", "", "", "node 6 (KSampler): Value 0 smaller than min of 1: steps", 0},
	} {
		p := filepath.Join(t.TempDir(), "bad.json")
		os.WriteFile(p, []byte(strings.Replace(string(img), c.from, c.to, 1)), 0o644)
		extra := map[string]any{"workflows": map[string]any{"declutter": p}}
		if c.model != "" {
			extra["model"] = c.model
		}
		before := fake.Attempts()
		_, err := newBackend(t, fake.URL, extra).Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter,
			Image: backendtest.Photo(t, 128), Steps: c.steps, Strength: 0.8})
		var be *backends.Error
		if err == nil || !errors.As(err, &be) || be.Status != 400 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("err = %v, want it to say %s", err, c.want)
		}
		if n := fake.Attempts() - before; n != 1 {
			t.Errorf("%d attempts", n)
		}
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

// The checkpoint and every fixed choice of the workflows are checked against the
// server's node types.
func TestCheckNames(t *testing.T) {
	fake := backendtest.NewComfyUI(t)
	custom := filepath.Join(t.TempDir(), "custom.json")
	os.WriteFile(custom, []byte(`{"1": {"class_type": "LoadImage", "inputs": {"image": "{{image}}"}},
	  "2": {"class_type": "UltimateSDUpscale", "inputs": {"image": ["1", 0]}},
	  "3": {"class_type": "SaveImage", "inputs": {"images": ["2", 0], "filename_prefix": "x"}}}`), 0o644)
	b := newBackend(t, fake.URL, map[string]any{"model": "sdxl.safetensors",
		"workflows": map[string]any{"indoor_staging": "workflows/img2img.json", "declutter": custom}})
	nc, err := b.(backends.NameChecker).CheckNames(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node type UltimateSDUpscale (node 2 of custom.json) is not installed on the server",
		`ckpt_name "sdxl.safetensors" (node 1 of img2img.json) is not on the server; it has: realisticVision_v51.safetensors, sd_xl_base_1.0.safetensors`}
	if len(nc.Missing) != 2 || !strings.HasPrefix(nc.Missing[0], want[0]) || !strings.HasPrefix(nc.Missing[1], want[1]) {
		t.Errorf("missing %q", nc.Missing)
	}
	if !slices.Contains(nc.Found, `sampler_name "dpmpp_2m"`) || !slices.Contains(nc.Found, `scheduler "karras"`) {
		t.Errorf("found %q", nc.Found)
	}
}
