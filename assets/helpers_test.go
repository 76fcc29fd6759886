package assets

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	enginestore "github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/testphotos"
)

const owner = "4b8e2f1a-0c3d-4e5f-8a9b-1c2d3e4f5a6b"

// clock is an injectable clock tests move forward.
type clock struct{ off atomic.Int64 }

func (c *clock) Now() time.Time             { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) Advance(d time.Duration)    { c.off.Add(int64(d)) }
func (c *clock) install(cfg *Config) *clock { cfg.Now = c.Now; return c }

// env is a service on a real bbolt file with its workers running and its storage
// handler behind a real HTTP server on 127.0.0.1.
type env struct {
	t    testing.TB
	dir  string
	db   *enginestore.DB
	s    *Service
	srv  *httptest.Server
	stop func()
}

func newEnv(t testing.TB, cfg Config) *env {
	t.Helper()
	return openEnv(t, t.TempDir(), cfg, nil)
}

func openEnv(t testing.TB, dir string, cfg Config, prepare func(*Service)) *env {
	t.Helper()
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, dir, cfg)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	if prepare != nil {
		prepare(s)
	}
	srv := httptest.NewServer(s.StorageHandler())
	s.SetBaseURL(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	e := &env{t: t, dir: dir, db: db, s: s, srv: srv}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve: %v", err)
			}
			srv.Close()
			db.Close()
		})
	}
	t.Cleanup(e.stop)
	return e
}

// wait polls until the asset settles (ready or failed) or the deadline passes.
func (e *env) wait(id string) core.Asset {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		a, err := e.s.Get(owner, id)
		if err != nil {
			e.t.Fatalf("get %s: %v", id, err)
		}
		if a.Status == core.AssetReady || a.Status == core.AssetFailed {
			return a
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("asset %s still %s after 60s", id, a.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// addFile uploads bytes through Add and waits for the outcome.
func (e *env) add(name, contentType string, data []byte) core.Asset {
	e.t.Helper()
	a, err := e.s.Add(owner, name, contentType, bytes.NewReader(data))
	if err != nil {
		e.t.Fatalf("add %s: %v", name, err)
	}
	return e.wait(a.ID)
}

func photo(t testing.TB, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func hexSum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
