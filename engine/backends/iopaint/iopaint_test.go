package iopaint_test

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
		WaitsInClient: true, // one job in flight per server from this process
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

// A 503 refused the job before any work: it is sent again. A 500 answered a job that
// ran: it is reported with the server's message, not run again.
func TestServerErrorRetried(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{FailFirst: 2})
	b := newBackend(t, fake.URL, map[string]any{"retries": 2, "backoff": "1ms"})
	req := backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Steps: 4, Strength: 0.8}
	if _, err := b.Edit(context.Background(), req); err != nil || fake.Attempts() != 3 {
		t.Fatalf("two 503s then success: %d attempts, %v", fake.Attempts(), err)
	}
	fake.Set(backendtest.Script{Mode: backendtest.ModeFail, Status: 500})
	_, err := b.Edit(context.Background(), req)
	var be *backends.Error
	if err == nil || !errorsAs(err, &be) || be.Status != 500 || !strings.Contains(err.Error(), "CUDA out of memory") {
		t.Fatalf("err = %v", err)
	}
	if fake.Attempts() != 4 {
		t.Errorf("%d attempts, want 4", fake.Attempts())
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

// progressLog keeps what a job reported.
type progressLog struct {
	mu   sync.Mutex
	seen []float64
}

func (p *progressLog) report(f float64) {
	p.mu.Lock()
	p.seen = append(p.seen, f)
	p.mu.Unlock()
}

// check wants progress that never goes back and reaches 1 only at the end.
func (p *progressLog) check(t *testing.T, name string) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.seen
	if len(s) == 0 || s[len(s)-1] != 1 {
		t.Errorf("%s: progress %v does not end at 1", name, s)
		return
	}
	for i := 1; i < len(s); i++ {
		if s[i] < s[i-1] || s[i-1] >= 1 {
			t.Errorf("%s: progress %v goes back or reaches 1 early", name, s)
			return
		}
	}
}

// Two of our jobs on one IOPaint, whose steps go to every client, each see their
// own: by default they take turns on the server.
func TestTwoJobsKeepTheirProgressApart(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{StepDelay: 2 * time.Millisecond})
	photo := backendtest.Photo(t, 128)
	eraser, stager := newBackend(t, fake.URL, nil), newBackend(t, fake.URL, nil)
	var wg sync.WaitGroup
	logs := []*progressLog{{}, {}}
	for i, c := range []struct {
		b             backends.Backend
		steps         int
		strength      float64
		prompt        string
		mask          bool
		wantDiffSteps int
	}{{eraser, 6, 0.9, "erase", true, 5}, {stager, 40, 1, "stage", false, 40}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := backends.Request{Feature: backends.FeatureIndoorStaging, Image: photo, Prompt: c.prompt, Steps: c.steps,
				Strength: c.strength, Progress: logs[i].report}
			if c.mask {
				req.Feature, req.Mask = backends.FeatureMagicEraser, backendtest.RectMask(photo.W(), photo.H(), 10, 10, 60, 60)
			}
			if _, err := c.b.Edit(context.Background(), req); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	logs[0].check(t, "the eraser's job")
	logs[1].check(t, "the staging job")
	if n := fake.MostAtOnce(); n != 1 {
		t.Errorf("%d jobs ran on the server at once", n)
	}
}

// max_in_flight lets several jobs run at once; each still counts only the steps it
// expects and never goes back.
func TestMaxInFlight(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{Mode: backendtest.ModeHang})
	photo := backendtest.Photo(t, 128)
	b := newBackend(t, fake.URL, map[string]any{"max_in_flight": 2})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.Edit(ctx, backends.Request{Feature: backends.FeatureDeclutter, Image: photo, Prompt: "x", Steps: 10, Strength: 0.5})
		}()
	}
	if !fake.WaitJobs(10*time.Second, func(jobs []backendtest.Job) bool { return len(jobs) == 2 }) {
		t.Error("two jobs did not run at once")
	}
	cancel()
	wg.Wait()
	if _, err := iopaint.New(backendtest.Spec(t, "x", map[string]any{"type": "iopaint", "url": fake.URL, "max_in_flight": 0})); err == nil {
		t.Error("max_in_flight 0 accepted")
	}
}

