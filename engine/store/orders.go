package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

// Orders is the engine's order store on this database (core.OrderStore): orders/,
// queue/pending/, queue/running/, batches/, owner_orders/, idempotency/ and the
// step timings in meta/.
type Orders struct{ db *DB }

var _ core.OrderStore = (*Orders)(nil)

// NewOrders returns the order store of db.
func NewOrders(db *DB) *Orders { return &Orders{db: db} }

// orderRecord is what orders/ stores: the order plus its key in queue/pending. The
// embedded fields keep the JSON readable as a core.Order.
type orderRecord struct {
	core.Order
	Seq uint64 `json:"queueSeq,omitempty"` // FIFO position
}

// keyStepTimings holds the pipeline's cost model in meta/, so progress weights and
// ETAs are right from the first order after a restart.
var keyStepTimings = []byte("engine_step_timings")

// ordersTx is one transaction of the order store. seqs remembers the queue position
// of every order read or written in it, so a move need not decode the record again.
type ordersTx struct {
	tx   *bolt.Tx
	seqs map[string]uint64
}

// Update implements core.OrderStore.
func (s *Orders) Update(ctx context.Context, fn func(tx core.OrdersTx) error) error {
	return s.update(ctx, func(t *ordersTx) error { return fn(t) })
}

// View implements core.OrderStore.
func (s *Orders) View(ctx context.Context, fn func(tx core.OrdersReader) error) error {
	return s.view(ctx, func(t *ordersTx) error { return fn(t) })
}

// Get implements core.OrderStore.
func (s *Orders) Get(ctx context.Context, id string) (*core.Order, error) {
	var o *core.Order
	err := s.View(ctx, func(tx core.OrdersReader) error {
		var err error
		o, err = tx.Get(id)
		return err
	})
	return o, err
}

// ByOwner implements core.OrderStore.
func (s *Orders) ByOwner(ctx context.Context, owner string) ([]core.Order, error) {
	var out []core.Order
	err := s.view(ctx, func(t *ordersTx) error {
		c := t.tx.Bucket(bucketOwnerOrders).Cursor()
		prefix := []byte(owner + "/")
		for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			r, err := getOrder(t.tx, string(k[len(prefix):]))
			if err != nil {
				return err
			}
			if r != nil {
				out = append(out, r.Order)
			}
		}
		return nil
	})
	return out, err
}

// Pending implements core.OrderStore.
func (s *Orders) Pending(ctx context.Context) ([]core.Order, error) {
	var out []core.Order
	err := s.view(ctx, func(t *ordersTx) error {
		return queue(t.tx, bucketQueuePending).ForEach(func(_, v []byte) error {
			r, err := getOrder(t.tx, string(v))
			if err != nil || r == nil {
				return err
			}
			out = append(out, r.Order)
			return nil
		})
	})
	return out, err
}

// Running implements core.OrderStore.
func (s *Orders) Running(ctx context.Context) ([]core.Order, error) {
	var out []core.Order
	err := s.view(ctx, func(t *ordersTx) error {
		c := queue(t.tx, bucketQueueRunning).Cursor()
		for k, _ := c.First(); k != nil; k, _ = c.Next() {
			r, err := getOrder(t.tx, string(k))
			if err != nil {
				return err
			}
			if r != nil {
				out = append(out, r.Order)
			}
		}
		return nil
	})
	return out, err
}

// Head implements core.OrderStore.
func (s *Orders) Head(ctx context.Context) (*core.Order, error) {
	var head *core.Order
	err := s.view(ctx, func(t *ordersTx) error {
		k, v := queue(t.tx, bucketQueuePending).Cursor().First()
		if k == nil {
			return nil
		}
		r, err := danglingHead(t.tx, k, v)
		if err != nil {
			return err
		}
		head = &r.Order
		return nil
	})
	return head, err
}

// danglingHead checks the queue entry k -> v: nil error and the order when it leads
// to a pending order at that place.
func danglingHead(tx *bolt.Tx, k, v []byte) (*orderRecord, error) {
	r, err := getOrder(tx, string(v))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %v", core.ErrDanglingEntry, err)
	case r == nil:
		return nil, fmt.Errorf("%w: order %s is not stored", core.ErrDanglingEntry, v)
	case r.Status != core.OrderPending || r.Seq != Btoi(k):
		return nil, fmt.Errorf("%w: order %s is %s at place %d, the entry at %d", core.ErrDanglingEntry, v, r.Status, r.Seq, Btoi(k))
	}
	return r, nil
}

