package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/pipeline"
)

func TestStateMachineTable(t *testing.T) {
	all := []core.OrderStatus{core.OrderPending, core.OrderRunning, core.OrderCompleted,
		core.OrderFailed, core.OrderCancelled, core.OrderExpired}
	want := map[[2]core.OrderStatus]bool{
		{core.OrderPending, core.OrderRunning}:   true,
		{core.OrderPending, core.OrderCancelled}: true,
		{core.OrderPending, core.OrderExpired}:   true,
		{core.OrderPending, core.OrderFailed}:    true,
		{core.OrderRunning, core.OrderCompleted}: true,
		{core.OrderRunning, core.OrderFailed}:    true,
		{core.OrderRunning, core.OrderCancelled}: true,
		{core.OrderRunning, core.OrderPending}:   true, // interrupted run goes back to the queue
	}
	for _, from := range all {
		for _, to := range all {
			if got := engine.CanMove(from, to); got != want[[2]core.OrderStatus{from, to}] {
				t.Errorf("CanMove(%s, %s) = %v", from, to, got)
			}
		}
	}
}

func TestCancelPendingAndRepeat(t *testing.T) {
	e := newEnv(t, "", withWorkers(1))
	g := newGate()
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	if err != nil {
		t.Fatal(err)
	}
	c1, err := e.eng.Cancel(context.Background(), e.owner, sum.OrderUUID)
	if err != nil || c1.Status != core.OrderCancelled {
		t.Fatalf("cancel of a pending order: %+v, %v", c1, err)
	}
	c2, err := e.eng.Cancel(context.Background(), e.owner, sum.OrderUUID)
	if err != nil || !reflect.DeepEqual(c1, c2) {
		t.Fatalf("repeated cancel: %+v, %v; want the same summary %+v", c2, err, c1)
	}
	// Serving now must not start it. The queue is first in, first out and there is one
	// worker: had the cancelled order started, it would hold the gate, and its events
	// would come before those of an order submitted after it.
	feed, _ := e.eng.Events().Subscribe(eventsFor(e.owner), 0)
	defer feed.Close()
	e.serve()
	later, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	if err != nil {
		t.Fatal(err)
	}
	if id := g.waitEntered(t); id != later.OrderUUID {
		t.Fatalf("cancelled order %s ran", id)
	}
	untilOrder(t, feed, later.OrderUUID, core.OrderRunning, func(ev core.Event) {
		if ev.OrderID == sum.OrderUUID {
			t.Fatalf("cancelled order had an event after serving: %+v", ev.Data)
		}
	})
	if s, _ := e.eng.Order(context.Background(), e.owner, sum.OrderUUID); s.Status != core.OrderCancelled || s.OutputAssetID != "" {
		t.Fatalf("cancelled order later shows %+v", s)
	}
}

func TestCancelRunningStopsStepAndNeverResumes(t *testing.T) {
	e := newEnv(t, "", withWorkers(1))
	g := newGate()
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	if err != nil {
		t.Fatal(err)
	}
	g.waitEntered(t)
	running, _ := e.eng.Order(context.Background(), e.owner, sum.OrderUUID)
	if running.Status != core.OrderRunning || running.ETASeconds == nil {
		t.Fatalf("order at the gate: %+v", running)
	}
	if got := e.eng.Running(context.Background(), e.owner); len(got) != 1 || got[0].OrderUUID != sum.OrderUUID {
		t.Fatalf("Running() = %+v", got)
	}
	if got := e.eng.Running(context.Background(), "someone-else"); len(got) != 0 {
		t.Fatalf("another key's Running() = %+v", got)
	}
	feed, _ := e.eng.Events().Subscribe(eventsFor(e.owner), 0)
	defer feed.Close()
	c1, err := e.eng.Cancel(context.Background(), e.owner, sum.OrderUUID)
	if err != nil || c1.Status != core.OrderCancelled {
		t.Fatalf("cancel running: %+v, %v", c1, err)
	}
	// The step saw its context end and returned; the worker slot is free again.
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		n := len(g.finished)
		g.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the running step was not cancelled through its context")
		}
		time.Sleep(5 * time.Millisecond)
	}
	c2, err := e.eng.Cancel(context.Background(), e.owner, sum.OrderUUID)
	if err != nil || !reflect.DeepEqual(c1, c2) {
		t.Fatalf("repeat cancel: %+v, %v", c2, err)
	}
	// The only worker takes the next order once it is done with the cancelled one:
	// when that order has completed, nothing more can happen to the cancelled one.
	next, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	cancelledSeen := false
	untilOrder(t, feed, next.OrderUUID, core.OrderCompleted, func(ev core.Event) {
		if ev.OrderID != sum.OrderUUID {
			return
		}
		// Updates from before the cancel may still arrive ahead of it; nothing may
		// follow it.
		if cancelledSeen {
			t.Fatalf("the cancelled order had a later event: %+v", ev.Data)
		}
		cancelledSeen = ev.Data.(core.OrderSummary).Status == core.OrderCancelled
	})
	if !cancelledSeen {
		t.Fatal("no cancelled event")
	}
	s, _ := e.eng.Order(context.Background(), e.owner, sum.OrderUUID)
	if s.Status != core.OrderCancelled || s.OutputAssetID != "" {
		t.Fatalf("cancelled order later: %+v", s)
	}
	if _, err := e.assets.Get(e.owner, assets.OutputID(sum.OrderUUID)); kindOf(err) != core.KindNotFound {
		t.Fatalf("a cancelled order has an output asset: %v", err)
	}
}

