package iopaint_test

import (
	"context"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/iopaint"
)

func newBackend(t testing.TB, url string, extra map[string]any) backends.Backend {
	t.Helper()
	raw := map[string]any{"type": "iopaint", "url": url}
	for k, v := range extra {
		raw[k] = v
	}
	b, err := iopaint.New(backendtest.Spec(t, "eraser", raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContract(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	backendtest.RunContract(t, backendtest.Contract{
		Fake:          fake,
		New:           func(t testing.TB, extra map[string]any) backends.Backend { return newBackend(t, fake.URL, extra) },
		Progress:      true,
		ServerCancels: true,
	})
}

// The request carries the InpaintRequest fields by their schema names, and the
// sampler settings from the recipe.
func TestRequestFields(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	photo := backendtest.Photo(t, 200)
	b := newBackend(t, fake.URL, map[string]any{"sampler": "DPM++ 2M", "hd_strategy": "Original"})
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureIndoorStaging, Image: photo,
		Prompt: "stage it", Negative: "cartoon", Seed: 77, Steps: 9, Strength: 0.7, Guidance: 7})
	if err != nil {
		t.Fatal(err)
	}
	j := fake.Jobs()[0]
	for _, f := range []string{"image", "mask", "prompt", "negative_prompt", "sd_seed", "sd_steps", "sd_strength",
		"sd_guidance_scale", "sd_sampler", "sd_keep_unmasked_area", "hd_strategy"} {
		if !slices.Contains(j.Fields, f) {
			t.Errorf("field %s not sent (sent %v)", f, j.Fields)
		}
	}
	if j.Steps != 9 || j.Strength != 0.7 || j.Guidance != 7 || j.Negative != "cartoon" || j.Masked {
		t.Errorf("job %+v", j)
	}
}

// A 4xx answer is the request's fault: it is not sent again.
func TestClientErrorNotRetried(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{Mode: backendtest.ModeFail, Status: 422})
	b := newBackend(t, fake.URL, map[string]any{"retries": 3, "backoff": "1ms"})
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Steps: 4, Strength: 0.8})
	var be *backends.Error
	if err == nil || !errorsAs(err, &be) || be.Status != 422 {
		t.Fatalf("err = %v", err)
	}
	if fake.Attempts() != 1 {
		t.Errorf("%d attempts, want 1", fake.Attempts())
	}
}

// A 500 is retried, then reported with the server's message.
func TestServerErrorRetried(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{Mode: backendtest.ModeFail, Status: 500})
	b := newBackend(t, fake.URL, map[string]any{"retries": 2, "backoff": "1ms"})
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Steps: 4, Strength: 0.8})
	var be *backends.Error
	if err == nil || !errorsAs(err, &be) || be.Status != 500 {
		t.Fatalf("err = %v", err)
	}
	if fake.Attempts() != 3 {
		t.Errorf("%d attempts, want 3", fake.Attempts())
	}
}

func TestConfig(t *testing.T) {
	for _, raw := range []map[string]any{
		{"type": "iopaint", "url": "http://127.0.0.1:1", "hd_strategy": "Sideways"},
		{"type": "iopaint", "url": "http://127.0.0.1:1", "progress": "perhaps"},
	} {
		if _, err := iopaint.New(backendtest.Spec(t, "x", raw)); err == nil {
			t.Errorf("%v accepted", raw)
		}
	}
}
