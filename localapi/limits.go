package localapi

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/localapi/ratelimit"
)

// RateLimits configures the per-key budgets. The zero value is the spec's
// limits, switched on; zero fields take their default.
type RateLimits struct {
	Disabled bool

	ReadsPerWindow  int           // 300
	WritesPerWindow int           // 60
	Window          time.Duration // 60 s, fixed and aligned to the clock
	UploadBurst     int           // 200 tokens
	UploadPerSecond float64       // 10 tokens a second
}

func (l RateLimits) withDefaults() RateLimits {
	if l.ReadsPerWindow <= 0 {
		l.ReadsPerWindow = 300
	}
	if l.WritesPerWindow <= 0 {
		l.WritesPerWindow = 60
	}
	if l.Window <= 0 {
		l.Window = time.Minute
	}
	if l.UploadBurst <= 0 {
		l.UploadBurst = 200
	}
	if l.UploadPerSecond <= 0 {
		l.UploadPerSecond = 10
	}
	return l
}

// limiters are the three budgets; nil when limits are disabled.
type limiters struct {
	reads, writes, uploads ratelimit.Limiter
}

func newLimiters(cfg RateLimits, now func() time.Time) *limiters {
	if cfg.Disabled {
		return nil
	}
	cfg = cfg.withDefaults()
	return &limiters{
		reads:   ratelimit.NewWindow(cfg.ReadsPerWindow, cfg.Window, now),
		writes:  ratelimit.NewWindow(cfg.WritesPerWindow, cfg.Window, now),
		uploads: ratelimit.NewBucket(cfg.UploadBurst, cfg.UploadPerSecond, now),
	}
}

func (l *limiters) of(b Budget) ratelimit.Limiter {
	if l == nil {
		return nil
	}
	switch b {
	case BudgetRead:
		return l.reads
	case BudgetWrite:
		return l.writes
	case BudgetUpload:
		return l.uploads
	}
	return nil
}

// Defaults of the per-key caps on what a key holds open at once.
const (
	DefaultMaxConcurrentUploads = 8
	DefaultMaxStreams           = 16
)

// Retry-After of the caps: an upload frees its slot within seconds; a stream only
// when the client closes one, so asking again at once is pointless.
const (
	uploadRetryAfter = time.Second
	streamRetryAfter = 5 * time.Second
)

// keySlots caps how many of something each key holds at once (upload bodies being
// received, event streams open). Unlike the budgets it counts what is open, not what
// was asked: a slot frees the moment its holder ends.
type keySlots struct {
	max int

	mu      sync.Mutex
	held    map[string]int
	changed chan struct{} // closed and replaced whenever a slot is given back
}

func newKeySlots(max int) *keySlots {
	return &keySlots{max: max, held: map[string]int{}, changed: make(chan struct{})}
}

// take holds one of key's slots; false when key holds them all. release gives it
// back; calling it again does nothing.
func (k *keySlots) take(key string) (release func(), ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held[key] >= k.max {
		return nil, false
	}
	k.held[key]++
	var once sync.Once
	return func() { once.Do(func() { k.give(key) }) }, true
}

func (k *keySlots) give(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.held[key]--; k.held[key] <= 0 {
		delete(k.held, key) // idle keys cost nothing
	}
	close(k.changed)
	k.changed = make(chan struct{})
}

// inUse answers how many slots key holds and a channel closed at the next release.
func (k *keySlots) inUse(key string) (int, <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.held[key], k.changed
}

// admitUpload is the storage handler's gate: the asset owner's upload slots.
func (s *Server) admitUpload(owner string) (func(), error) {
	release, ok := s.uploads.take(owner)
	if !ok {
		return nil, &assets.BusyError{RetryAfter: uploadRetryAfter, Reason: fmt.Sprintf(
			"too many uploads in flight: a key sends at most %d files at once; retry once one has finished",
			s.uploads.max)}
	}
	return release, nil
}

// takeStream holds one of owner's event stream slots, or answers 429 and reports
// false.
func (s *Server) takeStream(w http.ResponseWriter, owner string) (release func(), ok bool) {
	release, ok = s.streams.take(owner)
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(streamRetryAfter/time.Second)))
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf(
			"too many event streams: a key holds at most %d open at once (SSE and WebSocket together); close one first",
			s.streams.max))
	}
	return release, ok
}