// A step that ignores cancellation finishes after the cancel: the output it wrote is
// not attached and is removed.
func TestWorkerFinishingAfterCancelCannotResurrect(t *testing.T) {
	e := newEnv(t, "")
	g := newGate()
	enc, ok := e.pipe.Step(pipeline.StepEncode)
	if !ok {
		t.Fatal("no encode step")
	}
	inner := g.step(pipeline.StepEncode, false)
	e.pipe.Register(pipeline.Step{Name: pipeline.StepEncode, Run: func(ctx context.Context, j *pipeline.Job) error {
		if err := enc.Run(ctx, j); err != nil {
			return err
		}
		return inner.Run(ctx, j) // holds the finished output until released
	}})
	in := e.upload(e.owner, photoSmallJPEG...)
	feed := collect(e.eng.Events(), eventsFor(e.owner))
	e.serve()
	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	g.waitEntered(t)
	out := assets.OutputID(sum.OrderUUID)
	if _, err := e.assets.Get(e.owner, out); err != nil {
		t.Fatalf("the output should exist while the step holds: %v", err)
	}
	if _, err := e.eng.Cancel(context.Background(), e.owner, sum.OrderUUID); err != nil {
		t.Fatal(err)
	}
	g.open()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := e.assets.Get(e.owner, out)
		if kindOf(err) == core.KindNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the late output of a cancelled order was not removed: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s, _ := e.eng.Order(context.Background(), e.owner, sum.OrderUUID)
	if s.Status != core.OrderCancelled || s.OutputAssetID != "" {
		t.Fatalf("order after the late finish: %+v", s)
	}
	e.stop()
	var after bool
	for _, ev := range feed.stop() {
		if ev.OrderID != sum.OrderUUID {
			continue
		}
		st := ev.Data.(core.OrderSummary).Status
		if after {
			t.Fatalf("event %s after the cancelled event", st)
		}
		after = st == core.OrderCancelled
	}
	if !after {
		t.Fatal("no cancelled event")
	}
}

func TestCancelSettledOrdersConflicts(t *testing.T) {
	e := newEnv(t, "", withEngine(func(c *engine.Config) { c.SweepInterval = 10 * time.Millisecond }))
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()

	done, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	failed, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{GenEdit: ptr("outdoor_staging")}, "") // no model backend configured
	d := e.wait(e.owner, done.OrderUUID)
	f := e.wait(e.owner, failed.OrderUUID)
	if d.Status != core.OrderCompleted {
		t.Fatalf("order ended %s: %s", d.Status, d.Error)
	}
	if f.Status != core.OrderFailed || f.ErrorCode != pipeline.CodeFeatureUnavailable ||
		!strings.HasPrefix(f.Error, "outdoor staging is not available: no model backend is configured for it. Define a backend under `backends`") {
		t.Fatalf("staging order without a backend: %+v", f)
	}
	if f.OutputAssetID != "" {
		t.Fatalf("a failed order has an output: %+v", f)
	}
	for _, s := range []core.OrderSummary{d, f} {
		_, err := e.eng.Cancel(context.Background(), e.owner, s.OrderUUID)
		if kindOf(err) != core.KindConflict {
			t.Fatalf("cancel of a %s order: %v, want Conflict", s.Status, err)
		}
		again, _ := e.eng.Order(context.Background(), e.owner, s.OrderUUID)
		if again.Status != s.Status || again.OutputAssetID != s.OutputAssetID {
			t.Fatalf("a refused cancel changed the order: %+v", again)
		}
	}
}

