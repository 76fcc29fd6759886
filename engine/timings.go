package engine

import "context"

// The pipeline's cost model is kept by the order store, so progress weights and ETAs
// are right from the first order after a restart.

func (e *Engine) loadTimings(ctx context.Context) {
	m, err := e.orders.StepTimings(ctx)
	if err != nil {
		e.log.Warn("ignoring saved step timings", "err", err)
		return
	}
	e.pipe.Timings().Load(m)
}

func (e *Engine) saveTimings(ctx context.Context) {
	snap := e.pipe.Timings().Snapshot()
	if len(snap) == 0 {
		return
	}
	if err := e.orders.SaveStepTimings(ctx, snap); err != nil && ctx.Err() == nil {
		e.log.Warn("save step timings", "err", err)
	}
}
