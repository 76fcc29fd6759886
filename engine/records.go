package engine

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// record is what the orders bucket stores: the shared order record plus its queue
// position. The embedded fields keep the JSON readable as a core.Order.
type record struct {
	core.Order
	Seq uint64 `json:"queueSeq,omitempty"` // key of the order in queue/pending (FIFO position)
}

func getRecord(tx *bolt.Tx, id string) (*record, error) {
	v := tx.Bucket(store.BucketOrders).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("decode order %s: %w", id, err)
	}
	return &r, nil
}

func putRecord(tx *bolt.Tx, r *record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode order %s: %w", r.ID, err)
	}
	return tx.Bucket(store.BucketOrders).Put([]byte(r.ID), v)
}

// ownedRecord reads owner's order id; core.NotFound when it is missing or another
// key's (ownership failures answer 404).
func ownedRecord(tx *bolt.Tx, owner, id string) (*record, error) {
	r, err := getRecord(tx, id)
	if err != nil {
		return nil, err
	}
	if r == nil || owner == "" || r.Owner != owner {
		return nil, core.NotFound("order %s not found", id)
	}
	return r, nil
}

func getBatch(tx *bolt.Tx, id string) (*core.Batch, error) {
	v := tx.Bucket(store.BucketBatches).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var b core.Batch
	if err := json.Unmarshal(v, &b); err != nil {
		return nil, fmt.Errorf("decode batch %s: %w", id, err)
	}
	return &b, nil
}

func ownedBatch(tx *bolt.Tx, owner, id string) (*core.Batch, error) {
	b, err := getBatch(tx, id)
	if err != nil {
		return nil, err
	}
	if b == nil || owner == "" || b.Owner != owner {
		return nil, core.NotFound("batch %s not found", id)
	}
	return b, nil
}

func putBatch(tx *bolt.Tx, b *core.Batch) error {
	v, err := json.Marshal(b)
	if err != nil {
		return fmt.Errorf("encode batch %s: %w", b.ID, err)
	}
	return tx.Bucket(store.BucketBatches).Put([]byte(b.ID), v)
}

// transitions is the order state machine. Terminal states have no way out. running
// -> pending puts back an order whose run was interrupted (shutdown or crash).
var transitions = map[core.OrderStatus][]core.OrderStatus{
	core.OrderPending: {core.OrderRunning, core.OrderCancelled, core.OrderExpired, core.OrderFailed},
	core.OrderRunning: {core.OrderCompleted, core.OrderFailed, core.OrderCancelled, core.OrderPending},
}

// CanMove reports whether the state machine allows an order to go from one state
// to another.
func CanMove(from, to core.OrderStatus) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// move changes r's state inside tx, keeping the queue buckets in step: pending
// orders are in queue/pending under their sequence number, running ones in
// queue/running, settled ones in neither.
func move(tx *bolt.Tx, r *record, to core.OrderStatus, now time.Time) error {
	if !CanMove(r.Status, to) {
		return fmt.Errorf("order %s: no transition from %s to %s", r.ID, r.Status, to)
	}
	pending := store.Queue(tx, store.BucketQueuePending)
	running := store.Queue(tx, store.BucketQueueRunning)
	switch r.Status {
	case core.OrderPending:
		if err := pending.Delete(store.Itob(r.Seq)); err != nil {
			return err
		}
	case core.OrderRunning:
		if err := running.Delete([]byte(r.ID)); err != nil {
			return err
		}
	}
	switch to {
	case core.OrderPending:
		if err := pending.Put(store.Itob(r.Seq), []byte(r.ID)); err != nil {
			return err
		}
	case core.OrderRunning:
		if err := running.Put([]byte(r.ID), store.Itob(r.Seq)); err != nil {
			return err
		}
	}
	if to.Terminal() || to == core.OrderPending {
		r.ETASeconds = nil
	}
	r.Status = to
	r.UpdatedAt = now
	return putRecord(tx, r)
}

// enqueue stores a new pending order at the tail of the queue, indexed by owner.
func enqueue(tx *bolt.Tx, r *record) error {
	pending := store.Queue(tx, store.BucketQueuePending)
	seq, err := pending.NextSequence()
	if err != nil {
		return err
	}
	r.Seq = seq
	r.Status = core.OrderPending
	if err := pending.Put(store.Itob(seq), []byte(r.ID)); err != nil {
		return err
	}
	if err := tx.Bucket(store.BucketOwnerOrders).Put([]byte(r.Owner+"/"+r.ID), nil); err != nil {
		return err
	}
	return putRecord(tx, r)
}

// outbox collects what a transaction changed, to publish once it committed.
type outbox struct {
	orders  []core.Order
	batches []string
}

func (o *outbox) order(r *record) {
	o.orders = append(o.orders, r.Order)
	if r.BatchID != "" {
		o.batch(r.BatchID)
	}
}

func (o *outbox) batch(id string) {
	for _, b := range o.batches {
		if b == id {
			return
		}
	}
	o.batches = append(o.batches, id)
}

// commit runs fn in a write transaction and publishes the outbox after it committed.
func (e *Engine) commit(fn func(tx *bolt.Tx, ob *outbox) error) error {
	var ob outbox
	err := e.db.Update(func(tx *bolt.Tx) error {
		ob = outbox{}
		return fn(tx, &ob)
	})
	if err != nil {
		return err
	}
	e.publish(&ob)
	return nil
}

func (e *Engine) publish(ob *outbox) {
	for _, o := range ob.orders {
		e.publishOrder(o)
	}
	for _, id := range ob.batches {
		e.publishBatch(id)
	}
}

// publishOrder sends a state change. For an order a worker holds it goes through the
// live guard: after a terminal event nothing of that order is published again, so a
// stream never shows running after completed or cancelled.
func (e *Engine) publishOrder(o core.Order) {
	ev := core.Event{Type: core.EventOrder, Owner: o.Owner, OrderID: o.ID, BatchID: o.BatchID}
	e.mu.Lock()
	l := e.lives[o.ID]
	e.mu.Unlock()
	if l == nil {
		ev.Data = e.summaryOf(o)
		e.bus.Publish(ev)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.settled {
		return
	}
	if o.Status.Terminal() {
		l.settled = true
	}
	if o.Status == core.OrderRunning {
		o.Progress, o.Stage, o.ETASeconds = l.rec.Progress, l.rec.Stage, l.rec.ETASeconds
	}
	ev.Data = o.Summary()
	e.bus.Publish(ev)
}

// publishBatch sends the batch's aggregate (without scene summaries). Reading and
// publishing under one lock keeps the published counters monotonic.
func (e *Engine) publishBatch(id string) {
	e.batchMu.Lock()
	defer e.batchMu.Unlock()
	var agg core.BatchAggregate
	var owner string
	err := e.db.View(func(tx *bolt.Tx) error {
		b, err := getBatch(tx, id)
		if err != nil || b == nil {
			return err
		}
		owner = b.Owner
		agg, err = e.aggregate(tx, b)
		return err
	})
	if err != nil || owner == "" {
		if err != nil {
			e.log.Error("read batch for its event", "batch", id, "err", err)
		}
		return
	}
	agg.Orders = nil
	e.bus.Publish(core.Event{Type: core.EventBatch, Owner: owner, BatchID: id, Data: agg})
}
