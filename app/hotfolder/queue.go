package hotfolder

import (
	"context"
	"sync"
	"time"
)

// item names one scene of one folder.
type item struct {
	f  *folder
	id string
}

// workQueue hands scenes to the workers, each scene to one worker at a time: a scene
// pushed while a worker holds it runs again once that worker is done.
type workQueue struct {
	mu      sync.Mutex
	order   []item
	queued  map[item]bool
	running map[item]bool
	again   map[item]bool
	signal  chan struct{}
}

func newWorkQueue() *workQueue {
	return &workQueue{queued: map[item]bool{}, running: map[item]bool{}, again: map[item]bool{}, signal: make(chan struct{}, 1)}
}

func (q *workQueue) push(it item) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.running[it]:
		q.again[it] = true
	case !q.queued[it]:
		q.queued[it] = true
		q.order = append(q.order, it)
		select {
		case q.signal <- struct{}{}:
		default:
		}
	}
}

// pushAfter pushes it once d has passed (a retry after a transient failure).
func (q *workQueue) pushAfter(ctx context.Context, it item, d time.Duration) {
	t := time.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C:
			q.push(it)
		case <-ctx.Done():
		}
	}()
}

// pop waits for a scene; false when ctx ended.
func (q *workQueue) pop(ctx context.Context) (item, bool) {
	for {
		q.mu.Lock()
		if len(q.order) > 0 {
			it := q.order[0]
			q.order[0] = item{}
			q.order = q.order[1:]
			delete(q.queued, it)
			q.running[it] = true
			more := len(q.order) > 0
			q.mu.Unlock()
			if more { // wake the next worker too
				select {
				case q.signal <- struct{}{}:
				default:
				}
			}
			return it, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-ctx.Done():
			return item{}, false
		}
	}
}

// done releases a scene a worker held, queueing it again if it was pushed meanwhile.
func (q *workQueue) done(it item) {
	q.mu.Lock()
	delete(q.running, it)
	again := q.again[it]
	delete(q.again, it)
	q.mu.Unlock()
	if again {
		q.push(it)
	}
}

// len is the number of scenes waiting.
func (q *workQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// has reports whether any scene of f is queued or held by a worker.
func (q *workQueue) has(f *folder) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for it := range q.queued {
		if it.f == f {
			return true
		}
	}
	for it := range q.running {
		if it.f == f {
			return true
		}
	}
	return false
}
