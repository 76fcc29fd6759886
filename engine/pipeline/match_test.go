package pipeline

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/match"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func TestMatchPlannedForBatchScenesOnly(t *testing.T) {
	p := New(Config{Logger: quiet()})
	on := resolved(t, core.Options{})
	off := resolved(t, core.Options{ShootConsistency: ptr(false)})
	single, _ := p.Plan(on, 1)
	scene, _ := p.PlanScene(on, 1)
	offScene, _ := p.PlanScene(off, 1)
	if slices.Contains(names(single), StepMatch) || slices.Contains(names(offScene), StepMatch) {
		t.Fatalf("matched without a batch or with it off: %v, %v", names(single), names(offScene))
	}
	if !slices.Contains(names(scene), StepMatch) {
		t.Fatalf("a batch scene does not match: %v", names(scene))
	}
}

// A scene whose photo cannot be decoded and a scene already cancelled are left out
// of the look; the scene run matches to the rest.
func TestMatchLeavesOutBrokenAndSkippedScenes(t *testing.T) {
	p := New(Config{Logger: quiet()})
	fa := photos(t, kimA, memorial)
	broken := t.TempDir() + "/broken.jpg"
	good, _ := os.ReadFile(testphotos.Path(t, kimA...))
	os.WriteFile(broken, good[:len(good)/10], 0o600)
	fa.paths["broken"] = broken
	opts := resolved(t, core.Options{})
	var listed atomic.Int32
	shoot := &Shoot{ID: "b1", Scenes: func(context.Context) ([]ShootScene, error) {
		listed.Add(1)
		return []ShootScene{
			{OrderID: "o1", Inputs: []string{"in0"}, Options: opts},
			{OrderID: "o2", Inputs: []string{"broken"}, Options: opts},
			{OrderID: "o3", Inputs: []string{"in1"}, Options: opts},
			{OrderID: "o4", Skip: true},
		}, nil
	}}
	var stages []string
	res, err := p.Run(context.Background(), Request{OrderID: "o1", Inputs: []string{"in0"}, Options: opts, Assets: fa, Shoot: shoot},
		func(pr Progress) { stages = append(stages, pr.Stage) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Steps, StepMatch) || !slices.Contains(stages, "matching") {
		t.Fatalf("steps %v, stages %v", res.Steps, stages)
	}
	if !slices.ContainsFunc(res.Notes, func(n string) bool {
		return strings.HasPrefix(n, "shoot consistency: ") && strings.HasSuffix(n, "(2 scenes)")
	}) {
		t.Fatalf("notes %q, want a correction toward the look of the 2 good scenes", res.Notes)
	}
	// The look is the batch's: the next scene uses it without reading the batch again.
	if _, err := p.Run(context.Background(), Request{OrderID: "o3", Inputs: []string{"in1"}, Options: opts, Assets: fa, Shoot: shoot}, nil); err != nil {
		t.Fatal(err)
	}
	if n := listed.Load(); n != 1 {
		t.Fatalf("the batch was read %d times, want once", n)
	}
}

// Scenes reaching the step together share one computation; one cut short by its
// order's cancel is not kept, and a scene waiting on it computes the look itself.
func TestShootLookOneComputationAndRetryAfterCancel(t *testing.T) {
	m := newShootMemo()
	var computes atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{})
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var firstErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, firstErr = m.look(firstCtx, "b", func(ctx context.Context) (match.Look, error) {
			computes.Add(1)
			close(started)
			select {
			case <-release:
				return match.Look{Scenes: 3}, nil
			case <-ctx.Done():
				return match.Look{}, ctx.Err()
			}
		})
	}()
	<-started
	got := make(chan match.Look, 1)
	go func() {
		l, err := m.look(context.Background(), "b", func(context.Context) (match.Look, error) {
			computes.Add(1)
			return match.Look{Scenes: 5}, nil
		})
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	cancelFirst()
	wg.Wait()
	if !errors.Is(firstErr, context.Canceled) {
		t.Fatalf("the cancelled scene got %v", firstErr)
	}
	if l := <-got; l.Scenes != 5 || computes.Load() != 2 {
		t.Fatalf("the waiting scene got %+v after %d computations", l, computes.Load())
	}
	// Kept now: a third scene takes it as it is.
	l, err := m.look(context.Background(), "b", func(context.Context) (match.Look, error) {
		t.Error("computed again")
		return match.Look{}, nil
	})
	if err != nil || l.Scenes != 5 {
		t.Fatalf("third scene: %+v, %v", l, err)
	}
	close(release)
}
