package a1111_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

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
	if !strings.HasPrefix(j.Model, "juggernautXL_v9.safetensors [") || j.Sampler != "Euler a" || j.Scheduler != "Karras" || j.Seed != 31337 || j.Steps != 12 || j.Strength != 0.55 || j.Guidance != 5.5 || j.Masked {
		t.Errorf("job %+v", j)
	}
	for _, f := range []string{"init_images", "denoising_strength", "prompt", "negative_prompt", "seed", "steps", "cfg_scale",
		"width", "height", "sampler_name", "scheduler", "override_settings", "send_images", "force_task_id"} {
		if !slices.Contains(j.Fields, f) {
			t.Errorf("%s not sent: %v", f, j.Fields)
		}
	}
	if slices.Contains(j.Fields, "mask") {
		t.Error("a mask was sent for a maskless feature")
	}
}

// A 503 refused the job before any work and is sent again; a 500 answered a job that
// ran, and a 4xx a request at fault: neither is.
func TestServerErrorRetriedClientErrorNot(t *testing.T) {
	photo := backendtest.Photo(t, 128)
	req := backends.Request{Feature: backends.FeatureMessCleaner, Image: photo, Steps: 4, Strength: 0.5}
	for _, c := range []struct {
		status, attempts int
	}{{503, 3}, {500, 1}, {422, 1}} {
		fake := backendtest.NewA1111(t)
		fake.Set(backendtest.Script{Mode: backendtest.ModeFail, Status: c.status})
		if c.status == 503 {
			fake.Set(backendtest.Script{FailFirst: 5})
		}
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

// A server started with --nowebui has no /internal/progress: nothing tells whose job
// runs. Jobs still complete, progress comes at the end, and a cancel leaves the job
// to finish rather than interrupt what may be someone else's.
func TestServerWithoutTaskProgress(t *testing.T) {
	fake := backendtest.NewA1111(t)
	fake.DropTaskProgress()
	var seen []float64
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 4, Strength: 0.5,
		Progress: func(f float64) { seen = append(seen, f) }}
	if _, err := newBackend(t, fake.URL, nil).Edit(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(seen, []float64{1}) {
		t.Errorf("progress %v", seen)
	}
	fake.Set(backendtest.Script{Mode: backendtest.ModeHang})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		fake.WaitOutcome(1, 10*time.Second, func(o backendtest.Outcome) bool { return o == backendtest.OutcomeRunning })
		cancel()
	}()
	req.Progress = nil
	if _, err := newBackend(t, fake.URL, nil).Edit(ctx, req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if o := fake.Jobs()[1].Outcome; o != backendtest.OutcomeRunning {
		t.Errorf("the job is %s", o)
	}
}

// rawImg2Img sends a job as another client of the web UI does (its own UI, another
// program): no task id of ours.
func rawImg2Img(t *testing.T, url string) {
	t.Helper()
	var buf bytes.Buffer
	png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 64, 64)))
	body, _ := json.Marshal(map[string]any{"init_images": []string{base64.StdEncoding.EncodeToString(buf.Bytes())}, "steps": 4,
		"prompt": "someone else's", "sampler_name": "Euler a"})
	res, err := http.Post(url+"/sdapi/v1/img2img", "application/json", bytes.NewReader(body))
	if err == nil {
		res.Body.Close()
	}
}

