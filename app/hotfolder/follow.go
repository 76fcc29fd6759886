package hotfolder

import (
	"context"
	"sync"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// follower wakes scenes that wait on something outside the hot folder: their
// assets' ingest, and their order reaching a terminal state. Orders are followed
// through the event bus and, because a subscriber that falls behind is dropped and
// an order may settle before it is tracked, also by polling.
type follower struct {
	svc *Service

	mu       sync.Mutex
	orders   map[string]waiter // order id -> scene
	fresh    map[string]bool   // orders tracked since the last poll, checked at once
	assets   map[item]waiter   // scene -> asset ids being ingested
	slots    int               // uploads allowed to wait for ingest at once
	used     map[item]bool     // scenes holding an upload slot
	deferred []item            // scenes waiting for a slot
	poll     time.Duration     // order poll period
	assetP   time.Duration     // ingest poll period
}

// waiter is a scene waiting on its owner's order or assets.
type waiter struct {
	it    item
	owner string
	ids   []string
}

func newFollower(svc *Service) *follower {
	return &follower{
		svc: svc, orders: map[string]waiter{}, fresh: map[string]bool{}, assets: map[item]waiter{},
		used: map[item]bool{}, slots: 8, poll: time.Second, assetP: 100 * time.Millisecond,
	}
}

// trackOrder wakes it when order id settles.
func (f *follower) trackOrder(id, owner string, it item) {
	f.mu.Lock()
	f.orders[id] = waiter{it: it, owner: owner}
	f.fresh[id] = true
	f.mu.Unlock()
}

// waitAssets wakes it when none of ids is still being ingested.
func (f *follower) waitAssets(it item, owner string, ids []string) {
	f.mu.Lock()
	f.assets[it] = waiter{it: it, owner: owner, ids: ids}
	f.mu.Unlock()
}

// acquireUpload takes an upload slot for it, or remembers it to be woken when a
// slot frees. Bounding the scenes uploaded ahead of ingest keeps a drop of a
// thousand files from sitting in the asset store all at once.
func (f *follower) acquireUpload(it item) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.used[it] {
		return true
	}
	if len(f.used) >= f.slots {
		for _, d := range f.deferred {
			if d == it {
				return false
			}
		}
		f.deferred = append(f.deferred, it)
		return false
	}
	f.used[it] = true
	return true
}

// releaseUpload frees it's slot and wakes the next waiting scene.
func (f *follower) releaseUpload(it item) {
	f.mu.Lock()
	if !f.used[it] {
		f.mu.Unlock()
		return
	}
	delete(f.used, it)
	var next *item
	if len(f.deferred) > 0 {
		n := f.deferred[0]
		f.deferred = f.deferred[1:]
		next = &n
	}
	f.mu.Unlock()
	if next != nil {
		f.svc.queue.push(*next)
	}
}

func (f *follower) run(ctx context.Context) {
	bus := f.svc.deps.Engine.Events()
	filter := events.Filter{Owner: f.svc.owner, Types: []string{core.EventOrder}}
	sub, _ := bus.Subscribe(filter, 0)
	defer func() { sub.Close() }()
	fast := time.NewTicker(f.assetP)
	defer fast.Stop()
	slow := time.NewTicker(f.poll)
	defer slow.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-sub.C():
			if !ok {
				// Dropped (or the bus closed): poll everything, then listen again.
				f.pollOrders(ctx, false)
				sub, _ = bus.Subscribe(filter, 0)
				continue
			}
			if s, isSummary := ev.Data.(core.OrderSummary); isSummary && s.Status.Terminal() {
				f.settled(s.OrderUUID)
			}
		case <-fast.C:
			f.pollAssets()
			f.pollOrders(ctx, true)
		case <-slow.C:
			f.pollOrders(ctx, false)
		}
	}
}

func (f *follower) settled(orderID string) {
	f.mu.Lock()
	w, ok := f.orders[orderID]
	delete(f.orders, orderID)
	delete(f.fresh, orderID)
	f.mu.Unlock()
	if ok {
		f.svc.queue.push(w.it)
	}
}

// pollOrders asks the engine about the tracked orders (only those tracked since the
// last poll when freshOnly).
func (f *follower) pollOrders(ctx context.Context, freshOnly bool) {
	f.mu.Lock()
	ids := map[string]string{} // order -> owner
	for id, w := range f.orders {
		if !freshOnly || f.fresh[id] {
			ids[id] = w.owner
		}
	}
	clear(f.fresh)
	f.mu.Unlock()
	for id, owner := range ids {
		s, err := f.svc.deps.Engine.Order(ctx, owner, id)
		if err != nil || s.Status.Terminal() {
			// An error (the order is gone) is for the scene's worker to report.
			f.settled(id)
		}
	}
}

func (f *follower) pollAssets() {
	f.mu.Lock()
	waiting := make([]waiter, 0, len(f.assets))
	for _, w := range f.assets {
		waiting = append(waiting, w)
	}
	f.mu.Unlock()
	for _, w := range waiting {
		if !f.ingested(w.owner, w.ids) {
			continue
		}
		it := w.it
		f.mu.Lock()
		delete(f.assets, it)
		f.mu.Unlock()
		f.svc.queue.push(it)
	}
}

// ingested reports whether every asset is ready or failed (or gone).
func (f *follower) ingested(owner string, ids []string) bool {
	for _, id := range ids {
		a, err := f.svc.deps.Assets.Get(owner, id)
		if err != nil {
			continue
		}
		if a.Status != core.AssetReady && a.Status != core.AssetFailed {
			return false
		}
	}
	return true
}
