package engine

import (
	"context"

	"github.com/porchlight/porchlight/core"
)

// StageCancelled and the other terminal stages name the state in progressStage.
const (
	StageCompleted = "completed"
	StageFailed    = "failed"
	StageCancelled = "cancelled"
	StageExpired   = "expired"
)

// Cancel cancels owner's order id when it is pending or running; repeating it
// answers the same summary. A completed, failed or expired order answers
// core.Conflict, including when completion committed first in a race with the
// cancel (completion wins). A running step is told through its context; whatever it
// finishes afterwards is not attached to the order.
func (e *Engine) Cancel(ctx context.Context, owner, id string) (core.OrderSummary, error) {
	var out core.Order
	var stop bool
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := ownedRecord(tx, owner, id)
		if err != nil {
			return err
		}
		switch r.Status {
		case core.OrderCancelled:
			out = *r
			return nil
		case core.OrderCompleted, core.OrderFailed, core.OrderExpired:
			return core.Conflict("order %s is already %s and can no longer be cancelled", id, r.Status)
		}
		stop = r.Status == core.OrderRunning
		r.Stage = StageCancelled
		if err := move(tx, r, core.OrderCancelled, e.now()); err != nil {
			return err
		}
		ob.order(r)
		out = *r
		return nil
	})
	if err != nil {
		return core.OrderSummary{}, wrapInternal(err, "cancel order")
	}
	if stop {
		e.stopRunning(id)
	}
	e.clearWaiting(id)
	e.signal()
	return out.Summary(), nil
}

// CancelBatch cancels every pending or running scene of owner's batch id in one
// transaction; settled scenes keep their state, and a scene whose completion
// committed first keeps its result. Repeating it answers the aggregate again.
func (e *Engine) CancelBatch(ctx context.Context, owner, id string) (core.BatchAggregate, error) {
	var running []string
	var bid string
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		b, err := ownedBatch(tx, owner, id)
		if err != nil {
			return err
		}
		bid = b.ID
		now := e.now()
		for _, oid := range b.Orders {
			r, err := tx.Get(oid)
			if err != nil {
				return err
			}
			if r == nil || r.Status.Terminal() {
				continue
			}
			if r.Status == core.OrderRunning {
				running = append(running, oid)
			}
			r.Stage = StageCancelled
			if err := move(tx, r, core.OrderCancelled, now); err != nil {
				return err
			}
			ob.order(r)
		}
		return nil
	})
	if err != nil {
		return core.BatchAggregate{}, wrapInternal(err, "cancel batch")
	}
	for _, oid := range running {
		e.stopRunning(oid)
	}
	e.signal()
	return e.Batch(ctx, owner, bid)
}

// stopRunning cancels the context of a running order's steps.
func (e *Engine) stopRunning(id string) {
	e.mu.Lock()
	l := e.lives[id]
	e.mu.Unlock()
	if l != nil {
		l.cancel(errOrderCancelled)
	}
}

func (e *Engine) clearWaiting(id string) {
	e.mu.Lock()
	delete(e.waiting, id)
	e.mu.Unlock()
}