// DropDanglingHead implements core.OrderStore.
func (s *Orders) DropDanglingHead(ctx context.Context) error {
	return s.update(ctx, func(t *ordersTx) error {
		q := queue(t.tx, bucketQueuePending)
		k, v := q.Cursor().First()
		if k == nil {
			return nil
		}
		if _, err := danglingHead(t.tx, k, v); err != nil {
			return q.Delete(Copy(k))
		}
		return nil
	})
}

// RecoverRunning implements core.OrderStore. An order goes back to the place in
// queue/pending that its entry in queue/running remembers.
func (s *Orders) RecoverRunning(ctx context.Context, fn func(tx core.OrdersTx, o *core.Order) error) error {
	return s.update(ctx, func(t *ordersTx) error {
		running := queue(t.tx, bucketQueueRunning)
		var ids []string
		// Collected first: nothing is deleted under a live cursor.
		if err := running.ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		}); err != nil {
			return err
		}
		for _, id := range ids {
			o, err := t.Get(id)
			if err != nil {
				return err
			}
			if o == nil || o.Status != core.OrderRunning {
				if err := running.Delete([]byte(id)); err != nil { // stale entry
					return err
				}
				continue
			}
			if seq := Btoi(running.Get([]byte(id))); seq != 0 {
				t.seqs[id] = seq
			}
			if err := fn(t, o); err != nil {
				return err
			}
		}
		return nil
	})
}

