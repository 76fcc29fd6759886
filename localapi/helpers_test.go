package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/syncbuf"
)

type echoRequest struct {
	Name   string  `json:"name"`
	Count  *int    `json:"count,omitempty"`
	Ratio  float64 `json:"ratio,omitempty"`
	Tags   []string
	Scenes []struct {
		Inputs  []string `json:"inputs"`
		Quality *int     `json:"quality,omitempty"`
	} `json:"scenes,omitempty"`
}

// testRelease lets a test hold /v1/test/slow open; testEntered says the request
// has reached the handler.
var (
	testRelease = make(chan struct{})
	testEntered = make(chan struct{}, 1)
)

// testRoutes are the tests' own routes, mounted (newServer) and documented like
// any other, so they pass through the same wrapper.
func (s *Server) testRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/v1/test/echo", Summary: "echo", Request: echoRequest{}, Response: echoRequest{},
			Handle: func(r *http.Request) (int, any, error) {
				var req echoRequest
				if err := DecodeJSON(r, &req); err != nil {
					return 0, nil, err
				}
				return 0, req, nil
			}},
		{Method: http.MethodGet, Path: "/v1/test/panic", Summary: "panics", Response: Schema{},
			Handle: func(r *http.Request) (int, any, error) { panic("boom in handler") }},
		{Method: http.MethodGet, Path: "/v1/test/internal", Summary: "fails", Response: Schema{},
			Handle: func(r *http.Request) (int, any, error) {
				return 0, nil, fmt.Errorf("open /secret/path/db: %w", errors.New("disk on fire"))
			}},
		{Method: http.MethodPost, Path: "/v1/test/conflict/{id}", Summary: "conflicts", Response: Schema{},
			Errors: []int{http.StatusConflict},
			Handle: func(r *http.Request) (int, any, error) {
				return 0, nil, core.Conflict("order %s is already completed", PathVar(r, "id"))
			}},
		{Method: http.MethodPost, Path: "/v1/test/upload", Budget: BudgetUpload, Summary: "upload budget",
			Status: http.StatusAccepted, Response: Schema{"type": "object"},
			Handle: func(r *http.Request) (int, any, error) {
				return 0, map[string]any{"owner": Owner(r)}, nil
			}},
		{Method: http.MethodGet, Path: "/v1/test/slow", Summary: "waits for the test", Response: Schema{},
			Handle: func(r *http.Request) (int, any, error) {
				select {
				case testEntered <- struct{}{}:
				default:
				}
				<-testRelease
				return 0, map[string]any{"slow": true}, nil
			}},
		{Method: http.MethodGet, Path: "/v1/test/stream", Summary: "event stream",
			StreamType: "text/event-stream",
			Stream: func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				rc := http.NewResponseController(w)
				for i := range 4 {
					fmt.Fprintf(w, "id: %d\nevent: ping\ndata: {}\n\n", i)
					if err := rc.Flush(); err != nil {
						return
					}
					select {
					case <-time.After(150 * time.Millisecond):
					case <-s.Stopping():
						return
					case <-r.Context().Done():
						return
					}
				}
			}},
	}
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

type testEnv struct {
	t      *testing.T
	base   string
	addr   string
	srv    *Server
	keys   *keys.Service
	admin  string
	clock  *fakeClock
	logs   *syncbuf.Buffer
	client *http.Client
	cancel context.CancelFunc
	done   chan error
	doc    docValidator
}

const adminSecret = "sk-test-admin-0123456789abcdef"

