package openai_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/openai"
	"github.com/porchlight/porchlight/engine/imaging"
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
		NoSeed:            true,
		ServerCancels:     true,
		RegionWithoutMask: true,
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
		{"quality": "hd"}, {"model": "dall-e-2", "quality": "high"}, {"model": "gpt-image-1", "quality": "standard"},
		{"model": "dall-e-2", "sizes": "1536x1024"},
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

// dall-e-2 takes the photo as an RGBA PNG. Without the order's mask the feature's
// region is transparent in the photo itself, the rest kept; with it, the mask goes
// along.
func TestDallE2Transparency(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	photo := backendtest.Photo(t, 300)
	b := newBackend(t, fake.URL, map[string]any{"model": "dall-e-2", "sizes": "256x256", "quality": "standard"})
	out, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: photo, Prompt: "clear the floor"})
	if err != nil {
		t.Fatal(err)
	}
	j := fake.Jobs()[0]
	if !j.Masked || slices.Contains(j.Fields, "mask") {
		t.Errorf("job %+v: the region belongs in the photo's transparency", j)
	}
	// Above the region the answer is the photo's; in it, the model's.
	_, y0, _, _ := openai.Region(backends.FeatureDeclutter)
	top := int(y0 * float64(photo.H()) * 0.8)
	above := backendtest.RectMask(photo.W(), photo.H(), 0, 0, photo.W(), top)
	if d := meanDiff(photo, out, above); d > 0.03 {
		t.Errorf("above the region the answer moved by %.3f", d)
	}
	mask := backendtest.RectMask(photo.W(), photo.H(), 20, 20, 90, 90)
	if _, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureMagicEraser, Image: photo, Mask: mask, Prompt: "remove it"}); err != nil {
		t.Fatal(err)
	}
	if j := fake.Jobs()[1]; !j.Masked || !slices.Contains(j.Fields, "mask") {
		t.Errorf("job %+v", j)
	}
	if _, err := b.Edit(context.Background(), backends.Request{Feature: backends.FeatureMagicEraser, Image: photo, Prompt: "remove it"}); err == nil {
		t.Error("the magic eraser ran without a mask")
	}
}

// Even a photo of pure noise fits dall-e-2's 4 MB at 1024x1024 as an RGBA PNG.
func TestDallE2SizeLimit(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	noise := imaging.New(1024, 1024, 3)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = rng.Float32()
	}
	_, err := newBackend(t, fake.URL, map[string]any{"model": "dall-e-2", "sizes": "1024x1024"}).Edit(context.Background(),
		backends.Request{Feature: backends.FeatureIndoorStaging, Image: noise, Prompt: "stage it"})
	if err != nil {
		t.Fatal(err)
	}
	if j := fake.Jobs()[0]; j.Width != 1024 || j.Height != 1024 {
		t.Errorf("sent at %dx%d", j.Width, j.Height)
	}
}

// meanDiff is the mean absolute difference of a and b (resized to a) where m is set.
func meanDiff(a, b, m *imaging.Image) float64 {
	if !imaging.SameSize(a, b) {
		b = imaging.Resize(b, a.W(), a.H())
	}
	var s float64
	n := 0
	for y := 0; y < a.H(); y++ {
		ra, rb, rm := a.Row(y), b.Row(y), m.Row(y)
		for x := 0; x < a.W(); x++ {
			if rm[x] < 0.5 {
				continue
			}
			for c := 0; c < 3; c++ {
				s += math.Abs(float64(imaging.LinearToSRGB(ra[3*x+c]) - imaging.LinearToSRGB(rb[3*x+c])))
				n++
			}
		}
	}
	return s / float64(max(n, 1))
}

func TestCheckNames(t *testing.T) {
	fake := backendtest.NewOpenAI(t, key)
	for model, ok := range map[string]bool{"dall-e-2": true, "gpt-image-9": false} {
		nc, err := newBackend(t, fake.URL+"/v1", map[string]any{"model": model}).(backends.NameChecker).CheckNames(context.Background())
		if err != nil || (len(nc.Missing) == 0) != ok || (!ok && !strings.Contains(nc.Missing[0], "gpt-image-1, dall-e-2")) {
			t.Errorf("%s: %+v %v", model, nc, err)
		}
	}
}
