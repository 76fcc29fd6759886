package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/store"
)

// countOrders counts the stored orders, to prove refused submissions wrote nothing.
func countOrders(t *testing.T, e *env) (orders, batches, queued int) {
	t.Helper()
	n, err := store.NewOrders(e.db).Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n.Orders, n.Batches, n.Pending
}

func TestSubmitValidation(t *testing.T) {
	e := newEnv(t, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	in2 := e.upload(e.owner, photoSmallJPEG2...)
	foreign := e.upload("key-owner-b", photoPNG...)
	e.serve()
	done, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	output := e.wait(e.owner, done.OrderUUID).OutputAssetID
	e.stop()
	const unknown = "0b7c6a1e-8f33-4a52-9d1e-2f6b7c8d9e0a"

	cases := []struct {
		name   string
		inputs []string
		opts   core.Options
		field  string
		reason string
	}{
		{"no inputs", nil, core.Options{}, "inputs", "1 to 9"},
		{"ten inputs", []string{in, in, in, in, in, in, in, in, in, in}, core.Options{}, "inputs", "got 10"},
		{"malformed uuid", []string{in, "not-a-uuid"}, core.Options{}, "inputs[1]", "UUID"},
		{"repeated input", []string{in, strings.ToUpper(in)}, core.Options{}, "inputs[1]", "repeats"},
		{"unknown asset", []string{unknown}, core.Options{}, "inputs[0]", "not found"},
		{"another key's asset", []string{in, foreign}, core.Options{}, "inputs[1]", "not found"},
		{"output as input", []string{output}, core.Options{}, "inputs[0]", "output"},
		{"quality 0", []string{in}, core.Options{Quality: ptr(0)}, "quality", ""},
		{"quality 101", []string{in}, core.Options{Quality: ptr(101)}, "quality", ""},
		{"unknown format", []string{in}, core.Options{Format: ptr("gif")}, "format", ""},
		{"strength 1.5", []string{in}, core.Options{PerspectiveStrength: ptr(1.5)}, "perspective_strength", ""},
		{"magic eraser without mask", []string{in}, core.Options{GenEdit: ptr("magic_eraser")}, "mask", ""},
		{"magic eraser two inputs", []string{in, in2}, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(in)}, "inputs", "exactly one"},
		{"photo as mask", []string{in}, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(in2)}, "mask", "not a usable mask"},
		{"unknown mask", []string{in}, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(unknown)}, "mask", "not found"},
		{"style clause with keep", []string{in}, core.Options{StagingStyle: ptr("keep"), WallColor: ptr("white"), StyleClause: ptr("oak")}, "style_clause", ""},
	}
	before, _, _ := countOrders(t, e)
	for _, c := range cases {
		_, err := e.eng.Submit(context.Background(), e.owner, c.inputs, c.opts, "")
		if kindOf(err) != core.KindInvalid || fieldOf(err) != c.field || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: got %v (field %q), want Invalid on %q mentioning %q", c.name, err, fieldOf(err), c.field, c.reason)
		}
	}
	if after, _, _ := countOrders(t, e); after != before {
		t.Fatalf("refused submissions stored %d orders", after-before)
	}
	// Upper-case UUIDs are the same asset.
	if s, err := e.eng.Submit(context.Background(), e.owner, []string{strings.ToUpper(in)}, core.Options{}, ""); err != nil || s.Inputs[0] != in {
		t.Fatalf("upper-case input: %+v, %v", s, err)
	}
	// The limits themselves are accepted.
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Quality: ptr(1), Threshold: ptr(1.0)}, ""); err != nil {
		t.Fatalf("quality 1: %v", err)
	}
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Quality: ptr(100), PerspectiveStrength: ptr(0.0)}, ""); err != nil {
		t.Fatalf("quality 100: %v", err)
	}
}

