package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// at returns a clock 15.25 s into a minute, so window edges are not trivially aligned.
func at() *clock { return &clock{t: time.Date(2025, 5, 1, 10, 30, 15, 250e6, time.UTC)} }

func TestWindowCountsAndRollsOver(t *testing.T) {
	c := at()
	w := NewWindow(60, time.Minute, c.Now)
	wantReset := time.Date(2025, 5, 1, 10, 31, 0, 0, time.UTC)
	for i := 1; i <= 60; i++ {
		d := w.Take("k")
		if !d.Allowed || d.Remaining != 60-i || d.Limit != 60 || !d.Reset.Equal(wantReset) {
			t.Fatalf("take %d: %+v", i, d)
		}
	}
	d := w.Take("k")
	if d.Allowed || d.Remaining != 0 {
		t.Fatalf("61st take allowed: %+v", d)
	}
	if d.RetryIn != 44750*time.Millisecond || d.RetryAfterSeconds() != 45 || d.ResetUnix() != wantReset.Unix() {
		t.Fatalf("61st take: retry %v (%ds), reset %d", d.RetryIn, d.RetryAfterSeconds(), d.ResetUnix())
	}
	// Another key has its own budget.
	if d := w.Take("other"); !d.Allowed || d.Remaining != 59 {
		t.Fatalf("other key: %+v", d)
	}
	// One nanosecond before the window ends: still refused.
	c.Add(d.RetryIn - time.Nanosecond)
	if d := w.Take("k"); d.Allowed || d.RetryAfterSeconds() != 1 {
		t.Fatalf("just before rollover: %+v", d)
	}
	// At the window start: a fresh budget.
	c.Add(time.Nanosecond)
	d = w.Take("k")
	if !d.Allowed || d.Remaining != 59 || !d.Reset.Equal(wantReset.Add(time.Minute)) {
		t.Fatalf("after rollover: %+v", d)
	}
}

func TestBucketBurstAndExactRefill(t *testing.T) {
	c := at()
	b := NewBucket(200, 10, c.Now)
	for i := 1; i <= 200; i++ {
		d := b.Take("k")
		if !d.Allowed || d.Remaining != 200-i || d.Limit != 200 {
			t.Fatalf("take %d: %+v", i, d)
		}
		if want := c.Now().Add(time.Duration(i) * 100 * time.Millisecond); !d.Reset.Equal(want) {
			t.Fatalf("take %d: full again at %v, want %v", i, d.Reset, want)
		}
	}
	d := b.Take("k")
	if d.Allowed || d.Remaining != 0 || d.RetryIn != 100*time.Millisecond || d.RetryAfterSeconds() != 1 {
		t.Fatalf("201st take: %+v", d)
	}
	c.Add(99 * time.Millisecond)
	if d := b.Take("k"); d.Allowed || d.RetryIn != time.Millisecond {
		t.Fatalf("99 ms later: %+v", d)
	}
	c.Add(time.Millisecond)
	if d := b.Take("k"); !d.Allowed || d.Remaining != 0 {
		t.Fatalf("one token after 100 ms: %+v", d)
	}
	// 1 s refills exactly ten tokens.
	c.Add(time.Second)
	for i := 1; i <= 10; i++ {
		if d := b.Take("k"); !d.Allowed || d.Remaining != 10-i {
			t.Fatalf("refill take %d: %+v", i, d)
		}
	}
	if d := b.Take("k"); d.Allowed {
		t.Fatalf("11th token after 1 s: %+v", d)
	}
	// 20 s fill the bucket completely and no further.
	c.Add(25 * time.Second)
	if d := b.Take("k"); !d.Allowed || d.Remaining != 199 {
		t.Fatalf("after a long pause: %+v", d)
	}
	if d := b.Take("fresh"); !d.Allowed || d.Remaining != 199 {
		t.Fatalf("independent key: %+v", d)
	}
}

func TestRetryAfterAtLeastOne(t *testing.T) {
	if s := (Decision{RetryIn: 0}).RetryAfterSeconds(); s != 1 {
		t.Fatalf("zero wait answered %d", s)
	}
	if s := (Decision{RetryIn: 1001 * time.Millisecond}).RetryAfterSeconds(); s != 2 {
		t.Fatalf("1.001 s answered %d", s)
	}
	if u := (Decision{Reset: time.Unix(100, 1)}).ResetUnix(); u != 101 {
		t.Fatalf("reset rounds up: %d", u)
	}
}

func TestIdleKeysAreEvicted(t *testing.T) {
	c := at()
	w := NewWindow(300, time.Minute, c.Now)
	b := NewBucket(200, 10, c.Now)
	for i := range 1000 {
		k := fmt.Sprint("key", i)
		w.Take(k)
		b.Take(k)
	}
	if w.Len() != 1000 || b.Len() != 1000 {
		t.Fatalf("remembered %d / %d keys", w.Len(), b.Len())
	}
	c.Add(2 * time.Minute)
	w.Take("active")
	b.Take("active")
	if w.Len() != 1 || b.Len() != 1 {
		t.Fatalf("after two idle minutes: %d / %d keys remembered, want 1", w.Len(), b.Len())
	}
}

func TestConcurrentTakesNeverOverspend(t *testing.T) {
	c := at()
	w := NewWindow(300, time.Minute, c.Now)
	b := NewBucket(200, 10, c.Now)
	var mu sync.Mutex
	okW, okB := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				dw, db := w.Take("k"), b.Take("k")
				mu.Lock()
				if dw.Allowed {
					okW++
				}
				if db.Allowed {
					okB++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if okW != 300 || okB != 200 {
		t.Fatalf("allowed %d window / %d bucket takes, want 300 / 200", okW, okB)
	}
}

func BenchmarkWindowTake(b *testing.B) {
	w := NewWindow(1<<30, time.Minute, nil)
	b.ReportAllocs()
	for b.Loop() {
		w.Take("key")
	}
}

func BenchmarkBucketTake(b *testing.B) {
	bk := NewBucket(1<<30, 1e6, nil)
	b.ReportAllocs()
	for b.Loop() {
		bk.Take("key")
	}
}
