// Package events is Porchlight's in-process event bus. The engine publishes order and
// batch events after each committed change; SSE streams, WebSocket connections and the
// desktop window subscribe. Publishing never blocks: a subscriber that falls behind is
// dropped (its channel closed, with a reason) instead of slowing the engine down.
//
// Every event gets an id from one strictly increasing counter. Ids start at the process
// start time in microseconds, so an id remembered from a previous run is older than
// anything this run holds and a reconnect with it is reported as an incomplete replay.
package events

import (
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/porchlight/porchlight/core"
)

// Reasons a subscription's channel was closed, reported by Subscription.Err.
var (
	ErrSlowSubscriber = errors.New("events: subscriber fell behind and was dropped")
	ErrBusClosed      = errors.New("events: bus closed")
)

// Config tunes a bus; zero values take the defaults.
type Config struct {
	History          int           // events kept for replay (default 4096)
	Buffer           int           // events a subscriber may have unread before it is dropped (default 256)
	ProgressInterval time.Duration // least gap between two coalesced events of one key (default 250ms)
}

func (c Config) withDefaults() Config {
	if c.History <= 0 {
		c.History = 4096
	}
	if c.Buffer <= 0 {
		c.Buffer = 256
	}
	if c.ProgressInterval <= 0 {
		c.ProgressInterval = 250 * time.Millisecond
	}
	return c
}

// Filter selects events. Empty fields match everything.
type Filter struct {
	Owner   string   // the key uuid whose events are wanted
	OrderID string   // one order
	BatchID string   // one batch: its batch events and its scenes' order events
	Types   []string // event types, e.g. core.EventOrder
}

// Match reports whether ev passes the filter.
func (f Filter) Match(ev core.Event) bool {
	if f.Owner != "" && ev.Owner != f.Owner {
		return false
	}
	if f.OrderID != "" && ev.OrderID != f.OrderID {
		return false
	}
	if f.BatchID != "" && ev.BatchID != f.BatchID {
		return false
	}
	if len(f.Types) > 0 && !slices.Contains(f.Types, ev.Type) {
		return false
	}
	return true
}

// Bus is the event bus. The zero value is not usable; call New.
type Bus struct {
	cfg Config

	mu      sync.Mutex
	lastID  uint64
	ring    []core.Event                          // circular, len == cfg.History once full
	head    int                                   // index of the oldest event when the ring is full
	subs    map[string]map[*Subscription]struct{} // by Filter.Owner ("" = any owner), so a publish visits only interested subscribers
	nsubs   int
	pending map[string]*coalesced // progress events waiting for their interval
	sentAt  map[string]time.Time  // when the last coalesced event of a key went out
	closed  bool
}

type coalesced struct {
	ev    core.Event
	timer *time.Timer
}

// New returns an empty bus.
func New(cfg Config) *Bus {
	cfg = cfg.withDefaults()
	return &Bus{
		cfg:     cfg,
		lastID:  uint64(time.Now().UnixMicro()),
		ring:    make([]core.Event, 0, min(cfg.History, 1024)),
		subs:    map[string]map[*Subscription]struct{}{},
		pending: map[string]*coalesced{},
		sentAt:  map[string]time.Time{},
	}
}

// Publish assigns ev the next id, keeps it for replay and hands it to every matching
// subscriber. It never blocks. An event of an order supersedes that order's coalesced
// progress event still waiting, so a stale progress never follows a newer state.
// It returns the id, or 0 when the bus is closed.
func (b *Bus) Publish(ev core.Event) uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ev.OrderID != "" {
		b.dropPendingLocked(ev.OrderID)
		delete(b.sentAt, ev.OrderID)
	}
	return b.publishLocked(ev)
}

// PublishCoalesced publishes frequent events (progress) at most once per
// ProgressInterval per key: an event arriving sooner waits, replaced by any later one
// of the same key, and goes out when the interval has passed. Keys are order ids.
func (b *Bus) PublishCoalesced(key string, ev core.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	if p, ok := b.pending[key]; ok {
		p.ev = ev
		return
	}
	now := time.Now()
	wait := b.cfg.ProgressInterval - now.Sub(b.sentAt[key])
	if wait <= 0 {
		b.sentAt[key] = now
		b.publishLocked(ev)
		b.pruneSentAtLocked(now)
		return
	}
	p := &coalesced{ev: ev}
	p.timer = time.AfterFunc(wait, func() { b.flush(key, p) })
	b.pending[key] = p
}

