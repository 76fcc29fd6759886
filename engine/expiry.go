package engine

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/porchlight/porchlight/core"
)

// Codes of expired orders (errorCode), and of orders failed by the engine itself.
const (
	CodePendingTimeout = "pending_timeout" // not started within PendingTTL of submission
	CodeInputDeleted   = "input_deleted"   // an input or the mask was deleted before the order started
	CodeInterrupted    = "interrupted"     // the process stopped while it ran, MaxAttempts times
)

// expiryReason says why a pending order must expire now, or "" when it need not.
func (e *Engine) expiryReason(r *core.Order) (reason, code string) {
	if age := e.now().Sub(r.CreatedAt); age >= e.cfg.PendingTTL {
		return fmt.Sprintf("not started within %s of submission", e.cfg.PendingTTL), CodePendingTimeout
	}
	return "", ""
}

// expire moves a pending order to expired; an order no longer pending is left alone.
func (e *Engine) expire(ctx context.Context, id, code, reason string) error {
	err := e.commit(ctx, func(tx core.OrdersTx, ob *outbox) error {
		r, err := tx.Get(id)
		if err != nil || r == nil || r.Status != core.OrderPending {
			return err
		}
		r.Error, r.ErrorCode = reason, code
		r.Stage = StageExpired
		if err := move(tx, r, core.OrderExpired, e.now()); err != nil {
			return err
		}
		ob.order(r)
		return nil
	})
	e.clearWaiting(id)
	return err
}

// sweeper expires overdue pending orders and forgets old idempotency keys, at start
// and every SweepInterval.
func (e *Engine) sweeper(ctx context.Context) error {
	t := time.NewTicker(e.cfg.SweepInterval)
	defer t.Stop()
	for {
		if err := e.sweep(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("expiry sweep", "err", err)
		}
		if e.sweepHook != nil {
			e.sweepHook()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sweep expires every pending order that is overdue or lost an input. The dispatcher
// checks the head of the queue itself; this reaches the orders behind it.
func (e *Engine) sweep(ctx context.Context) error {
	pending, err := e.orders.Pending(ctx)
	if err != nil {
		return err
	}
	for _, r := range pending {
		if reason, code := e.expiryReason(&r); reason != "" {
			if err := e.expire(ctx, r.ID, code, reason); err != nil {
				return err
			}
			continue
		}
		_, missing, err := e.inputSizes(&r)
		if err != nil {
			return err
		}
		if missing != "" {
			if err := e.expire(ctx, r.ID, CodeInputDeleted, missing); err != nil {
				return err
			}
		}
	}
	e.signal()
	e.saveTimings(ctx)
	return e.purgeIdempotency(ctx)
}

// AssetDeleted expires the pending orders that use a deleted asset as an input or
// mask. Wire it to the asset store's OnDelete; the dispatcher and the sweeper catch
// deletions without it, only later.
func (e *Engine) AssetDeleted(a core.Asset) {
	ctx := context.Background()
	pending, err := e.orders.Pending(ctx)
	if err != nil {
		e.log.Error("find orders of a deleted asset", "asset", a.ID, "err", err)
		return
	}
	var hit []string
	for _, r := range pending {
		if r.Owner == a.Owner && (slices.Contains(r.Inputs, a.ID) || r.Resolved.Mask == a.ID) {
			hit = append(hit, r.ID)
		}
	}
	for _, id := range hit {
		if err := e.expire(ctx, id, CodeInputDeleted, fmt.Sprintf("asset %s was deleted before the order started", a.ID)); err != nil {
			e.log.Error("expire order of a deleted asset", "order", id, "err", err)
		}
	}
}