func TestBatchAtomicInheritanceAndCounters(t *testing.T) {
	e := newEnv(t, "")
	a := e.upload(e.owner, photoSmallJPEG...)
	b := e.upload(e.owner, photoPNG...)

	// One bad scene refuses everything, naming the scene.
	o0, b0, q0 := countOrders(t, e)
	_, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Name: "x", Scenes: []engine.Scene{
		{Inputs: []string{a}}, {Inputs: []string{b}, Options: core.Options{Quality: ptr(0)}},
	}}, "")
	if kindOf(err) != core.KindInvalid || fieldOf(err) != "scenes[1].quality" {
		t.Fatalf("bad scene: %v (field %q), want Invalid on scenes[1].quality", err, fieldOf(err))
	}
	_, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: []engine.Scene{
		{Inputs: []string{a}}, {Inputs: []string{a}}, {Inputs: []string{"nope"}},
	}}, "")
	if fieldOf(err) != "scenes[2].inputs[0]" {
		t.Fatalf("bad scene input: %v (field %q)", err, fieldOf(err))
	}
	_, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: []engine.Scene{{Inputs: nil}}}, "")
	if fieldOf(err) != "scenes[0].inputs" {
		t.Fatalf("scene without inputs: %v (field %q)", err, fieldOf(err))
	}
	_, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Defaults: core.Options{StyleClause: ptr("walnut")},
		Scenes: []engine.Scene{{Inputs: []string{a}}}}, "")
	if fieldOf(err) != "style_clause" {
		t.Fatalf("style_clause in defaults: %v", err)
	}
	_, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: []engine.Scene{
		{Inputs: []string{a}}, {Inputs: []string{a}, Options: core.Options{StyleClause: ptr("walnut")}},
	}}, "")
	if fieldOf(err) != "scenes[1].style_clause" {
		t.Fatalf("style_clause in a scene: %v", err)
	}
	many := make([]engine.Scene, 101)
	for i := range many {
		many[i] = engine.Scene{Inputs: []string{a}}
	}
	if _, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: many}, ""); fieldOf(err) != "scenes" {
		t.Fatalf("101 scenes: %v", err)
	}
	if _, err = e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{}, ""); fieldOf(err) != "scenes" {
		t.Fatalf("no scenes: %v", err)
	}
	if o1, b1, q1 := countOrders(t, e); o1 != o0 || b1 != b0 || q1 != q0 {
		t.Fatalf("refused batches stored something: orders %d->%d batches %d->%d queue %d->%d", o0, o1, b0, b1, q0, q1)
	}

	// Inheritance: absent fields inherit, explicit values (false included) win.
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{
		Name:     " listing 12 ",
		Defaults: core.Options{Format: ptr("png"), Align: ptr(false), Quality: ptr(70), TonecraftSharpen: ptr(false)},
		Scenes: []engine.Scene{
			{Inputs: []string{a}},
			{Inputs: []string{b}, Options: core.Options{Format: ptr("jpeg"), Align: ptr(true), TonecraftLevels: ptr(false)}},
			{Inputs: []string{a}, Options: core.Options{Quality: ptr(90), TonecraftSharpen: ptr(true)}},
		},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	if agg.Name != "listing 12" || agg.Total != 3 || agg.Pending != 3 || agg.Done || len(agg.Orders) != 3 {
		t.Fatalf("new batch aggregate %+v", agg)
	}
	// The signature look's own levels and sharpen are on; explicit false wins over it.
	want := []struct {
		format          string
		align           bool
		quality         int
		levels, sharpen bool
	}{{"png", false, 70, true, false}, {"jpeg", true, 70, false, false}, {"png", false, 90, true, true}}
	for i, s := range agg.Orders {
		if s.SceneIndex == nil || *s.SceneIndex != i || s.BatchID != agg.BatchID {
			t.Fatalf("scene %d summary %+v", i, s)
		}
		rec, err := e.eng.OrderRecord(context.Background(), e.owner, s.OrderUUID)
		if err != nil {
			t.Fatal(err)
		}
		r := rec.Resolved
		if r.Format != want[i].format || r.Align != want[i].align || r.Quality != want[i].quality ||
			r.TonecraftLevels != want[i].levels || r.TonecraftSharpen != want[i].sharpen {
			t.Errorf("scene %d resolved format %s align %v quality %d levels %v sharpen %v, want %+v",
				i, r.Format, r.Align, r.Quality, r.TonecraftLevels, r.TonecraftSharpen, want[i])
		}
	}

	feed := collect(e.eng.Events(), eventsFor(e.owner))
	e.serve()
	fin := e.waitBatch(e.owner, agg.BatchID)
	if fin.Completed != 3 || fin.Failed != 0 || fin.Pending != 0 || fin.Running != 0 || !fin.Done {
		t.Fatalf("final aggregate %+v", fin)
	}
	for i, s := range fin.Orders {
		o, err := e.eng.Order(context.Background(), e.owner, s.OrderUUID)
		if err != nil || o.Status != s.Status || o.OutputAssetID == "" {
			t.Fatalf("scene %d as an order: %+v, %v", i, o, err)
		}
		out, _ := e.assets.Get(e.owner, o.OutputAssetID)
		if out.Format != want[i].format {
			t.Errorf("scene %d output is %s, want %s", i, out.Format, want[i].format)
		}
	}
	if _, err := e.eng.Batch(context.Background(), "key-owner-b", agg.BatchID); kindOf(err) != core.KindNotFound {
		t.Errorf("another key's Batch: %v", err)
	}
	if _, err := e.eng.CancelBatch(context.Background(), "key-owner-b", agg.BatchID); kindOf(err) != core.KindNotFound {
		t.Errorf("another key's CancelBatch: %v", err)
	}

	// Batch events carry the aggregate without scenes; counters never go backwards.
	e.stop()
	lastDone := -1
	sawDone := false
	for _, ev := range feed.stop() {
		if ev.Type != core.EventBatch {
			continue
		}
		ba := ev.Data.(core.BatchAggregate)
		if ba.Orders != nil {
			t.Fatal("a batch event carries scene summaries")
		}
		n := ba.Completed + ba.Failed
		if n < lastDone {
			t.Fatalf("batch counters went backwards: %d after %d", n, lastDone)
		}
		lastDone = n
		sawDone = sawDone || ba.Done
	}
	if !sawDone {
		t.Fatal("no batch event showed done")
	}
}

