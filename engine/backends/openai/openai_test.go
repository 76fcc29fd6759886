package openai_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/openai"
)

const key = "sk-test-openai-key"

func newBackend(t testing.TB, url string, extra map[string]any) backends.Backend {
	t.Helper()
	raw := map[string]any{"type": "openai", "url": url, "api_key": key}
	for k, v := range extra {
		raw[k] = v
	}
	b, err := openai.New(backendtest.Spec(t, "cloud", raw))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The contract runs with streaming on, the only way the protocol reports progress
// (at the smallest gpt-image size, to keep it quick).
func TestContractStreaming(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	backendtest.RunContract(t, backendtest.Contract{
		Fake: fake,
		New: func(t testing.TB, extra map[string]any) backends.Backend {
			e := map[string]any{"stream": true, "partial_images": 3, "sizes": "1024x1024"}
			for k, v := range extra {
				e[k] = v
			}
			return newBackend(t, fake.URL, e)
		},
		Progress:      true,
		NoSeed:        true,
		ServerCancels: true,
	})
}

// The JSON answer runs on dall-e-2's small square size, which keeps it quick.
func TestContractJSON(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	backendtest.RunContract(t, backendtest.Contract{
		Fake: fake,
		New: func(t testing.TB, extra map[string]any) backends.Backend {
			e := map[string]any{"model": "dall-e-2", "sizes": "256x256"}
			for k, v := range extra {
				e[k] = v
			}
			return newBackend(t, fake.URL, e)
		},
		NoSeed:        true,
		ServerCancels: true,
	})
}

// A landscape photo goes up at the landscape size, with the gpt-image fields and no
// response_format; the answer comes back at the photo's size.
func TestSizeAndFields(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	photo := backendtest.Photo(t, 400)
	out, err := newBackend(t, fake.URL, nil).Edit(context.Background(), backends.Request{Feature: backends.FeatureIndoorStaging,
		Image: photo, Prompt: "stage the room", Steps: 30, Strength: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if out.W() != photo.W() || out.H() != photo.H() {
		t.Errorf("answer %dx%d, photo %dx%d", out.W(), out.H(), photo.W(), photo.H())
	}
	j := fake.Jobs()[0]
	if j.Width != 1536 || j.Height != 1024 || j.Model != "gpt-image-1" || j.Masked {
		t.Errorf("job %+v", j)
	}
	if !slices.Equal(j.Fields, []string{"image", "model", "n", "prompt", "quality", "size"}) {
		t.Errorf("fields %v", j.Fields)
	}
}

// dall-e-2 takes square images and answers through response_format: url, fetched
// without the API key.
func TestDallE2URL(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	photo := backendtest.Photo(t, 300)
	mask := backendtest.RectMask(photo.W(), photo.H(), 10, 10, 100, 100)
	_, err := newBackend(t, fake.URL+"/v1", map[string]any{"model": "dall-e-2", "sizes": "512x512", "response_format": "url"}).Edit(
		context.Background(), backends.Request{Feature: backends.FeatureMagicEraser, Image: photo, Mask: mask, Prompt: "remove it"})
	if err != nil {
		t.Fatal(err)
	}
	j := fake.Jobs()[0]
	if j.Width != 512 || j.Height != 512 || !j.Masked || !slices.Contains(j.Fields, "response_format") {
		t.Errorf("job %+v", j)
	}
}

func TestAuthAndClientErrors(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	photo := backendtest.Photo(t, 128)
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: photo, Prompt: "empty room"}
	b, err := openai.New(backendtest.Spec(t, "cloud", map[string]any{"type": "openai", "url": fake.URL, "api_key": "sk-wrong", "backoff": "1ms"}))
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Edit(context.Background(), req)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 401 || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Fatalf("err = %v", err)
	}
	if fake.Attempts() != 0 {
		t.Errorf("a refused key reached the job %d times", fake.Attempts())
	}
	// A misspelt parameter is named by the server and not retried.
	_, err = newBackend(t, fake.URL, map[string]any{"response_format": "b64_json"}).Edit(context.Background(), req)
	if !errors.As(err, &be) || be.Status != 400 || !strings.Contains(err.Error(), "response_format") {
		t.Fatalf("err = %v", err)
	}
	// No prompt: refused before sending.
	_, err = newBackend(t, fake.URL, nil).Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: photo})
	if err == nil || !strings.Contains(err.Error(), "prompt") {
		t.Errorf("err = %v", err)
	}
}

func TestConfig(t *testing.T) {
	for _, extra := range []map[string]any{
		{"sizes": "big"}, {"quality": "ultra"}, {"response_format": "jpeg"}, {"partial_images": 9},
	} {
		raw := map[string]any{"type": "openai", "url": "http://127.0.0.1:1"}
		for k, v := range extra {
			raw[k] = v
		}
		if _, err := openai.New(backendtest.Spec(t, "cloud", raw)); err == nil {
			t.Errorf("%v accepted", extra)
		}
	}
}
