package pipeline

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

// cancelBound is how soon after a cancel a running order must end. The figure that
// counts is the logged one; the bound is generous for a loaded machine.
const cancelBound = 5 * time.Second

// cancelInside runs req on p, cancels it once the step named step has reported
// progress from inside its algorithm (not just its start), and checks that the step
// itself and the order both end with the context's error within cancelBound. It
// returns the time from the cancel to the end of the step.
func cancelInside(t *testing.T, p *Pipeline, step string, req Request) time.Duration {
	t.Helper()
	s, ok := p.Step(step)
	if !ok {
		t.Fatalf("step %s is not registered", step)
	}
	var stepErr error
	var stepEnd time.Time
	inner := s.Run
	s.Run = func(ctx context.Context, j *Job) error {
		err := inner(ctx, j)
		stepErr, stepEnd = err, time.Now()
		return err
	}
	if err := p.Register(s); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inside := make(chan struct{})
	var once sync.Once
	start := -1.0
	report := func(pr Progress) {
		if pr.Step != step {
			return
		}
		if start < 0 {
			start = pr.Percent // the step's first report, sent before it runs
			return
		}
		if pr.Percent > start {
			once.Do(func() { close(inside) })
		}
	}
	done := make(chan error, 1)
	go func() {
		_, err := p.Run(ctx, req, report)
		done <- err
	}()
	select {
	case <-inside:
	case err := <-done:
		t.Fatalf("the order ended (%v) before %s reported progress", err, step)
	}
	cancelled := time.Now()
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(cancelBound):
		t.Fatalf("the order still runs %v after the cancel", cancelBound)
	}
	ended := time.Since(cancelled)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("order ended with %v, want context.Canceled", err)
	}
	if !errors.Is(stepErr, context.Canceled) {
		t.Fatalf("step %s returned %v, want context.Canceled", step, stepErr)
	}
	latency := stepEnd.Sub(cancelled)
	t.Logf("%s: the step returned %v after the cancel (the order %v)", step, latency.Round(time.Millisecond), ended.Round(time.Millisecond))
	if ended > cancelBound {
		t.Fatalf("the order ended %v after the cancel, want within %v", ended, cancelBound)
	}
	return latency
}

// A cancel reaches into the exposure fusion of three 21 MP brackets: the merge step
// returns the context's error soon after, not when the fusion is done.
func TestCancelStopsMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("three 21 MP brackets")
	}
	p := New(Config{Logger: quiet(), ReportEvery: time.Nanosecond})
	var rel [][]string
	for _, n := range officeFrames {
		rel = append(rel, []string{"brackets", "office_fisheye_5dmk2", n})
	}
	fa := photos(t, rel...)
	cancelInside(t, p, StepMerge, Request{OrderID: "merge", Inputs: []string{"in0", "in1", "in2"},
		Options: resolved(t, core.Options{Format: ptr("png")}), Assets: fa})
}

// A cancel reaches into the magic eraser's fill of a 12 MP photo with an 8% hole:
// the step returns the context's error soon after, not when the fill is done.
func TestCancelStopsErase(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 MP photo")
	}
	p := New(Config{Logger: quiet(), ReportEvery: time.Nanosecond})
	fa := photos(t, []string{"brackets", "handheld_indoor_phone", "exp2.jpg"}) // 3024x4032
	// 900×1100 px: 8% of the photo, as the eraser's 12 MP benchmark.
	fa.paths[eraserMaskID] = eraseMaskFile(t, 3024, 4032, 1000, 1400, 1900, 2500)
	opts := core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID), Format: ptr("png")}
	cancelInside(t, p, StepMagicEraser, Request{OrderID: "erase", Inputs: []string{"in0"},
		Options: resolved(t, opts), Assets: fa})
}
