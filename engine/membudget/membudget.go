// Package membudget is the one memory budget that orders and exports are charged
// against. The engine creates it and the asset service receives it through its
// config, so both packages share it without importing each other.
//
// A Budget is a weighted semaphore over bytes, granted first in, first out: a big
// claim at the front is not starved by small ones behind it. A claim bigger than the
// whole budget is refused at once with a *TooLargeError instead of waiting forever.
package membudget

import (
	"bufio"
	"container/list"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

// ErrTooLarge matches every *TooLargeError under errors.Is.
var ErrTooLarge = errors.New("membudget: claim exceeds the whole budget")

// TooLargeError is a claim that could never be granted: it asks for more than the
// whole budget.
type TooLargeError struct {
	Need, Size int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("needs about %s of memory but the whole budget is %s", MB(e.Need), MB(e.Size))
}

// Is makes errors.Is(err, ErrTooLarge) match.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// MB formats bytes as whole megabytes (rounded up, so a bound never reads smaller).
func MB(n int64) string { return fmt.Sprintf("%d MB", (n+(1<<20)-1)>>20) }

// Budget is a memory budget in bytes. Its methods are safe for concurrent use.
type Budget struct {
	mu      sync.Mutex
	size    int64
	used    int64
	waiters list.List     // *Claim, oldest first
	changed chan struct{} // closed and replaced at every change, for observers
}

// New returns a budget of size bytes (at least 1).
func New(size int64) *Budget {
	return &Budget{size: max(size, 1), changed: make(chan struct{})}
}

// Size is the whole budget in bytes.
func (b *Budget) Size() int64 { return b.size }

// Stats is a consistent snapshot of a budget.
type Stats struct {
	Size    int64
	Used    int64 // bytes granted and not released
	Waiting int   // claims queued for bytes
	// Changed is closed at the next change of Used or Waiting, so an observer can
	// wait for a state without polling.
	Changed <-chan struct{}
}

// Stats returns the current state.
func (b *Budget) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return Stats{Size: b.size, Used: b.used, Waiting: b.waiters.Len(), Changed: b.changed}
}

// Await blocks until ok holds for the budget's state, woken by its changes, and
// returns that state. When ctx ends first it returns the last state seen and ctx's
// error.
func (b *Budget) Await(ctx context.Context, ok func(Stats) bool) (Stats, error) {
	for {
		s := b.Stats()
		if ok(s) {
			return s, nil
		}
		select {
		case <-s.Changed:
		case <-ctx.Done():
			return s, ctx.Err()
		}
	}
}

// Claim is a queued request for bytes. It keeps its place in the queue until it is
// granted (Ready is closed; the bytes are then the claimant's until Release) or
// withdrawn with Cancel.
type Claim struct {
	b     *Budget
	n     int64
	ready chan struct{}
	elem  *list.Element // in the queue while waiting
	state claimState
}

type claimState int

const (
	waiting claimState = iota
	granted
	withdrawn
)

// Bytes is the size of the claim.
func (c *Claim) Bytes() int64 { return c.n }

// Ready is closed once the bytes are granted.
func (c *Claim) Ready() <-chan struct{} { return c.ready }

// Cancel withdraws the claim. A claim already granted gives its bytes back, so a
// claimant that stops caring never leaks them; after Cancel the claimant holds
// nothing. Cancel is idempotent.
func (c *Claim) Cancel() {
	b := c.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch c.state {
	case waiting:
		b.waiters.Remove(c.elem)
		c.elem = nil
		// Leaving the front may let the claims behind it through.
		b.grantLocked()
	case granted:
		b.releaseLocked(c.n)
	}
	c.state = withdrawn
	b.changedLocked()
}

// Reserve queues a claim for n bytes behind the earlier ones and returns at once;
// the claim may be granted already. It fails with a *TooLargeError when n exceeds
// the whole budget.
func (b *Budget) Reserve(n int64) (*Claim, error) {
	if n > b.size {
		return nil, &TooLargeError{Need: n, Size: b.size}
	}
	c := &Claim{b: b, n: max(n, 0), ready: make(chan struct{})}
	b.mu.Lock()
	defer b.mu.Unlock()
	c.elem = b.waiters.PushBack(c)
	b.grantLocked()
	b.changedLocked()
	return c, nil
}

// Acquire takes n bytes, waiting behind earlier claims until they fit. It fails
// with a *TooLargeError when n exceeds the whole budget, and with ctx's error when
// ctx ends first (then nothing is held).
func (b *Budget) Acquire(ctx context.Context, n int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c, err := b.Reserve(n)
	if err != nil {
		return err
	}
	select {
	case <-c.ready:
		return nil
	case <-ctx.Done():
		c.Cancel() // gives the bytes back if they were granted meanwhile
		return ctx.Err()
	}
}

// TryAcquire takes n bytes when they fit now and nobody waits before; it never
// blocks.
func (b *Budget) TryAcquire(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.size || b.waiters.Len() > 0 || b.used+max(n, 0) > b.size {
		return false
	}
	b.used += max(n, 0)
	b.changedLocked()
	return true
}

// Release gives back n bytes taken by Acquire, TryAcquire or a granted claim.
func (b *Budget) Release(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.releaseLocked(max(n, 0))
	b.changedLocked()
}

func (b *Budget) releaseLocked(n int64) {
	b.used -= n
	if b.used < 0 {
		panic("membudget: released more than was taken")
	}
	b.grantLocked()
}

// grantLocked grants the queued claims, oldest first, while the oldest fits.
func (b *Budget) grantLocked() {
	for {
		f := b.waiters.Front()
		if f == nil {
			return
		}
		c := f.Value.(*Claim)
		if b.used+c.n > b.size {
			return
		}
		b.used += c.n
		b.waiters.Remove(f)
		c.elem = nil
		c.state = granted
		close(c.ready)
	}
}

func (b *Budget) changedLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// Headroom scales a bound of live data to the heap it takes between two
// collections; the runtime's soft memory limit (see the engine's LimitHeap) keeps
// garbage from pushing the heap past the budget when the budget is full.
const Headroom = 1.25

// Fixed covers what a job holds that does not scale with its pixels: tables, row
// buffers, goroutines.
const Fixed = 16 << 20

// Bound turns the most a job holds live at once into what it is charged.
func Bound(live int64) int64 { return int64(float64(live)*Headroom) + Fixed }

// Live is the live data a charge of Bound(live) allows.
func Live(bound int64) int64 { return int64(float64(max(bound-Fixed, 0)) / Headroom) }

// Hold takes n bytes like Acquire and returns the function that gives them back
// (safe to call more than once).
func (b *Budget) Hold(ctx context.Context, n int64) (release func(), err error) {
	if err := b.Acquire(ctx, n); err != nil {
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.Release(n) }) }, nil
}

// DefaultFraction is the share of available memory a budget of 0 bytes takes.
const DefaultFraction = 0.6

// fallbackSize is used when /proc/meminfo cannot be read (not Linux).
const fallbackSize = 2 << 30

// Share returns fraction (0 or out of range: DefaultFraction) of the memory the
// kernel reports available now.
func Share(fraction float64) int64 {
	if fraction <= 0 || fraction > 1 {
		fraction = DefaultFraction
	}
	avail, ok := memAvailable("/proc/meminfo")
	if !ok {
		return fallbackSize
	}
	return int64(float64(avail) * fraction)
}

// memAvailable reads MemAvailable (bytes) from a meminfo file.
func memAvailable(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || n <= 0 {
			return 0, false
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}
