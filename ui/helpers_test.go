package ui

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
)

// system is a real Porchlight behind the window: bbolt in a temp dir, the asset
// store with its ingest workers, the key service and the engine with its workers.
type system struct {
	dir    string
	db     *store.DB
	keys   *keys.Service
	assets *assets.Service
	engine *engine.Engine
	stop   context.CancelFunc
	done   sync.WaitGroup
}

func newSystem(t testing.TB, workers int) *system {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &system{dir: dir, db: db, keys: keys.New(db)}
	s.assets, err = assets.New(db, dir, assets.Config{})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.engine, err = engine.New(db, s.assets, engine.Config{
		Workers: workers, Logger: log,
		Pipeline: pipeline.New(pipeline.Config{Logger: log}),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	for _, svc := range []interface{ Serve(context.Context) error }{s.assets, s.engine, s.keys} {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			svc.Serve(ctx)
		}()
	}
	t.Cleanup(func() {
		cancel()
		s.done.Wait()
		db.Close()
	})
	return s
}

// uiLoop stands in for Fyne's main goroutine: background work queues functions with
// do, and the test goroutine runs them in pump, so widgets are only ever touched by
// the test goroutine, as they would be by the main one.
type uiLoop struct {
	mu sync.Mutex
	q  []func()
}

func (l *uiLoop) do(f func()) {
	l.mu.Lock()
	l.q = append(l.q, f)
	l.mu.Unlock()
}

func (l *uiLoop) pump() {
	for {
		l.mu.Lock()
		q := l.q
		l.q = nil
		l.mu.Unlock()
		if len(q) == 0 {
			return
		}
		for _, f := range q {
			f()
		}
	}
}

// harness is a window on a real system, driven by the test.
type harness struct {
	t    testing.TB
	sys  *system
	loop *uiLoop
	w    *Window
	cfg  *Config
	out  string
}

func newHarness(t testing.TB, workers int) *harness {
	t.Helper()
	sys := newSystem(t, workers)
	a := test.NewApp()
	t.Cleanup(a.Quit)
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	cfg := NewConfig(viper.New(), cfgFile)
	out := t.TempDir()
	cfg.Set(KeyOutputDir, out)
	loop := &uiLoop{}
	w, err := newWindow(a, Deps{
		Engine: sys.engine, Assets: sys.assets, Keys: sys.keys,
		Available: sys.engine.Pipeline().FeatureAvailable,
		Config:    cfg, DataDir: sys.dir,
	}, loop.do)
	if err != nil {
		t.Fatal(err)
	}
	w.win.Resize(fyne.NewSize(1360, 860))
	t.Cleanup(func() {
		w.Close()
		loop.pump()
	})
	return &harness{t: t, sys: sys, loop: loop, w: w, cfg: cfg, out: out}
}

// waitFor pumps the UI loop until cond holds or the timeout passes.
func (h *harness) waitFor(what string, timeout time.Duration, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h.loop.pump()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(15 * time.Millisecond)
	}
}

// drop drops paths on the window and waits until their scenes are in the shoot.
func (h *harness) drop(paths ...string) []int {
	h.t.Helper()
	var ids []int
	var done bool
	h.w.addPaths(paths, func(got []int, err error) {
		if err != nil {
			h.t.Errorf("drop: %v", err)
		}
		ids, done = got, true
	})
	h.waitFor("the dropped photos to be grouped", time.Minute, func() bool { return done })
	return ids
}

// shortcut types a keyboard shortcut on the window.
func (h *harness) shortcut(s fyne.Shortcut) {
	h.w.win.Canvas().(fyne.Shortcutable).TypedShortcut(s)
	h.loop.pump()
}

// key types a key with nothing focused.
func (h *harness) key(k fyne.KeyName) {
	h.w.win.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: k})
	h.loop.pump()
}

// versionsSaved holds once scene id has n versions, the newest completed and saved.
func (h *harness) versionsSaved(id, n int) func() bool {
	return func() bool {
		s, _ := h.w.shoot.Get(id)
		return len(s.Versions) == n && s.Summary.Status == core.OrderCompleted && s.Saved != ""
	}
}
