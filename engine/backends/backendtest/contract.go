package backendtest

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Fake is what the contract needs of a fake server.
type Fake interface {
	Set(Script)
	Jobs() []Job
	Attempts() int
	Cancelled() int
	WaitCancelled(n int, d time.Duration) bool
	WaitJobs(d time.Duration, ok func(jobs []Job) bool) bool
	WaitOutcome(i int, d time.Duration, ok func(Outcome) bool) bool
}

// Contract describes an adapter for RunContract.
type Contract struct {
	Fake Fake
	// New builds the adapter against the fake with these extra config keys (on top
	// of type and url): timeout, retries, backoff.
	New func(t testing.TB, extra map[string]any) backends.Backend
	// Progress says the protocol reports intermediate progress.
	Progress bool
	// NoSeed says the protocol takes no seed (OpenAI's image edits): the seed is not
	// checked and neither are repeated runs.
	NoSeed bool
	// RecipeOnServer says the server builds its own prompt and seed from the order's
	// options (the remote backend): neither is checked.
	RecipeOnServer bool
	// ServerCancels says the protocol has a cancel the fake observes (an interrupt,
	// a queue delete or the request closing); false skips that check.
	ServerCancels bool
	// RegionWithoutMask says the protocol needs a region to edit even when the
	// request has no mask (dall-e-2's edits): the feature's region is sent.
	RegionWithoutMask bool
	// WaitsInClient says a second client's job may wait before it reaches the fake
	// (one job in flight per server, or a server in front of it that queues), so
	// the shared-server checks do not wait for it to arrive.
	WaitsInClient bool
}

// RunContract runs the behaviour every adapter must have against its fake server:
// results with and without a mask, the request's values reaching the server,
// repeatable results, progress, backend errors (4xx not retried, 5xx retried),
// cancellation, the job timeout, a server that goes away mid-job, and answers that
// are not images.
func RunContract(t *testing.T, c Contract) {
	photo := Photo(t, 320)
	w, h := photo.W(), photo.H()
	mask := RectMask(w, h, w/3, h/3, 2*w/3, 2*h/3)
	base := map[string]any{"retries": 2, "backoff": "2ms"}
	request := func(m *imaging.Image, progress func(float64)) backends.Request {
		feature := backends.FeatureMagicEraser
		if m == nil {
			feature = backends.FeatureDeclutter
		}
		return backends.Request{Feature: feature, Image: photo, Mask: m,
			Prompt: "fill with background", Negative: "text, watermark", Seed: 1234, Steps: 6,
			Strength: 0.9, Guidance: 6.5, Progress: progress}
	}
	if mask == nil {
		t.Fatal("no mask")
	}

	t.Run("masked edit", func(t *testing.T) {
		c.Fake.Set(Script{Steps: 6})
		var mu sync.Mutex
		var seen []float64
		out, err := c.New(t, base).Edit(context.Background(), request(mask, func(f float64) {
			mu.Lock()
			seen = append(seen, f)
			mu.Unlock()
		}))
		if err != nil {
			t.Fatal(err)
		}
		checkSameAspect(t, photo, out)
		in, outside := regionDiff(photo, out, mask)
		if in < 0.1 {
			t.Errorf("the masked region barely changed (mean difference %.3f)", in)
		}
		if outside > 0.02 {
			t.Errorf("outside the mask the answer moved by %.3f on average; the fake moves it by 2 levels at most", outside)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(seen) == 0 || seen[len(seen)-1] != 1 {
			t.Fatalf("progress %v does not end at 1", seen)
		}
		for i := 1; i < len(seen); i++ {
			if seen[i] < seen[i-1] {
				t.Errorf("progress went back: %v", seen)
			}
		}
		if c.Progress {
			mid := 0
			for _, f := range seen {
				if f > 0 && f < 1 {
					mid++
				}
			}
			if mid < 2 {
				t.Errorf("progress %v has no steps in between", seen)
			}
		}
		jobs := c.Fake.Jobs()
		if len(jobs) == 0 || !jobs[len(jobs)-1].Masked {
			t.Errorf("the server did not get a mask: %+v", jobs)
		}
	})

	t.Run("request values reach the server", func(t *testing.T) {
		c.Fake.Set(Script{})
		if _, err := c.New(t, base).Edit(context.Background(), request(nil, nil)); err != nil {
			t.Fatal(err)
		}
		jobs := c.Fake.Jobs()
		j := jobs[len(jobs)-1]
		if j.Masked && !c.RegionWithoutMask {
			t.Error("a request without a mask reached the server with a partial mask")
		}
		if !c.RecipeOnServer && ((!c.NoSeed && j.Seed != 1234) || !strings.Contains(j.Prompt, "fill with background")) {
			t.Errorf("seed %d prompt %q", j.Seed, j.Prompt)
		}
	})

	t.Run("repeatable", func(t *testing.T) {
		if c.NoSeed {
			t.Skip("the protocol takes no seed")
		}
		c.Fake.Set(Script{})
		b := c.New(t, base)
		a1, err := b.Edit(context.Background(), request(mask, nil))
		if err != nil {
			t.Fatal(err)
		}
		a2, err := b.Edit(context.Background(), request(mask, nil))
		if err != nil {
			t.Fatal(err)
		}
		if d := meanAbs(a1, a2); d != 0 {
			t.Errorf("the same request gave different pixels (mean difference %g)", d)
		}
	})

	t.Run("backend error", func(t *testing.T) {
		c.Fake.Set(Script{Mode: ModeFail, Status: 500})
		_, err := c.New(t, base).Edit(context.Background(), request(mask, nil))
		var be *backends.Error
		if err == nil || !errors.As(err, &be) || !strings.Contains(err.Error(), "CUDA out of memory") {
			t.Fatalf("err = %v, want a backend error carrying the server's message", err)
		}
	})

	t.Run("transient 503 retried", func(t *testing.T) {
		c.Fake.Set(Script{FailFirst: c.Fake.Attempts() + 2})
		before := c.Fake.Attempts()
		if _, err := c.New(t, base).Edit(context.Background(), request(mask, nil)); err != nil {
			t.Fatalf("two 503s then success: %v", err)
		}
		if n := c.Fake.Attempts() - before; n != 3 {
			t.Errorf("%d attempts, want 3", n)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		c.Fake.Set(Script{Mode: ModeHang})
		before, n := c.Fake.Cancelled(), len(c.Fake.Jobs())
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			// Cancel once the server is running the job.
			c.Fake.WaitOutcome(n, 10*time.Second, func(o Outcome) bool { return o != OutcomeWaiting })
			cancel()
		}()
		_, err := c.New(t, base).Edit(ctx, request(mask, nil))
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if c.ServerCancels && !c.Fake.WaitCancelled(before+1, 10*time.Second) {
			t.Error("the server never learned of the cancel")
		}
	})

	t.Run("timeout", func(t *testing.T) {
		c.Fake.Set(Script{Mode: ModeHang})
		before, jobs := c.Fake.Cancelled(), len(c.Fake.Jobs())
		extra := map[string]any{"timeout": "1s", "retries": 0}
		start := time.Now()
		_, err := c.New(t, extra).Edit(context.Background(), request(mask, nil))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the job's deadline", err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("a timeout of 1s took %v", d)
		}
		// A job that started must be abandoned on the server too (on a loaded machine
		// the deadline can pass before the job reached it).
		if c.ServerCancels && len(c.Fake.Jobs()) > jobs && !c.Fake.WaitCancelled(before+1, 10*time.Second) {
			t.Error("the server never learned the job was abandoned")
		}
	})

	t.Run("answers that are not results", func(t *testing.T) {
		for _, m := range []struct {
			mode Mode
			want string
		}{{ModeGarbage, "not an image"}, {ModeTiny, "too small"}} {
			c.Fake.Set(Script{Mode: m.mode})
			_, err := c.New(t, base).Edit(context.Background(), request(mask, nil))
			if err == nil || !strings.Contains(err.Error(), m.want) {
				t.Errorf("mode %d: err = %v, want it to say %q", m.mode, err, m.want)
			}
		}
	})

	runShared(t, c, photo, mask, base)

	// Last: the server stops listening for good.
	t.Run("server goes away mid-job", func(t *testing.T) {
		c.Fake.Set(Script{Mode: ModeDrop})
		start := time.Now()
		_, err := c.New(t, base).Edit(context.Background(), request(mask, nil))
		if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want a backend error", err)
		}
		var be *backends.Error
		if !errors.As(err, &be) {
			t.Errorf("err %T %v is not a *backends.Error", err, err)
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("noticing the server was gone took %v", d)
		}
	})
}