func (b *Bus) flush(key string, p *coalesced) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.pending[key] != p { // superseded or dropped meanwhile
		return
	}
	delete(b.pending, key)
	b.sentAt[key] = time.Now()
	b.publishLocked(p.ev)
}

func (b *Bus) dropPendingLocked(key string) {
	if p, ok := b.pending[key]; ok {
		p.timer.Stop()
		delete(b.pending, key)
	}
}

// pruneSentAtLocked forgets keys whose interval has passed, so orders that never got
// a final Publish do not accumulate.
func (b *Bus) pruneSentAtLocked(now time.Time) {
	if len(b.sentAt) < 4096 {
		return
	}
	for k, t := range b.sentAt {
		if now.Sub(t) >= b.cfg.ProgressInterval {
			delete(b.sentAt, k)
		}
	}
}

func (b *Bus) publishLocked(ev core.Event) uint64 {
	if b.closed {
		return 0
	}
	b.lastID++
	ev.ID = b.lastID
	if len(b.ring) < b.cfg.History {
		b.ring = append(b.ring, ev)
	} else {
		b.ring[b.head] = ev
		b.head = (b.head + 1) % len(b.ring)
	}
	b.deliverLocked(b.subs[""], ev)
	if ev.Owner != "" {
		b.deliverLocked(b.subs[ev.Owner], ev)
	}
	return ev.ID
}

func (b *Bus) deliverLocked(set map[*Subscription]struct{}, ev core.Event) {
	for s := range set {
		if !s.filter.Match(ev) {
			continue
		}
		select {
		case s.ch <- ev:
		default:
			b.dropLocked(s, ErrSlowSubscriber)
		}
	}
}

// LastID is the id of the newest event published so far.
func (b *Bus) LastID() uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastID
}

// Subscribe returns a subscription to the events matching f. With afterID 0 it starts
// with the next event. With the id of an event seen earlier (an SSE Last-Event-ID) it
// first replays the held events after that id; complete is false when events after
// afterID are no longer held (or afterID is unknown), and then nothing is replayed:
// the caller sends a fresh snapshot instead.
func (b *Bus) Subscribe(f Filter, afterID uint64) (sub *Subscription, complete bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var replay []core.Event
	complete = true
	if afterID != 0 && afterID != b.lastID {
		oldest := b.lastID + 1 // when nothing is held
		if len(b.ring) > 0 {
			oldest = b.ring[b.head].ID
		}
		if afterID > b.lastID || afterID+1 < oldest {
			complete = false
		} else {
			for i := range b.ring {
				ev := b.ring[(b.head+i)%len(b.ring)]
				if ev.ID > afterID && f.Match(ev) {
					replay = append(replay, ev)
				}
			}
		}
	}
	s := &Subscription{bus: b, filter: f, ch: make(chan core.Event, b.cfg.Buffer+len(replay))}
	for _, ev := range replay {
		s.ch <- ev
	}
	if b.closed {
		s.err = ErrBusClosed
		close(s.ch)
		return s, complete
	}
	set := b.subs[f.Owner]
	if set == nil {
		set = map[*Subscription]struct{}{}
		b.subs[f.Owner] = set
	}
	set[s] = struct{}{}
	b.nsubs++
	return s, complete
}

func (b *Bus) dropLocked(s *Subscription, reason error) {
	set := b.subs[s.filter.Owner]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(b.subs, s.filter.Owner)
	}
	b.nsubs--
	s.err = reason
	close(s.ch)
}

// Subscribers is the number of live subscriptions.
func (b *Bus) Subscribers() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.nsubs
}

// Close ends every subscription with ErrBusClosed and discards waiting progress
// events; later publishes are ignored.
func (b *Bus) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	for k := range b.pending {
		b.dropPendingLocked(k)
	}
	for _, set := range b.subs {
		for s := range set {
			b.dropLocked(s, ErrBusClosed)
		}
	}
	b.closed = true
}

// Subscription is one subscriber's view of the bus.
type Subscription struct {
	bus    *Bus
	filter Filter
	ch     chan core.Event
	err    error // guarded by bus.mu; set when the bus closes ch
}

// C delivers the events. It is closed when the subscription ends; Err says why.
func (s *Subscription) C() <-chan core.Event { return s.ch }

// Err is nil while the subscription is live or after Close, ErrSlowSubscriber when it
// was dropped for falling behind and ErrBusClosed when the bus closed.
func (s *Subscription) Err() error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	return s.err
}

// Close ends the subscription; C is closed. Closing twice is harmless.
func (s *Subscription) Close() {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	s.bus.dropLocked(s, nil)
}
