package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// pollInterval is the dispatcher's safety net when no signal arrives.
const pollInterval = 2 * time.Second

// dispatch starts pending orders, oldest first, while a worker is free and the
// oldest order's memory estimate fits the budget. Orders never overtake each other:
// a big order waiting for memory is not starved by smaller ones behind it, nor by
// exports asked for after it (its claim waits in the budget's queue).
func (e *Engine) dispatch(ctx context.Context) error {
	t := time.NewTicker(pollInterval)
	defer t.Stop()
	defer e.dropClaim()
	for {
		for e.freeWorker() {
			l, err := e.next(ctx)
			if err != nil {
				if ctx.Err() == nil {
					e.log.Error("dispatch", "err", err)
				}
				break
			}
			if l == nil {
				break
			}
			select {
			case e.jobs <- l:
			case <-ctx.Done():
				e.requeue(context.WithoutCancel(ctx), l)
				e.release(l)
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-e.wake:
		case <-t.C:
		case <-e.headReady():
		}
	}
}

func (e *Engine) freeWorker() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inflight < e.cfg.Workers
}

// next claims the oldest pending order, expiring on the way those that are overdue or
// lost an input. It returns nil when the queue is empty or the oldest order must wait
// for memory.
func (e *Engine) next(ctx context.Context) (*live, error) {
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		head, err := e.orders.Head(ctx)
		if errors.Is(err, core.ErrDanglingEntry) {
			// An entry that does not point at a pending order would block the queue
			// forever; drop it.
			e.log.Warn("dropping a queue entry without a pending order", "err", err)
			if err := e.orders.DropDanglingHead(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		if head == nil {
			e.dropClaim()
			return nil, nil
		}
		if reason, code := e.expiryReason(head); reason != "" {
			if err := e.expire(ctx, head.ID, code, reason); err != nil {
				return nil, err
			}
			continue
		}
		sizes, missing, err := e.inputSizes(head)
		if err != nil {
			return nil, err
		}
		if missing != "" {
			if err := e.expire(ctx, head.ID, CodeInputDeleted, missing); err != nil {
				return nil, err
			}
			continue
		}
		est, err := e.estimate(head)
		if err != nil {
			return nil, err
		}
		if est > e.mem.Size() {
			// It could never start, and running it past the budget is what the budget
			// is for: fail it now rather than block the queue behind it.
			e.dropClaim()
			if err := e.refuse(ctx, head.ID, CodeResolutionTooLarge, e.tooLargeReason(est, sizes)); err != nil {
				return nil, err
			}
			continue
		}
		if !e.admit(head.ID, est) {
			e.setWaiting(head, StageWaitingMemory)
			return nil, nil
		}
		l, ok, err := e.claim(ctx, head.ID, sizes, est)
		if err != nil || !ok {
			e.unadmit(est)
			if err != nil {
				return nil, err
			}
			continue // cancelled meanwhile
		}
		return l, nil
	}
}

// inputSizes reads the dimensions of an order's inputs from their records. missing
// explains the first input that no longer exists.
func (e *Engine) inputSizes(r *core.Order) (sizes []image.Point, missing string, err error) {
	for i, id := range r.Inputs {
		a, err := e.assets.Get(r.Owner, id)
		if err != nil {
			if core.KindOf(err) == core.KindNotFound {
				return nil, fmt.Sprintf("inputs[%d] (%s) was deleted before the order started", i, id), nil
			}
			return nil, "", fmt.Errorf("look up inputs[%d] of order %s: %w", i, r.ID, err)
		}
		sizes = append(sizes, image.Pt(a.Width, a.Height))
	}
	if r.Resolved.GenEdit == catalog.GenMagicEraser && r.Resolved.Mask != "" {
		if _, err := e.assets.Get(r.Owner, r.Resolved.Mask); err != nil {
			if core.KindOf(err) == core.KindNotFound {
				return nil, fmt.Sprintf("the mask (%s) was deleted before the order started", r.Resolved.Mask), nil
			}
			return nil, "", fmt.Errorf("look up the mask of order %s: %w", r.ID, err)
		}
	}
	return sizes, "", nil
}

// refuse fails a pending order before it starts; an order no longer pending is left
// alone.
func (e *Engine) refuse(ctx context.Context, id, code, reason string) error {
	err := e.failFrom(ctx, id, core.OrderPending, code, reason)
	e.clearWaiting(id)
	return err
}

// failFrom moves order id to failed with code and reason, in one transaction, when
// it still has status from; otherwise it leaves the order alone.
func (e *Engine) failFrom(ctx context.Context, id string, from core.OrderStatus, code, reason string) error {
	return e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := tx.Get(id)
		if err != nil || r == nil || r.Status != from {
			return err
		}
		r.Error, r.ErrorCode = reason, code
		r.Stage = StageFailed
		if err := move(tx, r, core.OrderFailed, e.now()); err != nil {
			return err
		}
		ob.order(r)
		return nil
	})
}

