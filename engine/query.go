package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/porchlight/porchlight/core"
)

// Stages shown in progressStage outside the pipeline's own.
const (
	StageQueued        = "queued"
	StageWaitingMemory = "waiting for memory"
	StageStarting      = "starting"
)

// summaryOf is the public view of o with the in-memory progress of a running order
// or the waiting reason of a pending one laid over the stored record.
func (e *Engine) summaryOf(o core.Order) core.OrderSummary {
	switch o.Status {
	case core.OrderRunning:
		e.mu.Lock()
		l := e.lives[o.ID]
		e.mu.Unlock()
		if l != nil {
			l.mu.Lock()
			o.Progress, o.Stage, o.ETASeconds = l.rec.Progress, l.rec.Stage, l.rec.ETASeconds
			l.mu.Unlock()
		}
	case core.OrderPending:
		e.mu.Lock()
		if st, ok := e.waiting[o.ID]; ok {
			o.Stage = st
		}
		e.mu.Unlock()
	}
	return o.Summary()
}

// Order returns owner's order id.
func (e *Engine) Order(ctx context.Context, owner, id string) (core.OrderSummary, error) {
	o, err := e.OrderRecord(ctx, owner, id)
	if err != nil {
		return core.OrderSummary{}, err
	}
	return e.summaryOf(o), nil
}

// OrderRecord returns owner's full order record (options as given and resolved), for
// the window and the command line.
func (e *Engine) OrderRecord(ctx context.Context, owner, id string) (core.Order, error) {
	var o core.Order
	err := e.orders.View(ctx, func(tx core.OrdersReader) error {
		r, err := ownedRecord(tx, owner, id)
		if err != nil {
			return err
		}
		o = *r
		return nil
	})
	return o, err
}

// Batch returns owner's batch id with its scene summaries.
func (e *Engine) Batch(ctx context.Context, owner, id string) (core.BatchAggregate, error) {
	var agg core.BatchAggregate
	err := e.orders.View(ctx, func(tx core.OrdersReader) error {
		b, err := ownedBatch(tx, owner, id)
		if err != nil {
			return err
		}
		agg, err = e.aggregate(tx, b)
		return err
	})
	return agg, err
}

// aggregate counts the batch's scenes inside tx.
func (e *Engine) aggregate(tx core.OrdersReader, b *core.Batch) (core.BatchAggregate, error) {
	scenes := make([]core.OrderSummary, 0, len(b.Orders))
	for _, id := range b.Orders {
		r, err := tx.Get(id)
		if err != nil {
			return core.BatchAggregate{}, err
		}
		if r == nil {
			continue
		}
		scenes = append(scenes, e.summaryOf(*r))
	}
	return core.Aggregate(b, scenes), nil
}

// Running returns owner's running orders (the account feed's opening snapshot).
func (e *Engine) Running(ctx context.Context, owner string) []core.OrderSummary {
	running, err := e.orders.Running(ctx)
	if err != nil {
		e.log.Error("list running orders", "err", err)
	}
	var out []core.OrderSummary
	for _, o := range running {
		if o.Owner == owner && o.Status == core.OrderRunning {
			out = append(out, e.summaryOf(o))
		}
	}
	return out
}

// Orders returns owner's orders, newest first, at most limit (0: all), for the window
// and the command line.
func (e *Engine) Orders(ctx context.Context, owner string, limit int) ([]core.OrderSummary, error) {
	recs, err := e.orders.ByOwner(ctx, owner)
	if err != nil {
		return nil, err
	}
	// Newest first; ties in id order so the listing is stable.
	slices.SortFunc(recs, func(a, b core.Order) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(recs) > limit {
		recs = recs[:limit]
	}
	out := make([]core.OrderSummary, len(recs))
	for i, o := range recs {
		out[i] = e.summaryOf(o)
	}
	return out, nil
}