// A job of ours that waits behind someone else's reports no progress of theirs;
// cancelling it does not interrupt theirs, and it is interrupted when it starts.
func TestCancelWhileWaitingBehindAnotherClient(t *testing.T) {
	fake := backendtest.NewA1111(t)
	fake.Set(backendtest.Script{Mode: backendtest.ModeHang})
	go rawImg2Img(t, fake.URL)
	running := func(o backendtest.Outcome) bool { return o == backendtest.OutcomeRunning }
	if !fake.WaitOutcome(0, 10*time.Second, running) {
		t.Fatal("the other client's job never ran")
	}
	var mu sync.Mutex
	var seen []float64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := newBackend(t, fake.URL, nil).Edit(ctx, backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128),
			Prompt: "ours", Steps: 4, Strength: 0.5, Progress: func(f float64) {
				mu.Lock()
				seen = append(seen, f)
				mu.Unlock()
			}})
		done <- err
	}()
	if !fake.WaitJobs(10*time.Second, func(jobs []backendtest.Job) bool { return len(jobs) == 2 }) {
		t.Fatal("our job never reached the server")
	}
	// Several reads of progress while ours waits, the other job's first step done.
	if !fake.WaitPolls(fake.Polls()+5, 10*time.Second) {
		t.Fatal("no progress was read")
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if o := fake.Jobs()[0].Outcome; o != backendtest.OutcomeRunning {
		t.Fatalf("cancelling our waiting job left the other client's %s", o)
	}
	mu.Lock()
	if len(seen) > 0 {
		t.Errorf("progress %v reported while our job waited behind another", seen)
	}
	mu.Unlock()
	// The other client stops its job; ours starts and is stopped at once.
	res, err := http.Post(fake.URL+"/sdapi/v1/interrupt", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !fake.WaitOutcome(1, 10*time.Second, backendtest.Outcome.Ended) || fake.Jobs()[1].Outcome != backendtest.OutcomeInterrupted {
		t.Errorf("our cancelled job, once it started: %s", fake.Jobs()[1].Outcome)
	}
}

// A checkpoint, sampler or scheduler the server does not have fails the job, naming
// what the server has, before anything runs: the web UI would quietly run another.
func TestUnknownNamesFailTheJob(t *testing.T) {
	fake := backendtest.NewA1111(t)
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 4, Strength: 0.5}
	for _, c := range []struct {
		extra map[string]any
		want  string
	}{
		{map[string]any{"model": "sdxl.safetensors"}, `checkpoint "sdxl.safetensors" is not on the server; it has: juggernautXL_v9.safetensors, realisticVision_v51.safetensors, SDXL/sd_xl_base_1.0.safetensors`},
		{map[string]any{"sampler": "Euler b"}, `sampler "Euler b" is not on the server; it has: DPM++ 2M,`},
		{map[string]any{"scheduler": "Karas"}, `scheduler "Karas" is not on the server; it has: Automatic, Uniform, Karras`},
	} {
		_, err := newBackend(t, fake.URL, c.extra).Edit(context.Background(), req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want it to say %s", c.extra, err, c.want)
		}
	}
	if n := fake.Attempts(); n != 0 {
		t.Errorf("%d jobs reached the server", n)
	}
	// Every alias the web UI takes is accepted: title, path, short name, hash.
	for _, name := range []string{"SDXL/sd_xl_base_1.0.safetensors", "sd_xl_base_1.0", "SDXL_sd_xl_base_1.0"} {
		if _, err := newBackend(t, fake.URL, map[string]any{"model": name, "sampler": "DPM++ 2M Karras"}).Edit(context.Background(), req); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, j := range fake.Jobs() {
		if !strings.HasPrefix(j.Model, "SDXL/sd_xl_base_1.0.safetensors [") || j.Sampler != "DPM++ 2M" || j.Scheduler != "Karras" {
			t.Errorf("job ran %s with %s/%s", j.Model, j.Sampler, j.Scheduler)
		}
	}
	nc, err := newBackend(t, fake.URL, map[string]any{"model": "nope"}).(backends.NameChecker).CheckNames(context.Background())
	if err != nil || len(nc.Missing) != 1 || len(nc.Found) != 1 {
		t.Errorf("check %+v %v", nc, err)
	}
}

// A job whose answer is lost after it was sent is not sent again (the server runs
// it on); the server's copy is stopped once it runs.
func TestLostAnswerNotSentAgain(t *testing.T) {
	fake := backendtest.NewA1111(t)
	fake.Set(backendtest.Script{DropAnswer: true, Mode: backendtest.ModeHang})
	_, err := newBackend(t, fake.URL, map[string]any{"retries": 3, "backoff": "1ms"}).Edit(context.Background(),
		backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 4, Strength: 0.5})
	if !errors.Is(err, backends.ErrMaybeStarted) {
		t.Fatalf("err = %v", err)
	}
	if !fake.WaitOutcome(0, 10*time.Second, backendtest.Outcome.Cancelled) {
		t.Errorf("the job whose answer was lost: %s", fake.Jobs()[0].Outcome)
	}
	if n := len(fake.Jobs()); n != 1 {
		t.Errorf("the job reached the server %d times", n)
	}
}

// --api-auth is HTTP basic.
func TestBasicAuth(t *testing.T) {
	fake := backendtest.NewA1111(t)
	fake.SetAuth("studio:secret")
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 4, Strength: 0.5}
	if _, err := newBackend(t, fake.URL, map[string]any{"api_key": "studio:secret"}).Edit(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	_, err := newBackend(t, fake.URL, map[string]any{"api_key": "studio:wrong"}).Edit(context.Background(), req)
	var be *backends.Error
	if !errors.As(err, &be) || be.Status != 401 || !strings.Contains(err.Error(), "Incorrect username or password") {
		t.Errorf("err = %v", err)
	}
}
