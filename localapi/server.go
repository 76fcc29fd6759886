package localapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/mux"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/keys"
)

// DefaultListen is the address the API binds when none is configured.
const DefaultListen = "127.0.0.1:8787"

// DefaultMaxBodyBytes bounds a JSON request body (413 above).
const DefaultMaxBodyBytes = 1 << 20

// DefaultPingInterval is how often event streams send a ping (spec: 15 seconds).
const DefaultPingInterval = 15 * time.Second

// Config is how the server listens and behaves. The zero value is usable: it
// binds DefaultListen with rate limits on and no CORS.
type Config struct {
	Listen      string            // host:port; DefaultListen when empty, "127.0.0.1:0" picks a free port
	OnListening func(addr string) // called once the socket accepts connections, with the bound host:port

	Logger *slog.Logger     // nil: slog.Default()
	Clock  func() time.Time // nil: time.Now; drives rate limits

	RateLimits RateLimits

	// CORSOrigins lists browser origins ("http://localhost:3000") allowed to call the
	// API; empty means no CORS headers at all.
	CORSOrigins []string
	// AllowedHosts adds Host header values ("porchlight.lan:8787") accepted besides the
	// listen address and its loopback names, e.g. behind a reverse proxy.
	AllowedHosts []string

	MaxBodyBytes      int64         // JSON body limit; DefaultMaxBodyBytes when 0
	ReadHeaderTimeout time.Duration // 10 s when 0
	IdleTimeout       time.Duration // 120 s when 0
	// RequestTimeout bounds reading the body and writing the answer of JSON routes
	// (set per request, so streams are not cut); 60 s when 0.
	RequestTimeout  time.Duration
	ShutdownTimeout time.Duration // how long Serve waits for requests in flight; 10 s when 0

	// PingInterval is how often SSE streams and WebSocket connections send a ping;
	// DefaultPingInterval when 0.
	PingInterval time.Duration

	// MaxInputs is the most brackets one order or batch scene takes through the
	// API: catalog.MaxInputs (the spec's 5) when 0; a studio may raise it up to
	// engine.MaxBrackets (config api.max_inputs).
	MaxInputs int

	// MaxConcurrentUploads caps the upload bodies (PUTs to the signed addresses of
	// its assets) one key sends at once; the next answers 429.
	// DefaultMaxConcurrentUploads when 0.
	MaxConcurrentUploads int
	// UploadIdleTimeout is how long an upload body may send nothing before it is
	// answered 408 and dropped; assets.DefaultUploadIdle when 0.
	UploadIdleTimeout time.Duration
	// MaxStreams caps the event streams (SSE and WebSocket together) one key holds
	// open; the next answers 429. DefaultMaxStreams when 0.
	MaxStreams int
}

// Deps are the services the routes call. Keys is required; the rest may be nil
// where the routes that need them are not wired.
type Deps struct {
	Keys *keys.Service
	// Available reports whether a feature can run now (a model backend is
	// configured for it); nil means features that need a backend are unavailable.
	Available func(featureKey string) bool
	// Assets is the asset store behind /v1/assets and the signed /storage/
	// addresses; nil leaves those routes out.
	Assets *assets.Service
	// Engine runs orders and batches and carries their events; nil leaves the
	// order, batch, event and WebSocket routes out.
	Engine engine.API
}

// Server is the /v1 HTTP server.
type Server struct {
	cfg    Config
	deps   Deps
	log    *slog.Logger
	now    func() time.Time
	router *mux.Router
	routes []*Route
	limits *limiters
	hosts  *hostCheck
	cors   *corsPolicy

	openapiJSON []byte

	tickets *ticketStore // WebSocket tickets; nil without an engine

	uploads *keySlots // upload bodies in flight, per key
	streams *keySlots // event streams open, per key

	handler http.Handler

	stopOnce sync.Once
	stopping chan struct{}
}

// New builds the server with every route of routeTable. It fails on a
// configuration it cannot honour rather than serving something else.
func New(cfg Config, deps Deps) (*Server, error) { return newServer(cfg, deps, nil) }

