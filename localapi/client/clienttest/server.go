// Package clienttest starts a real Porchlight server for tests of its clients: the
// key service, the asset store with ingest, the engine with its pipeline and the
// /v1 HTTP server on 127.0.0.1, over a bbolt database in a temporary data dir.
// Tests of the Go client and of the remote backend use it; the pipeline can be
// given extra steps (a generative feature on a fake model backend).
package clienttest

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/localapi"
)

// AdminSecret is the admin key every test server starts with.
const AdminSecret = "sk-clienttest-admin-0123456789abcdef"

// Options tune the server.
type Options struct {
	// RateLimits are the API's budgets; the zero value is the spec's limits.
	RateLimits localapi.RateLimits
	// Clock drives the rate limits (nil: the wall clock).
	Clock func() time.Time
	// Configure adds or replaces pipeline steps before the engine starts.
	Configure func(t testing.TB, p *pipeline.Pipeline)
	// Available is the catalog's availability (nil: the pipeline's steps decide).
	Available func(featureKey string) bool
	// Logger receives the server's logs (nil: discarded).
	Logger *slog.Logger
	// Workers is the engine's order concurrency (default 2).
	Workers int
}

// Server is a running Porchlight.
type Server struct {
	URL      string
	Addr     string
	Keys     *keys.Service
	Assets   *assets.Service
	Engine   *engine.Engine
	Pipeline *pipeline.Pipeline
	API      *localapi.Server

	stopOnce sync.Once
	stop     func()
}

// Start runs a server until the test ends.
func Start(t testing.TB, opt Options) *Server {
	t.Helper()
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	dir := t.TempDir()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Keys: keys.New(db)}
	if _, err := s.Keys.EnsureBootstrap(AdminSecret); err != nil {
		db.Close()
		t.Fatal(err)
	}
	var engMu sync.Mutex
	s.Assets, err = assets.New(db, dir, assets.Config{Workers: 2, OnDelete: func(a core.Asset) {
		engMu.Lock()
		defer engMu.Unlock()
		if s.Engine != nil {
			s.Engine.AssetDeleted(a)
		}
	}})
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	s.Pipeline = pipeline.New(pipeline.Config{Logger: log})
	if opt.Configure != nil {
		opt.Configure(t, s.Pipeline)
	}
	bus := events.New(events.Config{})
	workers := opt.Workers
	if workers <= 0 {
		workers = 2
	}
	engMu.Lock()
	s.Engine, err = engine.New(db, s.Assets, engine.Config{Workers: workers, Pipeline: s.Pipeline, Bus: bus, Logger: log})
	engMu.Unlock()
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var work sync.WaitGroup
	work.Add(2)
	go func() { defer work.Done(); s.Assets.Serve(ctx) }()
	go func() { defer work.Done(); s.Engine.Serve(ctx) }()

	available := opt.Available
	if available == nil {
		available = s.Pipeline.FeatureAvailable
	}
	listening := make(chan string, 1)
	s.API, err = localapi.New(localapi.Config{
		Listen: "127.0.0.1:0",
		OnListening: func(addr string) {
			s.Assets.SetBaseURL("http://" + addr)
			listening <- addr
		},
		Logger:     log,
		Clock:      opt.Clock,
		RateLimits: opt.RateLimits,
	}, localapi.Deps{Keys: s.Keys, Assets: s.Assets, Engine: s.Engine, Available: available})
	if err != nil {
		cancel()
		work.Wait()
		db.Close()
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.API.Serve(sctx) }()
	select {
	case s.Addr = <-listening:
	case err := <-served:
		t.Fatalf("clienttest: the API stopped before listening: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("clienttest: the API did not start listening")
	}
	s.URL = "http://" + s.Addr
	s.stop = func() {
		scancel()
		<-served
		cancel()
		work.Wait()
		bus.Close()
		db.Close()
	}
	t.Cleanup(s.Stop)
	return s
}

// Stop shuts the server down (once); tests call it to make the server go away.
func (s *Server) Stop() { s.stopOnce.Do(s.stop) }

// NewKey issues a key directly through the key service and returns its secret.
func (s *Server) NewKey(t testing.TB, name string, scope core.Scope) (core.Key, string) {
	t.Helper()
	k, secret, err := s.Keys.Create(name, scope)
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}
