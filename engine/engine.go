// Package engine is Porchlight's order engine: durable orders and batches in an
// order store (core.OrderStore; engine/store keeps them in the bbolt database), the
// order state machine, the queue, workers with memory-aware admission, expiry, crash
// recovery and the event bus. The three front doors (the HTTP API, the desktop
// window and hot folders) call only this package's Engine.
//
// Every state change is one store transaction together with the order record and its
// queue entry; events are published only after the transaction committed. Progress of
// running orders is kept in memory (it is recomputed after a restart anyway) and
// overlaid on the stored record when a summary is read.
package engine

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
)

// AssetStore is what the engine needs of the asset store (assets.Service implements
// it): ownership-checked lookups for validation, reading inputs, and the one output
// per order.
type AssetStore interface {
	// Get returns owner's asset, core.NotFound when missing or another key's.
	Get(owner, id string) (core.Asset, error)
	// Open opens a ready asset's bytes, whoever owns it.
	Open(id string) (assets.File, core.Asset, error)
	// CreateOutput stores an order's output; idempotent per order.
	CreateOutput(owner, orderID, format string, write func(io.Writer) error) (core.Asset, error)
}

// assetDeleter is implemented by stores that can remove an asset; the engine uses it
// to drop an output whose order was cancelled while the output was being written.
type assetDeleter interface {
	Delete(owner, id string) error
}

// Defaults of Config.
const (
	DefaultPendingTTL     = 24 * time.Hour
	DefaultIdempotencyTTL = 24 * time.Hour
	DefaultMaxAttempts    = 3
	DefaultMemoryFraction = membudget.DefaultFraction
	DefaultSweepInterval  = time.Minute
)