// newServer is New with more routes from extra (the tests' own), mounted and
// documented like the others.
func newServer(cfg Config, deps Deps, extra func(*Server) []Route) (*Server, error) {
	if deps.Keys == nil {
		return nil, errors.New("localapi: Deps.Keys is required")
	}
	if cfg.Listen == "" {
		cfg.Listen = DefaultListen
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadHeaderTimeout <= 0 {
		cfg.ReadHeaderTimeout = 10 * time.Second
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = 120 * time.Second
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 60 * time.Second
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 10 * time.Second
	}
	if cfg.PingInterval <= 0 {
		cfg.PingInterval = DefaultPingInterval
	}
	if cfg.MaxConcurrentUploads <= 0 {
		cfg.MaxConcurrentUploads = DefaultMaxConcurrentUploads
	}
	if cfg.UploadIdleTimeout <= 0 {
		cfg.UploadIdleTimeout = assets.DefaultUploadIdle
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.MaxInputs <= 0 {
		cfg.MaxInputs = catalog.MaxInputs
	}
	if cfg.MaxInputs > engine.MaxBrackets {
		return nil, fmt.Errorf("localapi: MaxInputs %d is over the engine's %d brackets", cfg.MaxInputs, engine.MaxBrackets)
	}
	s := &Server{cfg: cfg, deps: deps, log: cfg.Logger, now: cfg.Clock, stopping: make(chan struct{})}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	var err error
	if s.hosts, err = newHostCheck(cfg.Listen, cfg.AllowedHosts); err != nil {
		return nil, err
	}
	if s.cors, err = newCORSPolicy(cfg.CORSOrigins); err != nil {
		return nil, err
	}
	s.limits = newLimiters(cfg.RateLimits, s.now)
	s.uploads, s.streams = newKeySlots(cfg.MaxConcurrentUploads), newKeySlots(cfg.MaxStreams)

	s.router = mux.NewRouter()
	s.router.NotFoundHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	s.router.MethodNotAllowedHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
	})
	if deps.Engine != nil {
		s.tickets = newTicketStore(s.now)
	}
	for _, rt := range s.routeTable() {
		s.handle(rt)
	}
	if extra != nil {
		for _, rt := range extra(s) {
			s.handle(rt)
		}
	}
	if err := s.mount(); err != nil {
		return nil, err
	}
	if s.openapiJSON, err = s.buildOpenAPI(); err != nil {
		return nil, fmt.Errorf("localapi: build openapi.json: %w", err)
	}
	s.handler = s.recoverPanics(s.hosts.middleware(s.cors.middleware(s.router)))
	return s, nil
}

// Handler is the whole server as an http.Handler (for tests and embedding).
// Without Serve the Host check accepts loopback names on the configured port, or
// on any port when the configured port is 0.
func (s *Server) Handler() http.Handler { return s.handler }

// Stopping is closed when the server begins shutting down; long-lived handlers
// (event streams) end when it closes so the shutdown does not wait for them.
func (s *Server) Stopping() <-chan struct{} { return s.stopping }

// Serve listens on cfg.Listen, reports the bound address through OnListening and
// serves until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("localapi: listen on %s: %w", s.cfg.Listen, err)
	}
	addr := ln.Addr().String()
	s.hosts.bind(addr)

	srv := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		IdleTimeout:       s.cfg.IdleTimeout,
		// ReadTimeout and WriteTimeout stay 0: JSON routes set per-request deadlines
		// and streams (SSE, uploads of large files) set their own.
		MaxHeaderBytes: 64 << 10,
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:    func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	srv.RegisterOnShutdown(s.stop)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if s.cfg.OnListening != nil {
		s.cfg.OnListening(addr)
	}
	s.log.Info("api listening", "addr", addr)

	select {
	case err := <-errc:
		s.stop()
		return fmt.Errorf("localapi: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	if err != nil {
		s.log.Warn("api shutdown timed out; closing connections", "err", err)
		srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return fmt.Errorf("localapi: serve: %w", serr)
	}
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("localapi: shutdown: %w", err)
	}
	return nil
}

func (s *Server) stop() { s.stopOnce.Do(func() { close(s.stopping) }) }
