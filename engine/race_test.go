package engine_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// Cancel racing completion: whatever the timing, either the cancel wins (200,
// cancelled for good, no output) or completion wins (409, completed with its
// output). Run with -race.
func TestCancelRacingCompletion(t *testing.T) {
	e := newEnv(t, "", withWorkers(2))
	in := e.upload(e.owner, photoSmallJPEG...)
	feed := collect(e.eng.Events(), eventsFor(e.owner))
	e.serve()

	// Measure one run to aim the cancels around completion.
	probe, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	e.waitFor(e.owner, probe.OrderUUID, func(s core.OrderSummary) bool { return s.Status != core.OrderPending }, "started")
	start := time.Now()
	if s := e.wait(e.owner, probe.OrderUUID); s.Status != core.OrderCompleted {
		t.Fatalf("probe order ended %s: %s", s.Status, s.Error)
	}
	span := time.Since(start) * 3 / 2

	iterations := 60
	if testing.Short() {
		iterations = 20
	}
	type outcome struct {
		id        string
		cancelErr error
		answer    core.OrderSummary
	}
	results := make(chan outcome, iterations)
	var wg sync.WaitGroup
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func(seed uint64) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 7))
			for i := 0; i < iterations/3; i++ {
				s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
				if err != nil {
					t.Error(err)
					return
				}
				// Aim at the run itself: wait until a worker holds it, then cancel
				// somewhere between its start and a bit past its expected end.
				e.waitFor(e.owner, s.OrderUUID, func(s core.OrderSummary) bool { return s.Status != core.OrderPending }, "started")
				time.Sleep(time.Duration(rng.Int64N(int64(span))))
				ans, err := e.eng.Cancel(context.Background(), e.owner, s.OrderUUID)
				results <- outcome{s.OrderUUID, err, ans}
			}
		}(uint64(g))
	}
	wg.Wait()
	close(results)

	var won, lost int
	var all []outcome
	for r := range results {
		all = append(all, r)
		switch {
		case r.cancelErr == nil:
			won++
			if r.answer.Status != core.OrderCancelled || r.answer.OutputAssetID != "" {
				t.Errorf("cancel answered 200 with %+v", r.answer)
			}
		case kindOf(r.cancelErr) == core.KindConflict:
			lost++
		default:
			t.Errorf("cancel of %s: %v", r.id, r.cancelErr)
		}
	}
	// Let late workers finish, then check the settled states.
	e.stop()
	for _, r := range all {
		s, err := e.eng.Order(context.Background(), e.owner, r.id)
		if err != nil {
			t.Fatal(err)
		}
		_, outErr := e.assets.Get(e.owner, assets.OutputID(r.id))
		if r.cancelErr == nil {
			if s.Status != core.OrderCancelled || s.OutputAssetID != "" || kindOf(outErr) != core.KindNotFound {
				t.Errorf("cancel won for %s but the order is %s, output %q (asset: %v)", r.id, s.Status, s.OutputAssetID, outErr)
			}
		} else {
			if s.Status != core.OrderCompleted || s.OutputAssetID == "" || outErr != nil {
				t.Errorf("completion won for %s but the order is %s, output %q (asset: %v)", r.id, s.Status, s.OutputAssetID, outErr)
			}
			if _, err := e.eng.Cancel(context.Background(), e.owner, r.id); kindOf(err) != core.KindConflict {
				t.Errorf("repeat cancel of completed %s: %v", r.id, err)
			}
		}
	}
	t.Logf("%d cancels won, %d lost to completion (cancel delays up to %v)", won, lost, span)
	if won == 0 || lost == 0 {
		t.Logf("only one side of the race happened this run")
	}
	checkEventStreams(t, feed.stop())
}

// checkEventStreams asserts, per order, that nothing follows a terminal event and
// that a running order never shows pending again within one run.
func checkEventStreams(t *testing.T, evs []core.Event) {
	t.Helper()
	terminal := map[string]core.OrderStatus{}
	var last uint64
	for _, ev := range evs {
		if ev.ID <= last {
			t.Fatalf("event ids not increasing: %d after %d", ev.ID, last)
		}
		last = ev.ID
		if ev.Type != core.EventOrder {
			continue
		}
		s := ev.Data.(core.OrderSummary)
		if st, ok := terminal[ev.OrderID]; ok {
			t.Fatalf("order %s: %s event after its terminal %s event", ev.OrderID, s.Status, st)
		}
		if s.Status.Terminal() {
			terminal[ev.OrderID] = s.Status
		}
	}
}

func TestBatchCancelRacingCompletion(t *testing.T) {
	e := newEnv(t, "", withWorkers(2))
	in := e.upload(e.owner, photoSmallJPEG...)
	feed := collect(e.eng.Events(), eventsFor(e.owner))
	e.serve()
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	for round := 0; round < rounds; round++ {
		scenes := make([]engine.Scene, 6)
		for i := range scenes {
			scenes[i] = engine.Scene{Inputs: []string{in}}
		}
		agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: scenes}, "")
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(round*40) * time.Millisecond)
		c, err := e.eng.CancelBatch(context.Background(), e.owner, agg.BatchID)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Done || c.Completed+c.Failed != 6 {
			t.Fatalf("aggregate right after batch cancel %+v", c)
		}
		fin := e.waitBatch(e.owner, agg.BatchID)
		for i, s := range fin.Orders {
			if s.Status != c.Orders[i].Status {
				t.Fatalf("scene %d changed after the batch cancel: %s -> %s", i, c.Orders[i].Status, s.Status)
			}
			if (s.Status == core.OrderCompleted) != (s.OutputAssetID != "") {
				t.Fatalf("scene %d %s with output %q", i, s.Status, s.OutputAssetID)
			}
		}
	}
	e.stop()
	checkEventStreams(t, feed.stop())
}

func TestMemoryAdmission(t *testing.T) {
	g := newGate()
	// Budget for one order of the 752x500 photo at a time.
	probe := pipeline.New(pipeline.Config{})
	probe.Register(g.step(pipeline.StepSky, true))
	est := estimateFor(t, probe, core.Options{Sky: ptr(true)}, photoSmallJPEG)
	if est < 752*500*12 {
		t.Fatalf("estimate %d below one decoded frame", est)
	}
	e := newEnv(t, "", withWorkers(3), withEngine(func(c *engine.Config) { c.MemoryBudget = est * 3 / 2 }))
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	if a, _ := e.assets.Get(e.owner, in); a.Width != 752 || a.Height != 500 {
		t.Fatalf("photo is %dx%d, the test assumes 752x500", a.Width, a.Height)
	}
	e.serve()
	var ids []string
	for i := 0; i < 3; i++ {
		s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.OrderUUID)
	}
	g.waitEntered(t)
	second := e.waitFor(e.owner, ids[1], func(s core.OrderSummary) bool {
		return s.ProgressStage == engine.StageWaitingMemory
	}, "waiting for memory")
	if second.Status != core.OrderPending {
		t.Fatalf("second order %+v", second)
	}
	if third, _ := e.eng.Order(context.Background(), e.owner, ids[2]); third.Status != core.OrderPending || third.ProgressStage != engine.StageQueued {
		t.Fatalf("third order %+v", third)
	}
	g.open()
	for _, id := range ids {
		if s := e.wait(e.owner, id); s.Status != core.OrderCompleted {
			t.Fatalf("order ended %s: %s", s.Status, s.Error)
		}
	}
	if m := g.max(); m != 1 {
		t.Fatalf("%d orders ran at once within a budget for one", m)
	}
}