func checkSameAspect(t *testing.T, in, out *imaging.Image) {
	t.Helper()
	ra := float64(in.W()) / float64(in.H())
	rb := float64(out.W()) / float64(out.H())
	if math.Abs(ra-rb)/ra > 0.02 {
		t.Errorf("answer %dx%d does not keep the aspect of %dx%d", out.W(), out.H(), in.W(), in.H())
	}
}

// regionDiff returns the mean absolute sRGB difference inside and outside mask
// (answers of another size are compared after resizing).
func regionDiff(a, b, mask *imaging.Image) (in, out float64) {
	if !imaging.SameSize(a, b) {
		b = imaging.Resize(b, a.W(), a.H())
	}
	var si, so float64
	var ni, no int
	for y := 0; y < a.H(); y++ {
		ra, rb, rm := a.Row(y), b.Row(y), mask.Row(y)
		for x := 0; x < a.W(); x++ {
			var d float64
			for c := 0; c < 3; c++ {
				d += math.Abs(float64(imaging.LinearToSRGB(ra[3*x+c]) - imaging.LinearToSRGB(rb[3*x+c])))
			}
			if rm[x] >= 0.5 {
				si += d / 3
				ni++
			} else {
				so += d / 3
				no++
			}
		}
	}
	return si / float64(max(ni, 1)), so / float64(max(no, 1))
}

func meanAbs(a, b *imaging.Image) float64 {
	if !imaging.SameSize(a, b) {
		return math.Inf(1)
	}
	var s float64
	for i := range a.Pix {
		s += math.Abs(float64(a.Pix[i] - b.Pix[i]))
	}
	return s / float64(len(a.Pix))
}