// Config tunes the engine. The zero value means every default.
type Config struct {
	// Workers is the number of orders processed at once (default GOMAXPROCS/2, at
	// least 1). Each order's pixel work is itself spread over all cores.
	Workers int
	// Memory is the budget running orders are charged against by their estimates;
	// pass the same one to the asset service, so exports share it. nil creates one
	// of MemoryBudget bytes.
	Memory *membudget.Budget
	// MemoryBudget is the bytes all running orders may use together when Memory is
	// nil. 0 takes MemoryFraction of MemAvailable (/proc/meminfo) at start.
	MemoryBudget int64
	// MemoryFraction is the share of available memory used when MemoryBudget is 0
	// (default 0.6).
	MemoryFraction float64
	// LimitHeap makes Serve set the Go runtime's soft memory limit to the budget plus
	// what the process held when it started, so the collector reclaims garbage before
	// the heap passes the budget. For a process the engine owns (not tests).
	LimitHeap bool
	// PendingTTL is how long an order may stay pending before it expires (default 24h).
	PendingTTL time.Duration
	// IdempotencyTTL is how long an Idempotency-Key is remembered (default 24h).
	IdempotencyTTL time.Duration
	// MaxAttempts is how many times an order may start; an order interrupted that
	// often (the process died while it ran) fails instead of starting again (default 3).
	MaxAttempts int
	// SweepInterval is how often pending orders are checked for expiry (default 1m).
	SweepInterval time.Duration
	// Pipeline runs the orders; nil builds one with pipeline.Config{}.
	Pipeline *pipeline.Pipeline
	// Bus carries the events; nil creates one with events.Config{}.
	Bus *events.Bus
	// Orders keeps the orders, batches, queue and idempotency records; nil keeps
	// them in the database New is given (engine/store).
	Orders core.OrderStore
	// Now is the clock; tests inject one to expire orders.
	Now    func() time.Time
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = max(1, runtime.GOMAXPROCS(0)/2)
	}
	if c.MemoryFraction <= 0 || c.MemoryFraction > 1 {
		c.MemoryFraction = DefaultMemoryFraction
	}
	if c.Memory == nil {
		c.Memory = NewMemoryBudget(c.MemoryBudget, c.MemoryFraction)
	}
	c.MemoryBudget = c.Memory.Size()
	if c.PendingTTL <= 0 {
		c.PendingTTL = DefaultPendingTTL
	}
	if c.IdempotencyTTL <= 0 {
		c.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.SweepInterval <= 0 {
		c.SweepInterval = DefaultSweepInterval
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Pipeline == nil {
		c.Pipeline = pipeline.New(pipeline.Config{Logger: c.Logger})
	}
	if c.Bus == nil {
		c.Bus = events.New(events.Config{})
	}
	return c
}

// Engine runs orders. Create it with New, run it with Serve.
type Engine struct {
	orders core.OrderStore
	assets AssetStore
	cfg    Config
	pipe   *pipeline.Pipeline
	bus    *events.Bus
	log    *slog.Logger

	mem  *membudget.Budget
	head headState // the dispatcher's own: the oldest pending order's estimate and memory claim

	mu       sync.Mutex
	lives    map[string]*live  // claimed orders, by id
	waiting  map[string]string // pending order id -> stage shown while it waits ("waiting for memory")
	inflight int               // claimed orders (sent to or held by a worker)

	wake    chan struct{} // something changed that may let the dispatcher start an order
	jobs    chan *live
	batchMu sync.Mutex // serialises batch events so aggregates never go backwards
	serving atomic.Bool

	// sweepHook, when set (tests, before Serve), runs after each expiry sweep, so a
	// test can tell that a whole sweep saw the state it set up.
	sweepHook func()
}

// live is an order a worker holds: its in-memory progress and its cancel func.
type live struct {
	id    string
	sizes []image.Point
	mem   int64

	ctx    context.Context
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	rec     core.Order // the record as claimed, progress fields kept current
	settled bool       // a terminal event was published; no more progress goes out
}

// errOrderCancelled is the cause of a running order's context when it was cancelled.
var errOrderCancelled = errors.New("order cancelled")

// New opens the engine on db (or on cfg.Orders when set). Orders that were running
// when the process stopped go back to pending (or fail after MaxAttempts starts).
func New(db *store.DB, assets AssetStore, cfg Config) (*Engine, error) {
	if (db == nil && cfg.Orders == nil) || assets == nil {
		return nil, errors.New("engine: New needs a database and an asset store")
	}
	cfg = cfg.withDefaults()
	if cfg.Orders == nil {
		cfg.Orders = store.NewOrders(db)
	}
	e := &Engine{
		orders: cfg.Orders, assets: assets, cfg: cfg, pipe: cfg.Pipeline, bus: cfg.Bus, log: cfg.Logger, mem: cfg.Memory,
		lives:   map[string]*live{},
		waiting: map[string]string{},
		wake:    make(chan struct{}, 1),
		jobs:    make(chan *live, cfg.Workers),
	}
	ctx := context.Background()
	if err := e.recoverInterrupted(ctx); err != nil {
		return nil, fmt.Errorf("engine: recover interrupted orders: %w", err)
	}
	e.loadTimings(ctx)
	return e, nil
}

// Events returns the event bus.
func (e *Engine) Events() *events.Bus { return e.bus }

// Pipeline returns the pipeline, so the composition root can register feature steps
// and the catalog can ask which features are available.
func (e *Engine) Pipeline() *pipeline.Pipeline { return e.pipe }

// MemoryBudget returns the admission budget in bytes.
func (e *Engine) MemoryBudget() int64 { return e.mem.Size() }

// Memory returns the budget orders are charged against.
func (e *Engine) Memory() *membudget.Budget { return e.mem }

// Serve runs the workers, the dispatcher and the expiry sweeper until ctx is done.
// Orders running at that moment go back to pending and run again on the next start.
func (e *Engine) Serve(ctx context.Context) error {
	if !e.serving.CompareAndSwap(false, true) {
		return errors.New("engine: Serve is already running")
	}
	defer e.serving.Store(false)
	if e.cfg.LimitHeap {
		defer limitHeap(e.mem.Size())()
	}
	g, gctx := errgroup.WithContext(ctx)
	for i := 0; i < e.cfg.Workers; i++ {
		g.Go(func() error { return e.worker(gctx) })
	}
	g.Go(func() error { return e.dispatch(gctx) })
	g.Go(func() error { return e.sweeper(gctx) })
	err := g.Wait()
	// Serve's ctx is done by now; what it leaves behind is still written.
	bg := context.WithoutCancel(ctx)
	e.saveTimings(bg)
	// Jobs claimed but never picked up by a worker go back to the queue.
	for {
		select {
		case l := <-e.jobs:
			e.requeue(bg, l)
			e.release(l)
		default:
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
			return nil
		}
	}
}

func (e *Engine) signal() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *Engine) now() time.Time { return e.cfg.Now().UTC() }
