// Package ratelimit holds the two request budgets of the API: a fixed window
// (N requests per aligned period) and a token bucket (a burst refilled at a
// steady rate). Both count per key, read time from an injectable clock, use
// integer arithmetic so tests can step the clock exactly, and forget keys whose
// state has returned to "fresh" so memory stays bounded by the active keys.
package ratelimit

import (
	"sync"
	"time"
)

// Decision is the outcome of one request against a budget.
type Decision struct {
	Allowed   bool
	Limit     int           // window limit or bucket capacity
	Remaining int           // requests or whole tokens left after this one
	Reset     time.Time     // when the window ends, or when the bucket would be full again
	RetryIn   time.Duration // when refused: the wait until a request would pass
}

// ResetUnix is Reset in whole Unix seconds, rounded up so a client waiting until
// then never arrives early.
func (d Decision) ResetUnix() int64 { return ceilUnix(d.Reset) }

// RetryAfterSeconds is RetryIn in whole seconds, at least 1.
func (d Decision) RetryAfterSeconds() int64 {
	s := int64((d.RetryIn + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// Limiter is a per-key budget.
type Limiter interface {
	Take(key string) Decision
}

// sweepEvery bounds how often a limiter walks its map to drop idle keys.
const sweepEvery = time.Minute

// Window allows Limit requests per key in each period aligned to the Unix epoch
// (a 60-second window starts at every whole minute).
type Window struct {
	limit  int
	period time.Duration
	now    func() time.Time

	mu        sync.Mutex
	counts    map[string]windowCount
	lastSweep time.Time
}

type windowCount struct {
	start int64 // window start, Unix nanoseconds
	n     int
}

// NewWindow returns a fixed-window limiter; now nil means time.Now.
func NewWindow(limit int, period time.Duration, now func() time.Time) *Window {
	if now == nil {
		now = time.Now
	}
	return &Window{limit: limit, period: period, now: now, counts: map[string]windowCount{}}
}

// Take counts one request of key.
func (w *Window) Take(key string) Decision {
	now := w.now()
	start := now.UnixNano() - mod(now.UnixNano(), int64(w.period))
	reset := time.Unix(0, start+int64(w.period))

	w.mu.Lock()
	defer w.mu.Unlock()
	w.sweep(now, start)
	c := w.counts[key]
	if c.start != start {
		c = windowCount{start: start}
	}
	d := Decision{Limit: w.limit, Reset: reset}
	if c.n >= w.limit {
		d.RetryIn = reset.Sub(now)
		return d
	}
	c.n++
	w.counts[key] = c
	d.Allowed = true
	d.Remaining = w.limit - c.n
	return d
}

// sweep drops the counts of past windows; they mean the same as no entry.
func (w *Window) sweep(now time.Time, start int64) {
	if now.Sub(w.lastSweep) < sweepEvery {
		return
	}
	w.lastSweep = now
	for k, c := range w.counts {
		if c.start != start {
			delete(w.counts, k)
		}
	}
}

// Len is the number of keys the limiter currently remembers.
func (w *Window) Len() int { w.mu.Lock(); defer w.mu.Unlock(); return len(w.counts) }

// Bucket is a token bucket per key: Capacity tokens, one more every 1/rate. It
// is kept as the time the bucket would be full again (GCRA), so a key costs one
// integer and a full bucket needs no entry at all.
type Bucket struct {
	capacity int
	interval int64 // nanoseconds per token
	now      func() time.Time

	mu        sync.Mutex
	fullAt    map[string]int64 // Unix nanoseconds
	lastSweep time.Time
}

// NewBucket returns a token bucket limiter refilling perSecond tokens a second;
// now nil means time.Now.
func NewBucket(capacity int, perSecond float64, now func() time.Time) *Bucket {
	if now == nil {
		now = time.Now
	}
	interval := int64(float64(time.Second) / perSecond)
	if interval < 1 {
		interval = 1
	}
	return &Bucket{capacity: capacity, interval: interval, now: now, fullAt: map[string]int64{}}
}

// Take spends one token of key.
func (b *Bucket) Take(key string) Decision {
	now := b.now().UnixNano()
	span := int64(b.capacity) * b.interval // time to refill an empty bucket

	b.mu.Lock()
	defer b.mu.Unlock()
	b.sweep(now)
	full := max(b.fullAt[key], now)
	d := Decision{Limit: b.capacity}
	if next := full + b.interval; next-now > span {
		// Not a whole token left: the next one arrives when the debt fits again.
		d.RetryIn = time.Duration(next - span - now)
		d.Remaining = 0
		d.Reset = time.Unix(0, full)
		return d
	}
	full += b.interval
	b.fullAt[key] = full
	d.Allowed = true
	d.Remaining = int((span - (full - now)) / b.interval)
	d.Reset = time.Unix(0, full)
	return d
}

// sweep drops keys whose bucket has refilled completely.
func (b *Bucket) sweep(now int64) {
	t := time.Unix(0, now)
	if t.Sub(b.lastSweep) < sweepEvery {
		return
	}
	b.lastSweep = t
	for k, full := range b.fullAt {
		if full <= now {
			delete(b.fullAt, k)
		}
	}
}

// Len is the number of keys the limiter currently remembers.
func (b *Bucket) Len() int { b.mu.Lock(); defer b.mu.Unlock(); return len(b.fullAt) }

// mod is the non-negative remainder, so times before 1970 still align.
func mod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