// Steps from another client's job (IOPaint's own page, another program) that do not
// fit our count are not ours.
func TestAnotherClientsStepsIgnored(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{StepDelay: 2 * time.Millisecond})
	photo := backendtest.Photo(t, 128)
	other := make(chan struct{})
	go func() {
		defer close(other)
		var buf bytes.Buffer
		png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, 64, 64)))
		img := base64.StdEncoding.EncodeToString(buf.Bytes())
		body, _ := json.Marshal(map[string]any{"image": "data:image/png;base64," + img, "mask": img, "sd_steps": 60, "sd_strength": 1})
		if res, err := http.Post(fake.URL+"/api/v1/inpaint", "application/json", bytes.NewReader(body)); err == nil {
			res.Body.Close()
		}
	}()
	if !fake.WaitOutcome(0, 10*time.Second, func(o backendtest.Outcome) bool { return o == backendtest.OutcomeRunning }) {
		t.Fatal("the other client's job never ran")
	}
	var log progressLog
	_, err := newBackend(t, fake.URL, nil).Edit(context.Background(), backends.Request{Feature: backends.FeatureDeclutter, Image: photo,
		Prompt: "ours", Steps: 8, Strength: 0.5, Progress: log.report})
	if err != nil {
		t.Fatal(err)
	}
	<-other
	log.check(t, "our job")
}

// A job whose answer is lost after it was sent is not sent again: IOPaint runs it on.
func TestLostAnswerNotSentAgain(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	fake.Set(backendtest.Script{DropAnswer: true})
	_, err := newBackend(t, fake.URL, map[string]any{"retries": 3, "backoff": "1ms"}).Edit(context.Background(),
		backends.Request{Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 4, Strength: 0.5})
	if !errors.Is(err, backends.ErrMaybeStarted) {
		t.Fatalf("err = %v", err)
	}
	if n := len(fake.Jobs()); n != 1 {
		t.Errorf("the job reached the server %d times", n)
	}
}

// A second-order sampler's extra steps count for the job.
func TestSecondOrderSamplerSteps(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	var log progressLog
	_, err := newBackend(t, fake.URL, map[string]any{"sampler": "Heun"}).Edit(context.Background(), backends.Request{
		Feature: backends.FeatureDeclutter, Image: backendtest.Photo(t, 128), Prompt: "x", Steps: 10, Strength: 0.6, Progress: log.report})
	if err != nil {
		t.Fatal(err)
	}
	log.check(t, "the job")
	log.mu.Lock()
	defer log.mu.Unlock()
	if n := len(log.seen); n != backendtest.DiffusionSteps(10, 0.6, "Heun")+1 {
		t.Errorf("%d reports %v", n, log.seen)
	}
}

func TestCheckNames(t *testing.T) {
	fake := backendtest.NewIOPaint(t)
	nc, err := newBackend(t, fake.URL, map[string]any{"sampler": "Euler b"}).(backends.NameChecker).CheckNames(context.Background())
	if err != nil || len(nc.Missing) != 1 || !strings.Contains(nc.Missing[0], `sampler "Euler b" is not on the server; it has: DPM++ 2M,`) ||
		len(nc.Found) != 1 || !strings.Contains(nc.Found[0], "stable-diffusion-inpainting") {
		t.Errorf("%+v %v", nc, err)
	}
	nc, err = newBackend(t, fake.URL, map[string]any{"sampler": "Euler a"}).(backends.NameChecker).CheckNames(context.Background())
	if err != nil || len(nc.Missing) != 0 || len(nc.Found) != 2 {
		t.Errorf("%+v %v", nc, err)
	}
}
