package engine_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// Small real photos the engine tests run on.
var (
	photoSmallJPEG  = []string{"brackets", "house_interior_kim", "A.jpg"}                 // 752x500
	photoSmallJPEG2 = []string{"brackets", "house_interior_kim", "B.jpg"}                 // 752x500
	photoPNG        = []string{"brackets", "memorial_church_debevec", "memorial0066.png"} // 512x768
	photoBig        = []string{"brackets", "library_phone", "20240401_185036.JPG"}        // 4032x2268
)

// clock is an injectable clock tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// env is a real database, a real asset store serving ingest, and an engine.
type env struct {
	t      testing.TB
	dir    string
	db     *store.DB
	assets *assets.Service
	eng    *engine.Engine
	pipe   *pipeline.Pipeline
	clock  *clock
	owner  string

	stopAssets context.CancelFunc
	assetsDone chan error
	stopEngine context.CancelFunc
	engineDone chan error
	closed     bool
}

type envOption func(*engine.Config, *pipeline.Config)

// newEnv opens everything in a temp dir (or dir when given) without serving the
// engine; call serve. cfg tweaks the engine and pipeline configuration.
func newEnv(t testing.TB, dir string, opts ...envOption) *env {
	t.Helper()
	testphotos.Dir(t)
	if dir == "" {
		dir = t.TempDir()
	}
	e := &env{t: t, dir: dir, clock: newClock(), owner: "key-owner-a"}
	var err error
	e.db, err = store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ecfg := engine.Config{Logger: quiet}
	pcfg := pipeline.Config{Logger: quiet}
	for _, o := range opts {
		o(&ecfg, &pcfg)
	}
	if ecfg.Memory == nil {
		// One budget for orders and exports, as app wires them.
		ecfg.Memory = engine.NewMemoryBudget(ecfg.MemoryBudget, ecfg.MemoryFraction)
	}
	var eng *engine.Engine
	var engMu sync.Mutex
	e.assets, err = assets.New(e.db, dir, assets.Config{
		Workers: 2,
		Memory:  ecfg.Memory,
		OnDelete: func(a core.Asset) {
			engMu.Lock()
			defer engMu.Unlock()
			if eng != nil {
				eng.AssetDeleted(a)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	actx, acancel := context.WithCancel(context.Background())
	e.stopAssets = acancel
	e.assetsDone = make(chan error, 1)
	go func() { e.assetsDone <- e.assets.Serve(actx) }()

	e.pipe = pipeline.New(pcfg)
	ecfg.Pipeline = e.pipe
	if ecfg.Now == nil {
		ecfg.Now = e.clock.Now
	}
	e.eng, err = engine.New(e.db, e.assets, ecfg)
	if err != nil {
		t.Fatal(err)
	}
	engMu.Lock()
	eng = e.eng
	engMu.Unlock()
	t.Cleanup(e.close)
	return e
}

func withWorkers(n int) envOption {
	return func(c *engine.Config, _ *pipeline.Config) { c.Workers = n }
}

func withEngine(f func(*engine.Config)) envOption {
	return func(c *engine.Config, _ *pipeline.Config) { f(c) }
}

func withPipeline(f func(*pipeline.Config)) envOption {
	return func(_ *engine.Config, p *pipeline.Config) { f(p) }
}

// serve starts the engine.
func (e *env) serve() {
	ctx, cancel := context.WithCancel(context.Background())
	e.stopEngine = cancel
	e.engineDone = make(chan error, 1)
	go func() { e.engineDone <- e.eng.Serve(ctx) }()
}

// stop stops the engine's Serve and waits for it.
func (e *env) stop() {
	if e.stopEngine == nil {
		return
	}
	e.stopEngine()
	select {
	case err := <-e.engineDone:
		if err != nil {
			e.t.Errorf("engine Serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		e.t.Error("engine Serve did not return within 30s of cancel")
	}
	e.stopEngine = nil
}

func (e *env) close() {
	if e.closed {
		return
	}
	e.closed = true
	e.stop()
	if e.stopAssets != nil {
		e.stopAssets()
		<-e.assetsDone
		e.stopAssets = nil
	}
	e.db.Close()
}

// upload adds a real photo for owner and waits until ingest made it ready.
func (e *env) upload(owner string, rel ...string) string {
	e.t.Helper()
	p := testphotos.Path(e.t, rel...)
	f, err := os.Open(p)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	ct := "image/jpeg"
	switch strings.ToLower(filepath.Ext(p)) {
	case ".png":
		ct = "image/png"
	}
	a, err := e.assets.Add(owner, filepath.Base(p), ct, f)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.waitAsset(owner, a.ID)
}

func (e *env) waitAsset(owner, id string) string {
	e.t.Helper()
	if a := e.waitSettled(owner, id); a.Status == core.AssetFailed {
		e.t.Fatalf("asset %s failed ingest: %s %s", id, a.Code, a.Reason)
	}
	return id
}

// waitSettled polls an asset until it is ready or failed.
func (e *env) waitSettled(owner, id string) core.Asset {
	e.t.Helper()
	a, ok := poll(e.t, 60*time.Second, 10*time.Millisecond, func() (core.Asset, error) { return e.assets.Get(owner, id) },
		func(a core.Asset) bool { return a.Status == core.AssetReady || a.Status == core.AssetFailed })
	if !ok {
		e.t.Fatalf("asset %s not settled within 60s", id)
	}
	return a
}

// poll calls get every interval until done holds for what it answers, failing the
// test on an error from get. It returns the last answer and whether done held
// within limit.
func poll[T any](t testing.TB, limit, every time.Duration, get func() (T, error), done func(T) bool) (T, bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	var v T
	for time.Now().Before(deadline) {
		var err error
		if v, err = get(); err != nil {
			t.Fatal(err)
		}
		if done(v) {
			return v, true
		}
		time.Sleep(every)
	}
	return v, false
}

// wait polls an order until it is settled.
func (e *env) wait(owner, id string) core.OrderSummary {
	e.t.Helper()
	return e.waitFor(owner, id, func(s core.OrderSummary) bool { return s.Status.Terminal() }, "settled")
}

func (e *env) waitFor(owner, id string, ok func(core.OrderSummary) bool, what string) core.OrderSummary {
	e.t.Helper()
	s, done := poll(e.t, 90*time.Second, 5*time.Millisecond, func() (core.OrderSummary, error) { return e.eng.Order(context.Background(), owner, id) }, ok)
	if !done {
		e.t.Fatalf("order %s not %s within 90s: status %s stage %q", id, what, s.Status, s.ProgressStage)
	}
	return s
}

func (e *env) waitBatch(owner, id string) core.BatchAggregate {
	e.t.Helper()
	b, ok := poll(e.t, 120*time.Second, 10*time.Millisecond, func() (core.BatchAggregate, error) { return e.eng.Batch(context.Background(), owner, id) },
		func(b core.BatchAggregate) bool { return b.Done })
	if !ok {
		e.t.Fatalf("batch %s not done within 120s", id)
	}
	return b
}

// gate is a registered step that holds every order at it until released, so tests
// can see orders running. It counts how many orders are inside at once.
type gate struct {
	mu        sync.Mutex
	release   chan struct{}
	entered   chan string
	inside    int
	maxInside int
	finished  []string
}

func newGate() *gate {
	return &gate{release: make(chan struct{}), entered: make(chan string, 1000)}
}

// step returns the gate as a pipeline step under name (a feature slot, e.g. sky).
// With honourCtx false it ignores cancellation, like a step that cannot be stopped.
func (g *gate) step(name string, honourCtx bool) pipeline.Step {
	return pipeline.Step{Name: name, Cost: 0.01, Run: func(ctx context.Context, j *pipeline.Job) error {
		g.mu.Lock()
		g.inside++
		g.maxInside = max(g.maxInside, g.inside)
		g.mu.Unlock()
		defer func() {
			g.mu.Lock()
			g.inside--
			g.finished = append(g.finished, j.OrderID)
			g.mu.Unlock()
		}()
		g.entered <- j.OrderID
		if honourCtx {
			select {
			case <-g.release:
			case <-ctx.Done():
				return ctx.Err()
			}
		} else {
			<-g.release
		}
		return nil
	}}
}

func (g *gate) open() { close(g.release) }

func (g *gate) waitEntered(t testing.TB) string {
	t.Helper()
	select {
	case id := <-g.entered:
		return id
	case <-time.After(60 * time.Second):
		t.Fatal("no order reached the gate within 60s")
	}
	return ""
}

func (g *gate) max() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxInside
}

func ptr[T any](v T) *T { return &v }

func kindOf(err error) core.Kind { return core.KindOf(err) }

func fieldOf(err error) string {
	var ce *core.Error
	if errors.As(err, &ce) {
		return ce.Field
	}
	return ""
}

// collect subscribes to the bus and gathers events until stop is called.
type collector struct {
	sub  *events.Subscription
	mu   sync.Mutex
	evs  []core.Event
	done chan struct{}
}

func collect(b *events.Bus, f events.Filter) *collector {
	s, _ := b.Subscribe(f, 0)
	c := &collector{sub: s, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for ev := range s.C() {
			c.mu.Lock()
			c.evs = append(c.evs, ev)
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *collector) stop() []core.Event {
	c.sub.Close()
	<-c.done
	return c.evs
}

func eventsFor(owner string) events.Filter { return events.Filter{Owner: owner} }
