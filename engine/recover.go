package engine

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/core"
)

// recoverInterrupted puts the orders that were running when the process stopped back
// into the queue at their old place, in one transaction. An order that has already
// started MaxAttempts times fails instead: something about it keeps taking the
// process down.
func (e *Engine) recoverInterrupted(ctx context.Context) error {
	var ob outbox
	now := e.now()
	err := e.orders.RecoverRunning(ctx, func(tx core.OrdersTx, r *core.Order) error {
		r.ETASeconds = nil
		if r.Attempts >= e.cfg.MaxAttempts {
			r.Error = fmt.Sprintf("processing was interrupted %d times (the service stopped while this order ran); giving up", r.Attempts)
			r.ErrorCode = CodeInterrupted
			r.Stage = StageFailed
			if err := move(tx, r, core.OrderFailed, now); err != nil {
				return err
			}
		} else {
			r.Progress = 0
			r.Stage = StageQueued
			if err := move(tx, r, core.OrderPending, now); err != nil {
				return err
			}
		}
		ob.order(r)
		return nil
	})
	if err != nil {
		return err
	}
	e.publish(&ob)
	return nil
}
