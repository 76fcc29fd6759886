package localapi

import (
	"time"

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
