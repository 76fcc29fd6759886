package engine

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// Orders left running by a dead process go back to pending at their old queue place,
// except those that have already started MaxAttempts times: they fail.
func TestRecoveryRequeuesInPlaceAndGivesUpAfterMaxAttempts(t *testing.T) {
	dir := t.TempDir()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)
	mk := func(id string, attempts int) *core.Order {
		return &core.Order{ID: id, Owner: "o", Inputs: []string{"x"}, Attempts: attempts,
			Stage: "merging brackets", Progress: 40, CreatedAt: now, UpdatedAt: now}
	}
	ctx := context.Background()
	orders := store.NewOrders(db)
	first, crashed, doomed, last := mk("first", 0), mk("crashed", 1), mk("doomed", 3), mk("last", 0)
	err = orders.Update(ctx, func(tx core.OrdersTx) error {
		for _, r := range []*core.Order{first, crashed, doomed, last} {
			if err := tx.Enqueue(r); err != nil {
				return err
			}
		}
		for _, r := range []*core.Order{crashed, doomed} {
			if err := move(tx, r, core.OrderRunning, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	as, err := assets.New(db, dir, assets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := New(db, as, Config{MaxAttempts: 3, Logger: quiet, Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	var order []string
	pending, err := orders.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range pending {
		order = append(order, o.ID)
	}
	if n, err := orders.Counts(ctx); err != nil || n.Running != 0 {
		t.Errorf("%d orders left in queue/running (%v)", n.Running, err)
	}
	got := map[string]*core.Order{}
	for _, id := range []string{"first", "crashed", "doomed", "last"} {
		if got[id], err = orders.Get(ctx, id); err != nil || got[id] == nil {
			t.Fatalf("order %s after recovery: %v", id, err)
		}
	}
	if want := []string{"first", "crashed", "last"}; len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("queue after recovery %v, want %v (old places kept)", order, want)
	}
	if c := got["crashed"]; c.Status != core.OrderPending || c.Progress != 0 || c.Stage != StageQueued || c.Attempts != 1 {
		t.Fatalf("crashed order after recovery: %+v", *c)
	}
	if d := got["doomed"]; d.Status != core.OrderFailed || d.ErrorCode != CodeInterrupted || d.Error == "" {
		t.Fatalf("order interrupted 3 times: %+v", *d)
	}
}
