package store

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

func openOrders(t *testing.T) (*DB, *Orders) {
	t.Helper()
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, NewOrders(db)
}

var t0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func newOrder(id string) *core.Order {
	return &core.Order{ID: id, Owner: "owner-a", Inputs: []string{"in-" + id}, Stage: "queued", CreatedAt: t0, UpdatedAt: t0}
}

// enqueueAll stores the orders as pending, in that order.
func enqueueAll(t *testing.T, s *Orders, ids ...string) {
	t.Helper()
	err := s.Update(context.Background(), func(tx core.OrdersTx) error {
		for _, id := range ids {
			if err := tx.Enqueue(newOrder(id)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// moveTo moves order id to status in its own transaction.
func moveTo(t *testing.T, s *Orders, id string, to core.OrderStatus) {
	t.Helper()
	err := s.Update(context.Background(), func(tx core.OrdersTx) error {
		o, err := tx.Get(id)
		if err != nil {
			return err
		}
		return tx.Move(o, to)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func ids(os []core.Order) []string {
	out := []string{}
	for _, o := range os {
		out = append(out, o.ID)
	}
	return out
}

func pendingIDs(t *testing.T, s *Orders) []string {
	t.Helper()
	p, err := s.Pending(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ids(p)
}

// The queue follows each order's status: a running order leaves the queue and comes
// back at its old place, a settled one is in neither the queue nor the running set.
func TestOrdersQueueFollowsStatus(t *testing.T) {
	_, s := openOrders(t)
	ctx := context.Background()
	enqueueAll(t, s, "a", "b", "c")
	if head, err := s.Head(ctx); err != nil || head == nil || head.ID != "a" || head.Status != core.OrderPending {
		t.Fatalf("head %+v (%v), want a pending", head, err)
	}

	moveTo(t, s, "a", core.OrderRunning)
	if head, _ := s.Head(ctx); head == nil || head.ID != "b" {
		t.Fatalf("head after a started: %+v", head)
	}
	running, err := s.Running(ctx)
	if err != nil || !reflect.DeepEqual(ids(running), []string{"a"}) || running[0].Status != core.OrderRunning {
		t.Fatalf("running %+v (%v)", running, err)
	}

	moveTo(t, s, "a", core.OrderPending)
	if got := pendingIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("queue %v after a went back, want its old place", got)
	}

	moveTo(t, s, "b", core.OrderRunning)
	moveTo(t, s, "b", core.OrderCompleted)
	moveTo(t, s, "c", core.OrderCancelled)
	if got := pendingIDs(t, s); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("queue %v, want [a]", got)
	}
	n, err := s.Counts(ctx)
	if err != nil || n != (OrderCounts{Orders: 3, Pending: 1}) {
		t.Fatalf("counts %+v (%v)", n, err)
	}
	if b, _ := s.Get(ctx, "b"); b == nil || b.Status != core.OrderCompleted {
		t.Fatalf("b is %+v", b)
	}
	if o, err := s.Get(ctx, "missing"); o != nil || err != nil {
		t.Fatalf("missing order answered %+v, %v", o, err)
	}

	mine, err := s.ByOwner(ctx, "owner-a")
	if err != nil || len(mine) != 3 {
		t.Fatalf("by owner %v (%v)", ids(mine), err)
	}
	if other, _ := s.ByOwner(ctx, "owner"); len(other) != 0 {
		t.Fatalf("a prefix of the owner lists %v", ids(other))
	}
}

// A failed transaction leaves neither the record nor its queue entry.
func TestOrdersUpdateIsAllOrNothing(t *testing.T) {
	_, s := openOrders(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := s.Update(ctx, func(tx core.OrdersTx) error {
		if err := tx.Enqueue(newOrder("a")); err != nil {
			return err
		}
		if err := tx.PutBatch(&core.Batch{ID: "batch", Owner: "owner-a", Orders: []string{"a"}}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v", err)
	}
	if n, _ := s.Counts(ctx); n != (OrderCounts{}) {
		t.Fatalf("a rolled back transaction left %+v", n)
	}

	// A done context starts no transaction.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	ran := false
	if err := s.Update(cctx, func(core.OrdersTx) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
		t.Fatalf("cancelled update ran %v, err %v", ran, err)
	}
}

// The bytes on disk are those of the engine before the store: existing databases
// keep working, in both directions.
func TestOrdersOnDiskFormat(t *testing.T) {
	db, s := openOrders(t)
	ctx := context.Background()
	enqueueAll(t, s, "a", "b")
	moveTo(t, s, "b", core.OrderRunning)
	err := s.Update(ctx, func(tx core.OrdersTx) error {
		if err := tx.PutBatch(&core.Batch{ID: "batch", Owner: "owner-a", Name: "n", Orders: []string{"a"}, CreatedAt: t0}); err != nil {
			return err
		}
		return tx.PutIdempotency("owner-a", "key-1", core.IdempotencyRecord{Kind: "order", Fingerprint: "fp", ID: "a", CreatedAt: t0})
	})
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		var rec map[string]any
		if err := json.Unmarshal(tx.Bucket(bucketOrders).Get([]byte("b")), &rec); err != nil {
			t.Fatal(err)
		}
		if rec["orderUuid"] != "b" || rec["status"] != "running" || rec["queueSeq"] != 2.0 {
			t.Errorf("record of b: %v", rec)
		}
		if got := string(queue(tx, bucketQueuePending).Get(Itob(1))); got != "a" {
			t.Errorf("queue/pending 1 -> %q", got)
		}
		if got := Btoi(queue(tx, bucketQueueRunning).Get([]byte("b"))); got != 2 {
			t.Errorf("queue/running b -> %d", got)
		}
		if k, _ := tx.Bucket(bucketOwnerOrders).Cursor().First(); string(k) != "owner-a/a" {
			t.Errorf("owner_orders starts with %q, want owner-a/a", k)
		}
		var ent map[string]any
		if err := json.Unmarshal(tx.Bucket(bucketIdempotency).Get([]byte("owner-a/key-1")), &ent); err != nil {
			t.Fatal(err)
		}
		if ent["kind"] != "order" || ent["fingerprint"] != "fp" || ent["id"] != "a" || ent["createdAt"] != "2025-03-01T09:00:00Z" {
			t.Errorf("idempotency entry %v", ent)
		}
		return nil
	})

	// An order written by hand the old way is read, moved and listed.
	err = db.Update(func(tx *bolt.Tx) error {
		v := []byte(`{"orderUuid":"old","owner":"owner-b","status":"pending","inputs":["x"],"options":{},"resolved":{},"progressPercent":0,"createdAt":"2025-03-01T09:00:00Z","updatedAt":"2025-03-01T09:00:00Z","queueSeq":7}`)
		if err := tx.Bucket(bucketOrders).Put([]byte("old"), v); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOwnerOrders).Put([]byte("owner-b/old"), nil); err != nil {
			return err
		}
		return queue(tx, bucketQueuePending).Put(Itob(7), []byte("old"))
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := pendingIDs(t, s); !reflect.DeepEqual(got, []string{"a", "old"}) {
		t.Fatalf("queue %v", got)
	}
	moveTo(t, s, "old", core.OrderRunning)
	moveTo(t, s, "old", core.OrderPending)
	db.View(func(tx *bolt.Tx) error {
		if got := string(queue(tx, bucketQueuePending).Get(Itob(7))); got != "old" {
			t.Errorf("the old order left its place 7: %q", got)
		}
		return nil
	})
	if mine, _ := s.ByOwner(ctx, "owner-b"); len(mine) != 1 || mine[0].ID != "old" || mine[0].Inputs[0] != "x" {
		t.Fatalf("owner-b's orders %+v", mine)
	}
}

// An entry of queue/pending that leads nowhere is reported and dropped, a sound head
// is not.
func TestOrdersDanglingHead(t *testing.T) {
	db, s := openOrders(t)
	ctx := context.Background()
	enqueueAll(t, s, "a")
	db.Update(func(tx *bolt.Tx) error {
		return queue(tx, bucketQueuePending).Put(Itob(0), []byte("ghost"))
	})
	if _, err := s.Head(ctx); !errors.Is(err, core.ErrDanglingEntry) {
		t.Fatalf("head over a dangling entry: %v", err)
	}
	if err := s.DropDanglingHead(ctx); err != nil {
		t.Fatal(err)
	}
	if head, err := s.Head(ctx); err != nil || head == nil || head.ID != "a" {
		t.Fatalf("head %+v (%v)", head, err)
	}
	if err := s.DropDanglingHead(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pendingIDs(t, s); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("a sound head was dropped: %v", got)
	}

	// An entry whose order moved on (its place is not this one) dangles too.
	moveTo(t, s, "a", core.OrderCancelled)
	db.Update(func(tx *bolt.Tx) error { return queue(tx, bucketQueuePending).Put(Itob(1), []byte("a")) })
	if _, err := s.Head(ctx); !errors.Is(err, core.ErrDanglingEntry) {
		t.Fatalf("head over a cancelled order: %v", err)
	}
	s.DropDanglingHead(ctx)
	if head, err := s.Head(ctx); head != nil || err != nil {
		t.Fatalf("empty queue answered %+v, %v", head, err)
	}
}

// RecoverRunning hands over every running order in one transaction and drops
// entries of orders that are not running; a requeued order takes its old place.
func TestOrdersRecoverRunning(t *testing.T) {
	db, s := openOrders(t)
	ctx := context.Background()
	enqueueAll(t, s, "a", "b", "c", "d")
	moveTo(t, s, "b", core.OrderRunning)
	moveTo(t, s, "d", core.OrderRunning)
	db.Update(func(tx *bolt.Tx) error {
		return queue(tx, bucketQueueRunning).Put([]byte("stale"), Itob(9))
	})
	var seen []string
	err := s.RecoverRunning(ctx, func(tx core.OrdersTx, o *core.Order) error {
		seen = append(seen, o.ID)
		if o.Status != core.OrderRunning {
			t.Errorf("handed %s %s", o.ID, o.Status)
		}
		if o.ID == "d" {
			return tx.Move(o, core.OrderFailed)
		}
		return tx.Move(o, core.OrderPending)
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seen, []string{"b", "d"}) {
		t.Fatalf("handed %v", seen)
	}
	if got := pendingIDs(t, s); !reflect.DeepEqual(got, []string{"a", "b", "c"}) {
		t.Fatalf("queue after recovery %v", got)
	}
	if n, _ := s.Counts(ctx); n.Running != 0 {
		t.Fatalf("%d entries left in queue/running", n.Running)
	}

	// An error from fn rolls the whole recovery back.
	moveTo(t, s, "a", core.OrderRunning)
	boom := errors.New("boom")
	if err := s.RecoverRunning(ctx, func(core.OrdersTx, *core.Order) error { return boom }); !errors.Is(err, boom) {
		t.Fatal(err)
	}
	if running, _ := s.Running(ctx); len(running) != 1 {
		t.Fatalf("running after a failed recovery: %v", ids(running))
	}
}

func TestOrdersIdempotency(t *testing.T) {
	db, s := openOrders(t)
	ctx := context.Background()
	err := s.Update(ctx, func(tx core.OrdersTx) error {
		for i, key := range []string{"old", "at-cutoff", "young"} {
			rec := core.IdempotencyRecord{Kind: "order", Fingerprint: "fp", ID: key, CreatedAt: t0.Add(time.Duration(i) * time.Hour)}
			if err := tx.PutIdempotency("owner-a", key, rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIdempotency).Put([]byte("owner-a/garbled"), []byte("{"))
	})
	if err := s.ForgetIdempotency(ctx, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s.View(ctx, func(tx core.OrdersReader) error {
		for key, want := range map[string]bool{"old": false, "at-cutoff": false, "young": true, "garbled": false} {
			rec, err := tx.Idempotency("owner-a", key)
			if err != nil || (rec != nil) != want {
				t.Errorf("key %s: %+v (%v), want kept %v", key, rec, err, want)
			}
		}
		if rec, _ := tx.Idempotency("owner-b", "young"); rec != nil {
			t.Error("another owner's key answered")
		}
		return nil
	})
	if n, _ := s.Counts(ctx); n.Idempotency != 1 {
		t.Fatalf("%d idempotency records left", n.Idempotency)
	}
}

func TestOrdersStepTimings(t *testing.T) {
	_, s := openOrders(t)
	ctx := context.Background()
	if m, err := s.StepTimings(ctx); m != nil || err != nil {
		t.Fatalf("fresh database: %v, %v", m, err)
	}
	want := map[string]float64{"fuse": 0.25, "encode": 0.01}
	if err := s.SaveStepTimings(ctx, want); err != nil {
		t.Fatal(err)
	}
	if m, err := s.StepTimings(ctx); err != nil || !reflect.DeepEqual(m, want) {
		t.Fatalf("timings %v (%v)", m, err)
	}
}