func (e *Engine) setWaiting(r *core.Order, stage string) {
	e.mu.Lock()
	prev, had := e.waiting[r.ID]
	clear(e.waiting) // only the head of the queue waits for memory
	e.waiting[r.ID] = stage
	e.mu.Unlock()
	if !had || prev != stage {
		e.publishOrder(*r) // summaryOf lays the stage over it
	}
}

// claim moves a pending order to running in one transaction and registers its live
// state first, so a cancel committed right after finds the order's cancel func.
func (e *Engine) claim(ctx context.Context, id string, sizes []image.Point, est int64) (*live, bool, error) {
	lctx, cancel := context.WithCancelCause(ctx)
	l := &live{id: id, sizes: sizes, mem: est, ctx: lctx, cancel: cancel}
	e.mu.Lock()
	e.lives[id] = l
	delete(e.waiting, id)
	e.mu.Unlock()
	claimed := false
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := tx.Get(id)
		if err != nil || r == nil || r.Status != core.OrderPending {
			return err
		}
		r.Attempts++
		r.Progress = 0
		r.Stage = StageStarting
		r.Error, r.ErrorCode = "", ""
		if err := move(tx, r, core.OrderRunning, e.now()); err != nil {
			return err
		}
		l.mu.Lock()
		l.rec = *r
		l.mu.Unlock()
		claimed = true
		ob.order(r)
		return nil
	})
	if err != nil || !claimed {
		e.mu.Lock()
		delete(e.lives, id)
		e.mu.Unlock()
		cancel(nil)
		return nil, false, err
	}
	return l, true, nil
}

// worker processes claimed orders until ctx is done.
func (e *Engine) worker(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case l := <-e.jobs:
			e.process(l)
		}
	}
}

// release returns a finished order's memory and worker slot.
func (e *Engine) release(l *live) {
	l.cancel(nil)
	e.mu.Lock()
	if e.lives[l.id] == l {
		delete(e.lives, l.id)
	}
	e.inflight--
	e.mu.Unlock()
	e.mem.Release(l.mem)
	e.signal()
}

// process runs one claimed order and records its outcome.
func (e *Engine) process(l *live) {
	defer e.release(l)
	l.mu.Lock()
	rec := l.rec
	l.mu.Unlock()
	req := pipeline.Request{
		OrderID: rec.ID, Owner: rec.Owner, Inputs: rec.Inputs, Options: rec.Resolved,
		Sizes: l.sizes, Assets: e.pipelineAssets(),
	}
	if rec.BatchID != "" && rec.Resolved.ShootConsistency {
		req.Shoot = e.shoot(rec.BatchID)
	}
	res, err := e.runPipeline(l, req)
	// The outcome is recorded even when the order's context ended.
	ctx := context.WithoutCancel(l.ctx)
	switch {
	case err == nil:
		e.complete(ctx, l, res)
	case l.ctx.Err() != nil && errors.Is(context.Cause(l.ctx), errOrderCancelled):
		// Already cancelled in the database; nothing to record.
	case l.ctx.Err() != nil:
		e.requeue(ctx, l) // shutting down: run it again on the next start
	default:
		e.fail(ctx, l, pipeline.CodeOf(err), err.Error())
	}
}

// runPipeline runs the pipeline, turning a panic outside the steps into an error.
func (e *Engine) runPipeline(l *live, req pipeline.Request) (res pipeline.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("order crashed", "order", l.id, "panic", fmt.Sprint(r))
			err = pipeline.Errorf(pipeline.CodeInternal, "processing failed unexpectedly (an internal error): %v", r)
		}
	}()
	return e.pipe.Run(l.ctx, req, func(p pipeline.Progress) { e.progress(l, p) })
}

