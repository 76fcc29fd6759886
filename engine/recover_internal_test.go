package engine

import (
	"io"
	"log/slog"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

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
	mk := func(id string, attempts int) *record {
		return &record{Order: core.Order{ID: id, Owner: "o", Inputs: []string{"x"}, Attempts: attempts,
			Stage: "merging brackets", Progress: 40, CreatedAt: now, UpdatedAt: now}}
	}
	first, crashed, doomed, last := mk("first", 0), mk("crashed", 1), mk("doomed", 3), mk("last", 0)
	err = db.Update(func(tx *bolt.Tx) error {
		for _, r := range []*record{first, crashed, doomed, last} {
			if err := enqueue(tx, r); err != nil {
				return err
			}
		}
		for _, r := range []*record{crashed, doomed} {
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
	got := map[string]*record{}
	db.View(func(tx *bolt.Tx) error {
		store.Queue(tx, store.BucketQueuePending).ForEach(func(_, v []byte) error {
			order = append(order, string(v))
			return nil
		})
		if n := store.Queue(tx, store.BucketQueueRunning).Stats().KeyN; n != 0 {
			t.Errorf("%d orders left in queue/running", n)
		}
		for _, id := range []string{"first", "crashed", "doomed", "last"} {
			got[id], _ = getRecord(tx, id)
		}
		return nil
	})
	if want := []string{"first", "crashed", "last"}; len(order) != 3 || order[0] != want[0] || order[1] != want[1] || order[2] != want[2] {
		t.Fatalf("queue after recovery %v, want %v (old places kept)", order, want)
	}
	if c := got["crashed"]; c.Status != core.OrderPending || c.Progress != 0 || c.Stage != StageQueued || c.Attempts != 1 {
		t.Fatalf("crashed order after recovery: %+v", c.Order)
	}
	if d := got["doomed"]; d.Status != core.OrderFailed || d.ErrorCode != CodeInterrupted || d.Error == "" {
		t.Fatalf("order interrupted 3 times: %+v", d.Order)
	}
}
