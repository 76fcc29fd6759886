package a1111_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/a1111"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
)

func newBackend(t testing.TB, url string, extra map[string]any) backends.Backend {
	t.Helper()
	raw := map[string]any{"type": "a1111", "url": url, "progress_interval": "10ms"}
	for k, v := range extra {
		raw[k] = v
	}
	b, err := a1111.New(backendtest.Spec(t, "sd", raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestContract(t *testing.T) {
	fake := backendtest.NewA1111(t)
	backendtest.RunContract(t, backendtest.Contract{
		Fake:          fake,
		New:           func(t testing.TB, extra map[string]any) backends.Backend { return newBackend(t, fake.URL, extra) },
		Progress:      true,
		ServerCancels: true,
	})
}

// The img2img fields carry the recipe: sizes on the latent grid, the checkpoint
// through override_settings, the mask only for masked features.
func TestImg2ImgFields(t *testing.T) {
	fake := backendtest.NewA1111(t)
	b := newBackend(t, fake.URL, map[string]any{"model": "juggernautXL_v9", "sampler": "Euler a", "scheduler": "Karras"})
	photo := backendtest.Photo(t, 301)
	_, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureOutdoorStaging, Image: photo,
		Prompt: "a furnished patio", Negative: "people", Seed: 31337, Steps: 12, Strength: 0.55, Guidance: 5.5})
	if err != nil {
		t.Fatal(err)
	}
	j := fake.Jobs()[0]
	if j.Width%8 != 0 || j.Height%8 != 0 || j.Width < photo.W()-4 || j.Width > photo.W()+4 {
		t.Errorf("size %dx%d for a %dx%d photo", j.Width, j.Height, photo.W(), photo.H())
	}
	if j.Model != "juggernautXL_v9" || j.Seed != 31337 || j.Steps != 12 || j.Strength != 0.55 || j.Guidance != 5.5 || j.Masked {
		t.Errorf("job %+v", j)
	}
	for _, f := range []string{"init_images", "denoising_strength", "prompt", "negative_prompt", "seed", "steps", "cfg_scale",
		"width", "height", "sampler_name", "scheduler", "override_settings", "send_images"} {
		if !slices.Contains(j.Fields, f) {
			t.Errorf("%s not sent: %v", f, j.Fields)
		}
	}
	if slices.Contains(j.Fields, "mask") {
		t.Error("a mask was sent for a maskless feature")
	}
}

func TestServerErrorRetriedClientErrorNot(t *testing.T) {
	photo := backendtest.Photo(t, 128)
	req := backends.Request{Feature: backends.FeatureMessCleaner, Image: photo, Steps: 4, Strength: 0.5}
	for _, c := range []struct {
		status, attempts int
	}{{500, 3}, {422, 1}} {
		fake := backendtest.NewA1111(t)
		fake.Set(backendtest.Script{Mode: backendtest.ModeFail, Status: c.status})
		_, err := newBackend(t, fake.URL, map[string]any{"retries": 2, "backoff": "1ms"}).Edit(context.Background(), req)
		var be *backends.Error
		if !errors.As(err, &be) || be.Status != c.status {
			t.Errorf("status %d: err = %v", c.status, err)
		}
		if fake.Attempts() != c.attempts {
			t.Errorf("status %d: %d attempts, want %d", c.status, fake.Attempts(), c.attempts)
		}
	}
}

func TestConfig(t *testing.T) {
	for _, raw := range []map[string]any{
		{"inpainting_fill": 7},
		{"mask_blur": -1},
		{"api_key": "no-colon"},
		{"progress_interval": "soon"},
	} {
		raw["type"], raw["url"] = "a1111", "http://127.0.0.1:1"
		if _, err := a1111.New(backendtest.Spec(t, "sd", raw)); err == nil {
			t.Errorf("%v accepted", raw)
		}
	}
	b, err := a1111.New(backendtest.Spec(t, "sd", map[string]any{"type": "a1111", "url": "http://127.0.0.1:1", "api_key": "user:secret"}))
	if err != nil || b.Type() != "a1111" {
		t.Fatal(err)
	}
}

func TestClassifyRoom(t *testing.T) {
	fake := backendtest.NewA1111(t)
	b := newBackend(t, fake.URL, nil).(backends.RoomClassifier)
	photo := backendtest.Photo(t, 900)
	fake.SetCaption("a dining room table with chairs and a bookshelf")
	room, err := b.ClassifyRoom(context.Background(), photo)
	if err != nil || room != "dining_room" {
		t.Fatalf("room %q err %v", room, err)
	}
	fake.SetCaption("a blurry photo of something")
	if _, err := b.ClassifyRoom(context.Background(), photo); err == nil || !strings.Contains(err.Error(), "names no room") {
		t.Errorf("err = %v", err)
	}
}