func TestBatchCancelKeepsSettledScenes(t *testing.T) {
	e := newEnv(t, "", withWorkers(1))
	g := newGate()
	e.pipe.Register(g.step("sky", true))
	a := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: []engine.Scene{
		{Inputs: []string{a}}, // completes
		{Inputs: []string{a}, Options: core.Options{Sky: ptr(true)}}, // held running
		{Inputs: []string{a}}, // pending behind it
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	g.waitEntered(t)
	first := e.wait(e.owner, agg.Orders[0].OrderUUID)
	if first.Status != core.OrderCompleted {
		t.Fatalf("first scene %s", first.Status)
	}
	c1, err := e.eng.CancelBatch(context.Background(), e.owner, agg.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	got := []core.OrderStatus{c1.Orders[0].Status, c1.Orders[1].Status, c1.Orders[2].Status}
	if got[0] != core.OrderCompleted || got[1] != core.OrderCancelled || got[2] != core.OrderCancelled {
		t.Fatalf("after batch cancel: %v", got)
	}
	if !c1.Done || c1.Completed != 1 || c1.Failed != 2 {
		t.Fatalf("aggregate after cancel %+v", c1)
	}
	if c1.Orders[0].OutputAssetID == "" {
		t.Fatal("the completed scene lost its result")
	}
	c2, err := e.eng.CancelBatch(context.Background(), e.owner, agg.BatchID)
	if err != nil || c2.Completed != 1 || c2.Failed != 2 || c2.Orders[0].OutputAssetID != c1.Orders[0].OutputAssetID {
		t.Fatalf("repeated batch cancel: %+v, %v", c2, err)
	}
	// One worker and a first in, first out queue: once an order submitted now has
	// completed, the cancelled scenes ahead of it had their turn.
	feed, _ := e.eng.Events().Subscribe(eventsFor(e.owner), 0)
	defer feed.Close()
	next, err := e.eng.Submit(context.Background(), e.owner, []string{a}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	untilOrder(t, feed, next.OrderUUID, core.OrderCompleted, func(ev core.Event) {
		if ev.OrderID == agg.Orders[1].OrderUUID || ev.OrderID == agg.Orders[2].OrderUUID {
			t.Fatalf("a cancelled scene had an event after the batch cancel: %+v", ev.Data)
		}
	})
	if s, _ := e.eng.Order(context.Background(), e.owner, agg.Orders[2].OrderUUID); s.Status != core.OrderCancelled {
		t.Fatalf("pending scene ran after the batch cancel: %s", s.Status)
	}
}

func TestIdempotencyKey(t *testing.T) {
	e := newEnv(t, "")
	a := e.upload(e.owner, photoSmallJPEG...)
	b := e.upload(e.owner, photoPNG...)
	opts := core.Options{Quality: ptr(80)}

	s1, err := e.eng.Submit(context.Background(), e.owner, []string{a}, opts, "key-1")
	if err != nil {
		t.Fatal(err)
	}
	s2, err := e.eng.Submit(context.Background(), e.owner, []string{a}, core.Options{Quality: ptr(80)}, "key-1")
	if err != nil || s2.OrderUUID != s1.OrderUUID {
		t.Fatalf("same key and body: %+v, %v; want order %s again", s2, err, s1.OrderUUID)
	}
	if n, _, _ := countOrders(t, e); n != 1 {
		t.Fatalf("%d orders stored, want 1", n)
	}
	// Different body, same key: conflict.
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{a}, core.Options{Quality: ptr(81)}, "key-1"); kindOf(err) != core.KindConflict {
		t.Fatalf("same key, other body: %v, want Conflict", err)
	}
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{b}, opts, "key-1"); kindOf(err) != core.KindConflict {
		t.Fatalf("same key, other inputs: %v, want Conflict", err)
	}
	// Keys are per owner.
	other := e.upload("key-owner-b", photoSmallJPEG...)
	s3, err := e.eng.Submit(context.Background(), "key-owner-b", []string{other}, opts, "key-1")
	if err != nil || s3.OrderUUID == s1.OrderUUID {
		t.Fatalf("another owner's same key: %+v, %v", s3, err)
	}
	// A repeat answers the first order even after its input was deleted.
	if err := e.assets.Delete(e.owner, a); err != nil {
		t.Fatal(err)
	}
	if s, err := e.eng.Submit(context.Background(), e.owner, []string{a}, opts, "key-1"); err != nil || s.OrderUUID != s1.OrderUUID {
		t.Fatalf("repeat after the input was deleted: %+v, %v", s, err)
	}
	// After 24 hours the key is forgotten.
	e.clock.Advance(24*time.Hour + time.Second)
	s4, err := e.eng.Submit(context.Background(), e.owner, []string{b}, core.Options{Quality: ptr(81)}, "key-1")
	if err != nil || s4.OrderUUID == s1.OrderUUID {
		t.Fatalf("key reused after 24h: %+v, %v", s4, err)
	}

	// Batches too; a batch key cannot replay an order.
	req := engine.BatchRequest{Name: "n", Scenes: []engine.Scene{{Inputs: []string{b}}}}
	b1, err := e.eng.SubmitBatch(context.Background(), e.owner, req, "batch-key")
	if err != nil {
		t.Fatal(err)
	}
	b2, err := e.eng.SubmitBatch(context.Background(), e.owner, req, "batch-key")
	if err != nil || b2.BatchID != b1.BatchID {
		t.Fatalf("batch repeat: %+v, %v", b2, err)
	}
	if _, _, nb := countOrders(t, e); nb == 0 {
		t.Fatal("no queue")
	}
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{b}, core.Options{}, "batch-key"); kindOf(err) != core.KindConflict {
		t.Fatalf("order under a batch's key: %v", err)
	}
	if _, err := e.eng.Submit(context.Background(), e.owner, []string{b}, core.Options{}, strings.Repeat("k", 300)); kindOf(err) != core.KindInvalid {
		t.Fatalf("overlong key: %v", err)
	}
}

func TestConcurrentSubmitsWithOneKeyCreateOneOrder(t *testing.T) {
	e := newEnv(t, "")
	a := e.upload(e.owner, photoSmallJPEG...)
	ids := make(chan string, 8)
	for i := 0; i < 8; i++ {
		go func() {
			s, err := e.eng.Submit(context.Background(), e.owner, []string{a}, core.Options{}, "race-key")
			if err != nil {
				ids <- "error: " + err.Error()
				return
			}
			ids <- s.OrderUUID
		}()
	}
	first := <-ids
	for i := 1; i < 8; i++ {
		if id := <-ids; id != first {
			t.Fatalf("concurrent submits with one key answered %s and %s", first, id)
		}
	}
	if n, _, _ := countOrders(t, e); n != 1 {
		t.Fatalf("%d orders stored, want 1", n)
	}
}
