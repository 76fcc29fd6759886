package assets

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
)

// exportEstimate is what the export of data with opt will be charged, from the
// photo's headers as the record will describe it.
func exportEstimate(t *testing.T, data []byte, opt core.ExportOptions) int64 {
	t.Helper()
	info, err := codec.Probe(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	src := core.Asset{Width: info.Width, Height: info.Height, Size: int64(len(data)), Format: info.Format}
	return ExportMemory(src, &info, opt)
}

// waitBudget blocks until the budget's state satisfies ok, woken by its changes.
func waitBudget(t *testing.T, b *membudget.Budget, what string, ok func(membudget.Stats) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if s, err := b.Await(ctx, ok); err != nil {
		t.Fatalf("budget never %s: %+v", what, s)
	}
}

// An export whose estimate exceeds the whole budget fails with
// resolution_too_large instead of running; a smaller one of the same source runs.
func TestExportOverBudgetFails(t *testing.T) {
	data := photo(t, "interiors", "houses_185_kitchen.jpg")
	opt := core.ExportOptions{Format: "png"}
	est := exportEstimate(t, data, opt)
	mem := membudget.New(est - 1)
	e := newEnv(t, Config{Memory: mem})
	src := e.add("kitchen.jpg", "image/jpeg", data)
	if src.Status != core.AssetReady {
		t.Fatalf("source: %+v", src)
	}
	if got := e.s.exportMemory(mustRecord(t, e, src.ID), opt); got != est {
		t.Fatalf("service estimate %d, the test computed %d", got, est)
	}
	x, _, err := e.s.Export(owner, src.ID, opt)
	if err != nil {
		t.Fatal(err)
	}
	got := e.wait(x.ID)
	if got.Status != core.AssetFailed || got.Code != core.CodeResolutionTooLarge {
		t.Fatalf("over-budget export: %+v", got)
	}
	for _, want := range []string{membudget.MB(est), membudget.MB(est - 1), "engine.memory_mb"} {
		if !strings.Contains(got.Reason, want) {
			t.Errorf("reason %q does not mention %q", got.Reason, want)
		}
	}
	small, _, err := e.s.Export(owner, src.ID, core.ExportOptions{Format: "jpeg", MaxEdge: 256})
	if err != nil {
		t.Fatal(err)
	}
	if a := e.wait(small.ID); a.Status != core.AssetReady {
		t.Fatalf("small export: %+v", a)
	}
	if s := mem.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Fatalf("budget after the exports: %+v", s)
	}
}

// An export waits, pending, while the budget is held elsewhere (an order); when the
// service stops meanwhile it gives its place back, and the next Serve makes it.
func TestExportWaitsForMemoryAndStopsCleanly(t *testing.T) {
	data := photo(t, "interiors", "houses_185_kitchen.jpg")
	opt := core.ExportOptions{Format: "webp", Quality: 80, MaxEdge: 300}
	est := exportEstimate(t, data, opt)
	mem := membudget.New(4 * est)
	dir := t.TempDir()
	e := openEnv(t, dir, Config{Memory: mem}, nil)
	src := e.add("kitchen.jpg", "image/jpeg", data)
	held := mem.Size() - est + 1 // what a running order holds: one byte too much
	if err := mem.Acquire(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	x, _, err := e.s.Export(owner, src.ID, opt)
	if err != nil {
		t.Fatal(err)
	}
	waitBudget(t, mem, "saw the export wait", func(s membudget.Stats) bool { return s.Waiting == 1 })
	if a, _ := e.s.Get(owner, x.ID); a.Status != core.AssetPending {
		t.Fatalf("export is %s while it waits for memory", a.Status)
	}
	e.stop()
	if s := mem.Stats(); s.Used != held || s.Waiting != 0 {
		t.Fatalf("budget after the service stopped: %+v (held %d)", s, held)
	}
	mem.Release(held)

	e = openEnv(t, dir, Config{Memory: mem}, nil)
	if a := e.wait(x.ID); a.Status != core.AssetReady || a.Width != 300 {
		t.Fatalf("export after restart: %+v", a)
	}
	waitBudget(t, mem, "balanced", func(s membudget.Stats) bool { return s.Used == 0 && s.Waiting == 0 })
}

func mustRecord(t *testing.T, e *env, id string) *record {
	t.Helper()
	r, err := e.s.getRecord(id)
	if err != nil || r == nil {
		t.Fatalf("no record %s", id)
	}
	return r
}
