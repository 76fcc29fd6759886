package hotfolder

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// Real photos the tests drop.
var (
	photoBedroom = []string{"interiors", "houses_158_bedroom.jpg"} // 1024x768, 49 kB
	photoKitchen = []string{"interiors", "houses_162_kitchen.jpg"} // 1024x682
	kimBrackets  = []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"}    // brackets/house_interior_kim, 752x500
	oldHouse     = []string{"OldHouse1.jpg", "OldHouse2.jpg", "OldHouse3.jpg"}
)

// env is a real database, asset store, engine and key service on a data dir, all
// serving, with a hot-folder service started on demand.
type env struct {
	t       testing.TB
	dataDir string
	db      *store.DB
	assets  *assets.Service
	engine  *engine.Engine
	keys    *keys.Service
	pipe    *pipeline.Pipeline
	svc     *Service

	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed bool
}

func quietLogger() *slog.Logger {
	if os.Getenv("PORCHLIGHT_HOTFOLDER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func newEnv(t testing.TB, dataDir string) *env {
	t.Helper()
	testphotos.Dir(t)
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	e := &env{t: t, dataDir: dataDir}
	var err error
	if e.db, err = store.Open(dataDir); err != nil {
		t.Fatal(err)
	}
	log := quietLogger()
	e.keys = keys.New(e.db)
	var eng *engine.Engine
	var engMu sync.Mutex
	e.assets, err = assets.New(e.db, dataDir, assets.Config{
		Workers: 2,
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
	e.pipe = pipeline.New(pipeline.Config{Logger: log, MaxEdge: 1024})
	// The crash test kills the process four times on purpose; an order caught running
	// at three of them would otherwise fail as a poison pill (MaxAttempts, 3 by default).
	eng, err = engine.New(e.db, e.assets, engine.Config{Workers: 2, Pipeline: e.pipe, Logger: log,
		MemoryBudget: 2 << 30, MaxAttempts: 8})
	if err != nil {
		t.Fatal(err)
	}
	engMu.Lock()
	e.engine = eng
	engMu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	for _, svc := range []interface{ Serve(context.Context) error }{e.assets, e.engine} {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); svc.Serve(ctx) }()
	}
	t.Cleanup(e.close)
	return e
}

// journalOf is the journal of the named folder in the environment's database, as
// the service reads and writes it.
func (e *env) journalOf(name string) *journal.Folder {
	e.t.Helper()
	j, err := journal.Open(e.db)
	if err != nil {
		e.t.Fatal(err)
	}
	return j.Folder(name)
}

// start builds the hot-folder service on cfgs and serves it.
func (e *env) start(cfgs ...Config) *Service {
	e.t.Helper()
	return e.serve(e.assets, quietLogger(), cfgs...)
}

// serve builds the hot-folder service on cfgs, with as its asset store and log its
// logger, and serves it until the environment is closed.
func (e *env) serve(as Assets, log *slog.Logger, cfgs ...Config) *Service {
	e.t.Helper()
	svc, err := New(cfgs, Deps{DB: e.db, Engine: e.engine, Assets: as, Keys: e.keys, Logger: log})
	if err != nil {
		e.t.Fatal(err)
	}
	e.svc = svc
	ctx, cancel := context.WithCancel(context.Background())
	prev := e.cancel
	e.cancel = func() { cancel(); prev() }
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		if err := svc.Serve(ctx); err != nil {
			e.t.Errorf("hot folders: %v", err)
		}
	}()
	return svc
}

func (e *env) close() {
	if e.closed {
		return
	}
	e.closed = true
	e.cancel()
	e.wg.Wait()
	e.db.Close()
}

// needMerge skips a test of multi-bracket scenes in a build without the HDR merge.
func (e *env) needMerge() {
	if !e.pipe.Has(pipeline.StepMerge) {
		e.t.Skip("this build has no HDR merge step; multi-bracket scenes would fail")
	}
}

// folderConfig is a fast test configuration on fresh input and output folders.
func folderConfig(t testing.TB, name string) Config {
	root := t.TempDir()
	c := Config{
		Name: name, Input: filepath.Join(root, "in"), Output: filepath.Join(root, "out"),
		Grouping: GroupCount, Count: 1, Originals: OriginalsMove, Enabled: true, Sidecar: true,
		Settle: 150 * time.Millisecond, Rescan: time.Second,
	}
	for _, d := range []string{c.Input, c.Output} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func readPhoto(t testing.TB, rel ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// drop writes a file the way a careful tool does: a hidden temporary name, then a
// rename.
func drop(t testing.TB, dir, name string, data []byte) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".part")
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) status(name string) FolderStatus {
	for _, st := range e.svc.Status() {
		if st.Name == name {
			return st
		}
	}
	e.t.Fatalf("no folder %q in the status", name)
	return FolderStatus{}
}

// settledCount is the number of scenes done or failed in a folder.
func (e *env) settledCount(name string) int {
	st := e.status(name)
	return st.Done + st.Failed
}

// filesIn lists the regular files below dir (relative, sorted), skipping nothing.
func filesIn(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// outputs lists the results in dir: files that are not sidecars.
func outputs(t testing.TB, dir string) []string {
	var out []string
	for _, f := range filesIn(t, dir) {
		if !strings.HasSuffix(f, ".json") {
			out = append(out, f)
		}
	}
	return out
}

func readSidecar(t testing.TB, p string) Sidecar {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var sc Sidecar
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatalf("sidecar %s: %v", p, err)
	}
	return sc
}