// ForgetIdempotency implements core.OrderStore. The stale records are found in a
// read transaction and deleted in a write transaction that checks each again, so a
// record replaced meanwhile stays.
func (s *Orders) ForgetIdempotency(ctx context.Context, cutoff time.Time) error {
	stale := func(v []byte) bool {
		var rec core.IdempotencyRecord
		return json.Unmarshal(v, &rec) != nil || !rec.CreatedAt.After(cutoff)
	}
	var keys [][]byte
	err := s.view(ctx, func(t *ordersTx) error {
		return t.tx.Bucket(bucketIdempotency).ForEach(func(k, v []byte) error {
			if stale(v) {
				keys = append(keys, Copy(k))
			}
			return nil
		})
	})
	if err != nil || len(keys) == 0 {
		return err
	}
	return s.update(ctx, func(t *ordersTx) error {
		b := t.tx.Bucket(bucketIdempotency)
		for _, k := range keys {
			if v := b.Get(k); v != nil && !stale(v) {
				continue // replaced meanwhile
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// StepTimings implements core.OrderStore.
func (s *Orders) StepTimings(ctx context.Context) (map[string]float64, error) {
	var m map[string]float64
	err := s.view(ctx, func(t *ordersTx) error {
		v := t.tx.Bucket(bucketMeta).Get(keyStepTimings)
		if v == nil {
			return nil
		}
		return json.Unmarshal(v, &m)
	})
	return m, err
}

// SaveStepTimings implements core.OrderStore.
func (s *Orders) SaveStepTimings(ctx context.Context, timings map[string]float64) error {
	v, err := json.Marshal(timings)
	if err != nil {
		return err
	}
	return s.update(ctx, func(t *ordersTx) error { return t.tx.Bucket(bucketMeta).Put(keyStepTimings, v) })
}

// OrderCounts are the entries of the order store's buckets.
type OrderCounts struct {
	Orders, Batches, Pending, Running, Idempotency int
}

// Counts counts the entries of each of the order store's buckets, for checks and
// tests that must see what was written (or that nothing was).
func (s *Orders) Counts(ctx context.Context) (OrderCounts, error) {
	var n OrderCounts
	err := s.view(ctx, func(t *ordersTx) error {
		n.Orders = t.tx.Bucket(bucketOrders).Stats().KeyN
		n.Batches = t.tx.Bucket(bucketBatches).Stats().KeyN
		n.Pending = queue(t.tx, bucketQueuePending).Stats().KeyN
		n.Running = queue(t.tx, bucketQueueRunning).Stats().KeyN
		n.Idempotency = t.tx.Bucket(bucketIdempotency).Stats().KeyN
		return nil
	})
	return n, err
}

func (s *Orders) view(ctx context.Context, fn func(t *ordersTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(func(tx *bolt.Tx) error { return fn(&ordersTx{tx: tx, seqs: map[string]uint64{}}) })
}

func (s *Orders) update(ctx context.Context, fn func(t *ordersTx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return fn(&ordersTx{tx: tx, seqs: map[string]uint64{}}) })
}

// Get implements core.OrdersReader.
func (t *ordersTx) Get(id string) (*core.Order, error) {
	r, err := getOrder(t.tx, id)
	if err != nil || r == nil {
		return nil, err
	}
	t.seqs[id] = r.Seq
	return &r.Order, nil
}

// Batch implements core.OrdersReader.
func (t *ordersTx) Batch(id string) (*core.Batch, error) {
	v := t.tx.Bucket(bucketBatches).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var b core.Batch
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("decode batch %s: %w", id, err)
	}
	return &b, nil
}

// Idempotency implements core.OrdersReader.
func (t *ordersTx) Idempotency(owner, key string) (*core.IdempotencyRecord, error) {
	v := t.tx.Bucket(bucketIdempotency).Get(idempotencyKey(owner, key))
	if v == nil {
		return nil, nil
	}
	var rec core.IdempotencyRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return nil, fmt.Errorf("decode idempotency entry: %w", err)
	}
	return &rec, nil
}

// Enqueue implements core.OrdersTx: the key in queue/pending comes from
// NextSequence, big-endian, so the bucket's order is the queue's.
func (t *ordersTx) Enqueue(o *core.Order) error {
	pending := queue(t.tx, bucketQueuePending)
	seq, err := pending.NextSequence()
	if err != nil {
		return err
	}
	o.Status = core.OrderPending
	if err := pending.Put(Itob(seq), []byte(o.ID)); err != nil {
		return err
	}
	if err := t.tx.Bucket(bucketOwnerOrders).Put([]byte(o.Owner+"/"+o.ID), nil); err != nil {
		return err
	}
	t.seqs[o.ID] = seq
	return putOrder(t.tx, &orderRecord{Order: *o, Seq: seq})
}

// Move implements core.OrdersTx: pending orders are in queue/pending under their
// sequence number, running ones in queue/running, settled ones in neither.
func (t *ordersTx) Move(o *core.Order, to core.OrderStatus) error {
	seq, ok := t.seqs[o.ID]
	if !ok {
		r, err := getOrder(t.tx, o.ID)
		if err != nil {
			return err
		}
		if r == nil {
			return fmt.Errorf("order %s: not stored", o.ID)
		}
		seq = r.Seq
	}
	pending := queue(t.tx, bucketQueuePending)
	running := queue(t.tx, bucketQueueRunning)
	switch o.Status {
	case core.OrderPending:
		if err := pending.Delete(Itob(seq)); err != nil {
			return err
		}
	case core.OrderRunning:
		if err := running.Delete([]byte(o.ID)); err != nil {
			return err
		}
	}
	switch to {
	case core.OrderPending:
		if err := pending.Put(Itob(seq), []byte(o.ID)); err != nil {
			return err
		}
	case core.OrderRunning:
		if err := running.Put([]byte(o.ID), Itob(seq)); err != nil {
			return err
		}
	}
	o.Status = to
	t.seqs[o.ID] = seq
	return putOrder(t.tx, &orderRecord{Order: *o, Seq: seq})
}

// PutBatch implements core.OrdersTx.
func (t *ordersTx) PutBatch(b *core.Batch) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode batch %s: %w", b.ID, err)
	}
	return t.tx.Bucket(bucketBatches).Put([]byte(b.ID), v)
}

// PutIdempotency implements core.OrdersTx.
func (t *ordersTx) PutIdempotency(owner, key string, rec core.IdempotencyRecord) error {
	v, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return t.tx.Bucket(bucketIdempotency).Put(idempotencyKey(owner, key), v)
}

func idempotencyKey(owner, key string) []byte { return []byte(owner + "/" + key) }

func getOrder(tx *bolt.Tx, id string) (*orderRecord, error) {
	v := tx.Bucket(bucketOrders).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var r orderRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("decode order %s: %w", id, err)
	}
	return &r, nil
}

func putOrder(tx *bolt.Tx, r *orderRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode order %s: %w", r.ID, err)
	}
	return tx.Bucket(bucketOrders).Put([]byte(r.ID), v)
}