// progress publishes a running order's progress, coalesced by the bus. Percent never
// goes backwards within a run, even when a re-estimate would say so.
func (e *Engine) progress(l *live, p pipeline.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.settled {
		return
	}
	pct := math.Round(p.Percent*10) / 10
	l.rec.Progress = max(l.rec.Progress, min(pct, 99.9))
	l.rec.Stage = p.Stage
	eta := int(math.Ceil(p.ETA.Seconds()))
	l.rec.ETASeconds = &eta
	e.bus.PublishCoalesced(l.id, core.Event{
		Type: core.EventOrder, Owner: l.rec.Owner, OrderID: l.id, BatchID: l.rec.BatchID, Data: l.rec.Summary(),
	})
}

// complete attaches the output when the order is still running. When a cancel
// committed first, the output is not attached and is removed again.
func (e *Engine) complete(ctx context.Context, l *live, res pipeline.Result) {
	attached := false
	var owner string
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := tx.Get(l.id)
		if err != nil || r == nil || r.Status != core.OrderRunning {
			return err
		}
		owner = r.Owner
		r.OutputID = res.Output.ID
		r.Recipes = catalog.RecipesFor(r.Resolved, len(r.Inputs))
		r.Notes = res.Notes
		r.Progress = 100
		r.Stage = StageCompleted
		r.Error, r.ErrorCode = "", ""
		if err := move(tx, r, core.OrderCompleted, e.now()); err != nil {
			return err
		}
		attached = true
		ob.order(r)
		return nil
	})
	if err != nil {
		e.log.Error("record completed order", "order", l.id, "err", err)
		return
	}
	if !attached && res.Output.ID != "" {
		if d, ok := e.assets.(assetDeleter); ok {
			if owner == "" {
				owner = res.Output.Owner
			}
			if err := d.Delete(owner, res.Output.ID); err != nil && core.KindOf(err) != core.KindNotFound {
				e.log.Warn("remove the output of a cancelled order", "order", l.id, "asset", res.Output.ID, "err", err)
			}
		}
	}
}

// fail records a failure when the order is still running.
func (e *Engine) fail(ctx context.Context, l *live, code, reason string) {
	if err := e.failFrom(ctx, l.id, core.OrderRunning, code, reason); err != nil {
		e.log.Error("record failed order", "order", l.id, "err", err)
	}
}

// requeue puts an order interrupted by shutdown back at its place in the queue; the
// interrupted start does not count as an attempt.
func (e *Engine) requeue(ctx context.Context, l *live) {
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := tx.Get(l.id)
		if err != nil || r == nil || r.Status != core.OrderRunning {
			return err
		}
		r.Attempts = max(r.Attempts-1, 0)
		r.Progress = 0
		r.Stage = StageQueued
		if err := move(tx, r, core.OrderPending, e.now()); err != nil {
			return err
		}
		ob.order(r)
		return nil
	})
	if err != nil {
		e.log.Error("requeue interrupted order", "order", l.id, "err", err)
	}
}

// shoot describes batch id to the pipeline's shoot-consistency step: its scenes as
// stored now, those failed, cancelled or expired marked to be left out of the look.
// The step reads them itself, when it needs them, from the order's goroutine.
func (e *Engine) shoot(id string) *pipeline.Shoot {
	return &pipeline.Shoot{ID: id, Scenes: func(ctx context.Context) ([]pipeline.ShootScene, error) {
		var out []pipeline.ShootScene
		err := e.orders.View(ctx, func(tx core.OrdersReader) error {
			b, err := tx.Batch(id)
			if err != nil || b == nil {
				if err == nil {
					err = fmt.Errorf("batch %s not found", id)
				}
				return err
			}
			for _, oid := range b.Orders {
				r, err := tx.Get(oid)
				if err != nil {
					return err
				}
				if r == nil {
					continue
				}
				switch r.Status {
				case core.OrderFailed, core.OrderCancelled, core.OrderExpired:
					out = append(out, pipeline.ShootScene{OrderID: r.ID, Skip: true})
				default:
					out = append(out, pipeline.ShootScene{OrderID: r.ID, Inputs: r.Inputs, Options: r.Resolved})
				}
			}
			return nil
		})
		return out, err
	}}
}
