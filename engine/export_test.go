package engine

// SetSweepHook makes f run after each expiry sweep. Call it before Serve.
func (e *Engine) SetSweepHook(f func()) { e.sweepHook = f }
