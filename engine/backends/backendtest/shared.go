package backendtest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// runShared is the contract's shared-server mode: two clients (two adapters, as two
// Porchlights would be) on one fake, their jobs interleaved. Each must get its own
// result and progress, and a cancel must reach only the job it cancels.
func runShared(t *testing.T, c Contract, photo, mask *imaging.Image, base map[string]any) {
	request := func(name string, seed int64, m *imaging.Image, progress func(float64)) backends.Request {
		feature := backends.FeatureMagicEraser
		if m == nil {
			feature = backends.FeatureDeclutter
		}
		return backends.Request{Feature: feature, Image: photo, Mask: m, Prompt: "fill with background, " + name,
			Negative: "text, watermark", Seed: seed, Steps: 6, Strength: 0.9, Guidance: 6.5, Progress: progress}
	}

	t.Run("shared server: interleaved jobs", func(t *testing.T) {
		c.Fake.Set(Script{})
		a, b := c.New(t, base), c.New(t, base)
		jobs := []struct {
			client backends.Backend
			name   string
			seed   int64
			mask   *imaging.Image
		}{{a, "client A first", 101, mask}, {b, "client B first", 202, nil}, {a, "client A second", 303, nil}, {b, "client B second", 404, mask}}
		// Alone first, for the pixels each job must give.
		want := make([]*imaging.Image, len(jobs))
		for i, j := range jobs {
			out, err := j.client.Edit(context.Background(), request(j.name, j.seed, j.mask, nil))
			if err != nil {
				t.Fatalf("%s alone: %v", j.name, err)
			}
			want[i] = out
		}
		got := make([]*imaging.Image, len(jobs))
		errs := make([]error, len(jobs))
		seen := make([][]float64, len(jobs))
		var wg sync.WaitGroup
		for i, j := range jobs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = j.client.Edit(context.Background(), request(j.name, j.seed, j.mask, func(f float64) {
					seen[i] = append(seen[i], f) // reports never overlap: Request.Progress
				}))
			}()
		}
		wg.Wait()
		for i, j := range jobs {
			if errs[i] != nil {
				t.Errorf("%s: %v", j.name, errs[i])
				continue
			}
			if d := meanAbs(got[i], want[i]); d != 0 {
				t.Errorf("%s among other jobs gave other pixels than alone (mean difference %g)", j.name, d)
			}
			if p := seen[i]; len(p) == 0 || p[len(p)-1] != 1 {
				t.Errorf("%s: progress %v does not end at 1", j.name, p)
			}
			for k := 1; k < len(seen[i]); k++ {
				if seen[i][k] < seen[i][k-1] {
					t.Errorf("%s: progress went back: %v", j.name, seen[i])
					break
				}
			}
		}
	})

	t.Run("shared server: a cancel reaches only its own job", func(t *testing.T) {
		c.Fake.Set(Script{Mode: ModeHang})
		a, b := c.New(t, base), c.New(t, base)
		n := len(c.Fake.Jobs())
		ctxA, cancelA := context.WithCancel(context.Background())
		defer cancelA()
		errA := make(chan error, 1)
		go func() {
			_, err := a.Edit(ctxA, request("client A", 11, mask, nil))
			errA <- err
		}()
		if !c.Fake.WaitOutcome(n, 10*time.Second, func(o Outcome) bool { return o == OutcomeRunning }) {
			t.Fatal("client A's job never ran")
		}
		ctxB, cancelB := context.WithCancel(context.Background())
		defer cancelB()
		errB := make(chan error, 1)
		go func() {
			_, err := b.Edit(ctxB, request("client B", 22, mask, nil))
			errB <- err
		}()
		if !c.WaitsInClient && !c.Fake.WaitJobs(10*time.Second, func(jobs []Job) bool { return len(jobs) > n+1 }) {
			t.Fatal("client B's job never reached the server")
		}
		cancelB()
		if err := <-errB; !errors.Is(err, context.Canceled) {
			t.Fatalf("client B: err = %v, want context.Canceled", err)
		}
		if o := c.Fake.Jobs()[n].Outcome; o != OutcomeRunning {
			t.Fatalf("cancelling client B's job left client A's %s", o)
		}
		cancelA()
		if err := <-errA; !errors.Is(err, context.Canceled) {
			t.Fatalf("client A: err = %v, want context.Canceled", err)
		}
		if !c.ServerCancels {
			return
		}
		if !c.Fake.WaitOutcome(n, 10*time.Second, Outcome.Cancelled) {
			t.Errorf("client A's job was not stopped: %s", c.Fake.Jobs()[n].Outcome)
		}
		if len(c.Fake.Jobs()) > n+1 {
			// Client B's job reached the server: it must end without running through.
			if !c.Fake.WaitOutcome(n+1, 10*time.Second, Outcome.Ended) || c.Fake.Jobs()[n+1].Outcome == OutcomeDone {
				t.Errorf("client B's job, cancelled while it waited, went on: %s", c.Fake.Jobs()[n+1].Outcome)
			}
		}
	})
}
