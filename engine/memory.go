package engine

import (
	"context"
	"fmt"
	"image"
	"runtime/debug"
	"runtime/metrics"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// CodeResolutionTooLarge fails an order whose memory estimate exceeds the whole
// budget: it could never start, and running it past the budget is what the budget
// exists to prevent.
const CodeResolutionTooLarge = core.CodeResolutionTooLarge

// NewMemoryBudget returns the budget orders and exports share: bytes, or when bytes
// is 0 a share (fraction, default DefaultMemoryFraction) of the memory available now.
func NewMemoryBudget(bytes int64, fraction float64) *membudget.Budget {
	if bytes <= 0 {
		bytes = membudget.Share(fraction)
	}
	return membudget.New(bytes)
}

// headState is the oldest pending order as the dispatcher last saw it: its memory
// estimate (reading JPEG headers is not free, and the head is looked at on every
// wake-up) and its claim in the budget's queue, which keeps its place there while
// it waits, so exports asked for later do not overtake it.
type headState struct {
	id    string
	est   int64
	claim *membudget.Claim
}

// estimate returns the memory estimate of order r, computed once per head.
func (e *Engine) estimate(r *core.Order) (int64, error) {
	if e.head.id == r.ID && e.head.est > 0 {
		return e.head.est, nil
	}
	e.dropClaim()
	ins, err := e.estimateInputs(r.Owner, r.Inputs)
	if err != nil {
		return 0, fmt.Errorf("estimate the memory of order %s: %w", r.ID, err)
	}
	e.head = headState{id: r.ID, est: e.pipe.EstimateInputs(r.Resolved, ins, e.maskArea(r.Resolved))}
	return e.head.est, nil
}

// MemoryEstimate returns the bytes an order of owner's inputs with opts would be
// charged against the budget, computed as admission does.
func (e *Engine) MemoryEstimate(ctx context.Context, owner string, inputs []string, opts core.Options) (int64, error) {
	ids, res, err := e.validateScene(owner, inputs, opts, false)
	if err != nil {
		return 0, err
	}
	ins, err := e.estimateInputs(owner, ids)
	if err != nil {
		return 0, err
	}
	return e.pipe.EstimateInputs(res, ins, e.maskArea(res)), nil
}

// maskArea reads the order's magic eraser mask, whose marked area sets the eraser's
// memory. Without a mask, or with one that cannot be read now (the order will fail
// on it with a clear error when it runs), the mask is estimated as marking all of
// the photo.
func (e *Engine) maskArea(r core.Resolved) pipeline.MaskArea {
	if r.Mask == "" {
		return pipeline.MaskArea{}
	}
	m, err := pipeline.MaskAreaOf(e.pipelineAssets(), r.Mask)
	if err != nil {
		return pipeline.MaskArea{}
	}
	return m
}

// estimateInputs describes inputs for the estimate: sizes from their records, and
// for a JPEG what its headers say about how it decodes. An unreadable header leaves
// the input estimated as the costliest kind.
func (e *Engine) estimateInputs(owner string, ids []string) ([]pipeline.Input, error) {
	ins := make([]pipeline.Input, len(ids))
	for i, id := range ids {
		a, err := e.assets.Get(owner, id)
		if err != nil {
			return nil, fmt.Errorf("look up inputs[%d]: %w", i, err)
		}
		var info *codec.Info
		if a.Format == codec.FormatJPEG {
			if f, _, err := e.assets.Open(id); err == nil {
				if in, err := codec.Probe(f, a.Size); err == nil {
					info = &in
				}
				f.Close()
			}
		}
		ins[i] = pipeline.InputOf(a.Width, a.Height, a.Size, a.Format, info)
	}
	return ins, nil
}

// admit charges the head order's estimate to the budget, queueing a claim that
// keeps its place until the bytes are free. It reports whether they are granted;
// the dispatcher is woken when a queued claim is (see headReady).
func (e *Engine) admit(id string, est int64) bool {
	if e.head.claim == nil {
		c, err := e.mem.Reserve(est)
		if err != nil {
			return false // bigger than the budget; next refuses such orders first
		}
		e.head.claim = c
	}
	select {
	case <-e.head.claim.Ready():
	default:
		return false
	}
	e.head = headState{} // the bytes are the order's now; release returns them
	e.mu.Lock()
	e.inflight++
	e.mu.Unlock()
	return true
}

// headReady is closed when the head's queued claim is granted; nil without one.
func (e *Engine) headReady() <-chan struct{} {
	if e.head.claim == nil {
		return nil
	}
	return e.head.claim.Ready()
}

// dropClaim withdraws the head's claim (giving back bytes granted meanwhile), when
// the head changed or the dispatcher stops.
func (e *Engine) dropClaim() {
	if e.head.claim != nil {
		e.head.claim.Cancel()
	}
	e.head = headState{}
}

// unadmit returns an admitted order's bytes when it could not be claimed after all.
func (e *Engine) unadmit(est int64) {
	e.mu.Lock()
	e.inflight--
	e.mu.Unlock()
	e.mem.Release(est)
	e.signal()
}

// tooLargeReason explains an order that can never fit the budget.
func (e *Engine) tooLargeReason(est int64, sizes []image.Point) string {
	var big image.Point
	for _, p := range sizes {
		if p.X*p.Y > big.X*big.Y {
			big = p
		}
	}
	inputs := "its input"
	if len(sizes) > 1 {
		inputs = fmt.Sprintf("its %d inputs", len(sizes))
	}
	return fmt.Sprintf("the order needs about %s of memory for %s of %dx%d pixels, more than the whole memory budget of %s; "+
		"raise engine.memory_mb in the configuration (0 takes %.0f%% of the memory available at start) or send smaller images",
		membudget.MB(est), inputs, big.X, big.Y, membudget.MB(e.mem.Size()), e.cfg.MemoryFraction*100)
}

// limitHeap makes the collector keep the heap within the budget and returns the
// function that restores the previous settings. The estimates bound live data and
// allow membudget.Headroom for garbage, so the collector runs at that growth of the
// live heap (GOGC 25; the images are pointer-free, so collections are cheap), and the
// soft memory limit is the budget plus what the process holds now (the window,
// caches), as a backstop. Lower settings already made (GOGC, GOMEMLIMIT) are kept.
func limitHeap(budget int64) (restore func()) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	base := int64(s[0].Value.Uint64() - s[1].Value.Uint64())
	limit := budget + base + baseSlack
	prevLimit := debug.SetMemoryLimit(-1)
	if limit < prevLimit {
		debug.SetMemoryLimit(limit)
	}
	prevGC := debug.SetGCPercent(gcPercent)
	if prevGC >= 0 && prevGC < gcPercent {
		debug.SetGCPercent(prevGC)
	}
	return func() {
		debug.SetGCPercent(prevGC)
		debug.SetMemoryLimit(prevLimit)
	}
}

// gcPercent is the heap growth over live data that starts a collection, matching
// membudget.Headroom.
const gcPercent = int((membudget.Headroom - 1) * 100)

// baseSlack lets what the process holds outside the budget grow a little after
// Serve starts (thumbnails shown in the window, API buffers) before it makes the
// collector work harder.
const baseSlack = 64 << 20