func TestExpiryAfterPendingTTL(t *testing.T) {
	e := newEnv(t, "", withWorkers(1), withEngine(func(c *engine.Config) {
		c.SweepInterval = 10 * time.Millisecond
		c.PendingTTL = 2 * time.Hour
	}))
	g := newGate()
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	sweeps := countSweeps(e.eng)
	e.serve()
	busy, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	g.waitEntered(t) // the only worker is busy
	queued, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(119 * time.Minute)
	// With the worker busy only the sweeper looks at the queue: let one sweep run
	// whole at the new time.
	sweeps.waitWhole(t)
	if s, _ := e.eng.Order(context.Background(), e.owner, queued.OrderUUID); s.Status != core.OrderPending {
		t.Fatalf("order expired before its TTL: %+v", s)
	}
	e.clock.Advance(2 * time.Minute)
	s := e.wait(e.owner, queued.OrderUUID)
	if s.Status != core.OrderExpired || s.ErrorCode != engine.CodePendingTimeout {
		t.Fatalf("overdue pending order: %+v", s)
	}
	if _, err := e.eng.Cancel(context.Background(), e.owner, queued.OrderUUID); kindOf(err) != core.KindConflict {
		t.Fatalf("cancel of an expired order: %v, want Conflict", err)
	}
	// Running orders do not expire.
	if r, _ := e.eng.Order(context.Background(), e.owner, busy.OrderUUID); r.Status != core.OrderRunning {
		t.Fatalf("running order after the TTL: %+v", r)
	}
	g.open()
	if r := e.wait(e.owner, busy.OrderUUID); r.Status != core.OrderCompleted {
		t.Fatalf("running order ended %s", r.Status)
	}
}

func TestExpiryWhenInputDeletedBeforeStart(t *testing.T) {
	e := newEnv(t, "")
	keep := e.upload(e.owner, photoSmallJPEG...)
	gone := e.upload(e.owner, photoSmallJPEG2...)
	later := e.upload(e.owner, photoPNG...)
	// Not serving: both stay pending.
	viaHook, _ := e.eng.Submit(context.Background(), e.owner, []string{gone}, core.Options{}, "")
	viaDispatch, _ := e.eng.Submit(context.Background(), e.owner, []string{later}, core.Options{}, "")
	other, _ := e.eng.Submit(context.Background(), e.owner, []string{keep}, core.Options{}, "")

	// Deleting through the asset store reaches the engine through OnDelete.
	if err := e.assets.Delete(e.owner, gone); err != nil {
		t.Fatal(err)
	}
	if s, _ := e.eng.Order(context.Background(), e.owner, viaHook.OrderUUID); s.Status != core.OrderExpired || s.ErrorCode != engine.CodeInputDeleted {
		t.Fatalf("order whose input was deleted: %+v", s)
	}
	// Without the hook, the dispatcher finds the missing input when the order's turn comes.
	unhook(t, e, later)
	e.serve()
	if s := e.wait(e.owner, viaDispatch.OrderUUID); s.Status != core.OrderExpired || s.ErrorCode != engine.CodeInputDeleted {
		t.Fatalf("order whose input vanished: %+v", s)
	}
	if s := e.wait(e.owner, other.OrderUUID); s.Status != core.OrderCompleted {
		t.Fatalf("unrelated order ended %s: %s", s.Status, s.Error)
	}
}