// startServer runs a real server on 127.0.0.1:0 over a real bbolt file.
func startServer(t *testing.T, mutate ...func(*Config)) *testEnv {
	t.Helper()
	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ks := keys.New(db)
	if _, err := ks.EnsureBootstrap(adminSecret); err != nil {
		t.Fatal(err)
	}
	env := &testEnv{t: t, keys: ks, admin: adminSecret, logs: &syncbuf.Buffer{},
		clock: &fakeClock{t: time.Date(2025, 6, 1, 9, 0, 10, 0, time.UTC)}}
	listening := make(chan string, 1)
	cfg := Config{
		Listen:      "127.0.0.1:0",
		OnListening: func(addr string) { listening <- addr },
		Logger:      slog.New(slog.NewTextHandler(env.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Clock:       env.clock.Now,
	}
	for _, m := range mutate {
		m(&cfg)
	}
	srv, err := newServer(cfg, Deps{Keys: ks}, (*Server).testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	env.srv = srv
	ctx, cancel := context.WithCancel(context.Background())
	env.cancel, env.done = cancel, make(chan error, 1)
	go func() { env.done <- srv.Serve(ctx) }()
	select {
	case env.addr = <-listening:
	case err := <-env.done:
		t.Fatalf("Serve ended before listening: %v", err)
	case <-time.After(5 * time.Second):
		t.Fatal("OnListening was not called")
	}
	env.base = "http://" + env.addr
	env.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	t.Cleanup(func() {
		env.stop()
		db.Close()
	})
	return env
}

// stop shuts the server down and returns Serve's error (once).
func (e *testEnv) stop() error {
	if e.cancel == nil {
		return nil
	}
	e.cancel()
	e.cancel = nil
	select {
	case err := <-e.done:
		return err
	case <-time.After(15 * time.Second):
		e.t.Fatal("Serve did not return after cancel")
		return nil
	}
}

type resp struct {
	Code   int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

func (r *resp) data() map[string]any {
	d, _ := r.JSON["data"].(map[string]any)
	return d
}

func (r *resp) reason() string {
	e, _ := r.JSON["error"].(map[string]any)
	s, _ := e["reason"].(string)
	return s
}

type reqOpt func(*http.Request)

func withHeader(k, v string) reqOpt { return func(r *http.Request) { r.Header.Set(k, v) } }
func withHost(h string) reqOpt      { return func(r *http.Request) { r.Host = h } }

// do sends a request; body []byte is sent raw, anything else as JSON with
// Content-Type application/json.
func (e *testEnv) do(method, path, key string, body any, opts ...reqOpt) *resp {
	e.t.Helper()
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case string:
		rd = strings.NewReader(b)
		ctype = "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
		ctype = "application/json"
	}
	req, err := http.NewRequest(method, e.base+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if key != "" {
		req.Header.Set(HeaderAPIKey, key)
	}
	for _, o := range opts {
		o(req)
	}
	res, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	r := &resp{Code: res.StatusCode, Header: res.Header, Body: b}
	if strings.Contains(res.Header.Get("Content-Type"), "json") && len(b) > 0 {
		if err := json.Unmarshal(b, &r.JSON); err != nil {
			e.t.Fatalf("%s %s: answer is not a JSON object: %v: %s", method, path, err, b)
		}
	}
	checkEnvelope(e.t, method, path, r)
	e.doc.check(e.t, e.srv.openapiJSON, req, r)
	return r
}

// checkEnvelope asserts the shape every JSON answer must have.
func checkEnvelope(t *testing.T, method, path string, r *resp) {
	t.Helper()
	if r.JSON == nil || path == "/openapi.json" {
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, path, r.Header.Get("Content-Type"))
	}
	if r.Code < 400 {
		if _, ok := r.JSON["data"]; !ok || len(r.JSON) != 1 {
			t.Errorf("%s %s: %d without a lone data member: %s", method, path, r.Code, r.Body)
		}
		return
	}
	e, ok := r.JSON["error"].(map[string]any)
	if !ok || len(r.JSON) != 1 {
		t.Errorf("%s %s: %d without a lone error member: %s", method, path, r.Code, r.Body)
		return
	}
	if st, _ := e["status"].(float64); int(st) != r.Code {
		t.Errorf("%s %s: error.status %v, HTTP %d", method, path, e["status"], r.Code)
	}
	if rs, _ := e["reason"].(string); rs == "" {
		t.Errorf("%s %s: empty error.reason", method, path)
	}
}

func (e *testEnv) want(r *resp, code int, mentions ...string) {
	e.t.Helper()
	if r.Code != code {
		e.t.Fatalf("HTTP %d, want %d: %s", r.Code, code, r.Body)
	}
	for _, m := range mentions {
		if !strings.Contains(r.reason(), m) {
			e.t.Errorf("reason %q does not mention %q", r.reason(), m)
		}
	}
}

func hasRateHeaders(h http.Header) bool {
	return h.Get(HeaderRateLimit) != "" || h.Get(HeaderRateRemaining) != "" || h.Get(HeaderRateReset) != ""
}

// newKey issues a key through the service.
func (e *testEnv) newKey(name string, scope core.Scope) (core.Key, string) {
	e.t.Helper()
	k, secret, err := e.keys.Create(name, scope)
	if err != nil {
		e.t.Fatal(err)
	}
	return k, secret
}
