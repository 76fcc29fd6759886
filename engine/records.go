package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/porchlight/porchlight/core"
)

// ownedRecord reads owner's order id; core.NotFound when it is missing or another
// key's (ownership failures answer 404).
func ownedRecord(tx core.OrdersReader, owner, id string) (*core.Order, error) {
	r, err := tx.Get(id)
	if err != nil {
		return nil, err
	}
	if r == nil || owner == "" || r.Owner != owner {
		return nil, core.NotFound("order %s not found", id)
	}
	return r, nil
}

func ownedBatch(tx core.OrdersReader, owner, id string) (*core.Batch, error) {
	b, err := tx.Batch(id)
	if err != nil {
		return nil, err
	}
	if b == nil || owner == "" || b.Owner != owner {
		return nil, core.NotFound("batch %s not found", id)
	}
	return b, nil
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

// move changes r's state inside tx; the store keeps the queue in step with it.
func move(tx core.OrdersTx, r *core.Order, to core.OrderStatus, now time.Time) error {
	if !CanMove(r.Status, to) {
		return fmt.Errorf("order %s: no transition from %s to %s", r.ID, r.Status, to)
	}
	if to.Terminal() || to == core.OrderPending {
		r.ETASeconds = nil
	}
	r.UpdatedAt = now
	return tx.Move(r, to)
}

// outbox collects what a transaction changed, to publish once it committed.
type outbox struct {
	orders  []core.Order
	batches []string
}

func (o *outbox) order(r *core.Order) {
	o.orders = append(o.orders, *r)
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

// commit runs fn in a write transaction of the order store and publishes the
// outbox after it committed.
func (e *Engine) commit(ctx context.Context, fn func(tx core.OrdersTx, ob *outbox) error) error {
	var ob outbox
	err := e.orders.Update(ctx, func(tx core.OrdersTx) error {
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
	err := e.orders.View(context.Background(), func(tx core.OrdersReader) error {
		b, err := tx.Batch(id)
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