// unhook deletes an asset's record behind the engine's back (no OnDelete call).
func unhook(t *testing.T, e *env, id string) {
	t.Helper()
	e.stopAssets()
	<-e.assetsDone
	e.stopAssets = nil
	// A second service on the same database without the hook.
	svc, err := assets.New(e.db, e.dir, assets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Delete(e.owner, id); err != nil {
		t.Fatal(err)
	}
}

func TestStepPanicFailsOnlyItsOrder(t *testing.T) {
	e := newEnv(t, "")
	e.pipe.Register(pipeline.Step{Name: pipeline.StepSky, Run: func(ctx context.Context, j *pipeline.Job) error {
		var m map[string]int
		m["boom"]++ // a bug: nil map write
		return nil
	}})
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	bad, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	good, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	b := e.wait(e.owner, bad.OrderUUID)
	if b.Status != core.OrderFailed || b.ErrorCode != pipeline.CodeInternal || !strings.Contains(b.Error, "sky replacement") {
		t.Fatalf("panicking order: %+v", b)
	}
	if g := e.wait(e.owner, good.OrderUUID); g.Status != core.OrderCompleted {
		t.Fatalf("sibling ended %s: %s", g.Status, g.Error)
	}
}

func TestUnreadableInputFailsOnlyItsScene(t *testing.T) {
	e := newEnv(t, "")
	good := e.upload(e.owner, photoSmallJPEG...)
	bad := e.upload(e.owner, photoPNG...)
	// Damage the stored bytes of one input after ingest accepted it.
	a, err := e.assets.Get(e.owner, bad)
	if err != nil {
		t.Fatal(err)
	}
	corruptBlob(t, e.dir, a.SHA256)
	e.serve()
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Name: "mixed", Scenes: []engine.Scene{
		{Inputs: []string{good}}, {Inputs: []string{bad}}, {Inputs: []string{good}},
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	fin := e.waitBatch(e.owner, agg.BatchID)
	if fin.Completed != 2 || fin.Failed != 1 || !fin.Done {
		t.Fatalf("batch counters %+v", fin)
	}
	s := fin.Orders[1]
	if s.Status != core.OrderFailed || s.ErrorCode != pipeline.CodeUnreadableInput || !strings.Contains(s.Error, "inputs[0]") {
		t.Fatalf("scene with the damaged photo: %+v", s)
	}
}

// corruptBlob truncates the stored bytes with this sha256 (blobs/ab/cdef...).
func corruptBlob(t *testing.T, dir, sum string) {
	t.Helper()
	path := filepath.Join(dir, "blobs", sum[:2], sum[2:])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("blob of the input: %v", err)
	}
	os.Chmod(path, 0o600)
	if err := os.WriteFile(path, data[:len(data)/8], 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestShutdownRequeuesRunningOrderWithoutCountingAttempt(t *testing.T) {
	e := newEnv(t, "")
	g := newGate()
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	sum, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Sky: ptr(true)}, "")
	g.waitEntered(t)
	e.stop()
	rec, err := e.eng.OrderRecord(context.Background(), e.owner, sum.OrderUUID)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Status != core.OrderPending || rec.Attempts != 0 {
		t.Fatalf("after shutdown the running order is %s with %d attempts, want pending with 0", rec.Status, rec.Attempts)
	}
	g.open()
	e.serve()
	if s := e.wait(e.owner, sum.OrderUUID); s.Status != core.OrderCompleted {
		t.Fatalf("requeued order ended %s: %s", s.Status, s.Error)
	}
	rec, _ = e.eng.OrderRecord(context.Background(), e.owner, sum.OrderUUID)
	if rec.Attempts != 1 {
		t.Fatalf("attempts %d after one full run, want 1", rec.Attempts)
	}
}

// untilOrder reads feed until order id reaches status, handing every event read,
// that one included, to check.
func untilOrder(t *testing.T, feed *events.Subscription, id string, status core.OrderStatus, check func(core.Event)) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case ev, ok := <-feed.C():
			if !ok {
				t.Fatalf("event feed closed: %v", feed.Err())
			}
			check(ev)
			if s, isOrder := ev.Data.(core.OrderSummary); isOrder && ev.OrderID == id && s.Status == status {
				return
			}
		case <-deadline:
			t.Fatalf("order %s not %s within 90s", id, status)
		}
	}
}

// sweepCounter counts the engine's finished expiry sweeps.
type sweepCounter struct {
	n    atomic.Int64
	tick chan struct{}
}

// countSweeps installs the counter; call it before serve.
func countSweeps(eng *engine.Engine) *sweepCounter {
	c := &sweepCounter{tick: make(chan struct{}, 1)}
	eng.SetSweepHook(func() {
		c.n.Add(1)
		select {
		case c.tick <- struct{}{}:
		default:
		}
	})
	return c
}

// waitWhole returns once a sweep has started and finished after the call: the
// second sweep to finish from now started after the first one ended.
func (c *sweepCounter) waitWhole(t *testing.T) {
	t.Helper()
	want := c.n.Load() + 2
	deadline := time.After(60 * time.Second)
	for c.n.Load() < want {
		select {
		case <-c.tick:
		case <-deadline:
			t.Fatal("no whole expiry sweep within 60s")
		}
	}
}
