package assets

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
	enginestore "github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/childproc"
	"github.com/porchlight/porchlight/internal/testphotos"
)

const crashDirEnv = "PORCHLIGHT_ASSETS_CRASH_DIR"

// TestCrashChild is the process TestCrashMidIngest kills: it queues two uploads and
// stops the first in processing, announcing it on stdout, until it is killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCrashMidIngest")
	}
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(db, dir, Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s.hookProcessing = func(ctx context.Context, id string) {
		fmt.Printf("PROCESSING %s\n", id)
		os.Stdout.Sync()
		select {} // hold here until the parent kills the process
	}
	for _, name := range []string{"houses_109_bedroom.jpg", "houses_111_bedroom.jpg"} {
		if _, err := s.Add(owner, name, "image/jpeg", bytes.NewReader(photo(t, "interiors", name))); err != nil {
			t.Fatal(err)
		}
	}
	s.Serve(context.Background())
}

// childStartTimeout bounds the wait for the child's announcement. The child exiting
// ends the wait at once; this only catches a child that hangs.
const childStartTimeout = 5 * time.Minute

// A process killed (SIGKILL, no cleanup) in the middle of an ingest leaves the asset in
// processing with its job queued; the next start finishes it, and the upload queued
// behind it, and sweeps nothing that is referenced.
func TestCrashMidIngest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	// The child reads the test photos: find them here and hand the folder down, so
	// that without them this test skips instead of its child.
	photos := testphotos.Dir(t)
	dir := t.TempDir()
	// -test.v: should the child end early, its output says why.
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir, testphotos.Env+"="+photos)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	cut := childproc.WaitLine(t, out, "PROCESSING ", childStartTimeout)
	cmd.Process.Kill()
	cmd.Wait()

	// What the crash left: one asset in processing, both jobs still queued.
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	queued, err := st.Queued()
	db.Close()
	if err != nil || queued != 2 {
		t.Fatalf("%d jobs queued after the crash, want 2", queued)
	}

	var changes []core.Asset
	changed := make(chan core.Asset, 16)
	e := openEnv(t, dir, Config{OnChange: func(a core.Asset) { changed <- a }}, func(s *Service) {
		// Before the workers start: the state exactly as the crash left it.
		a, err := s.Get(owner, cut)
		if err != nil || a.Status != core.AssetProcessing {
			t.Fatalf("cut asset after the crash: %s %v, want processing", a.Status, err)
		}
	})
	ready := 0
	deadline := time.After(60 * time.Second)
	for ready < 2 {
		select {
		case c := <-changed:
			changes = append(changes, c)
			if c.Status == core.AssetReady {
				ready++
			}
			if c.Status == core.AssetFailed {
				t.Fatalf("asset %s failed after restart: %s %s", c.ID, c.Code, c.Reason)
			}
		case <-deadline:
			t.Fatalf("after restart only %d assets became ready; changes %+v", ready, changes)
		}
	}
	got := e.wait(cut)
	if got.Width != 1024 || got.Status != core.AssetReady {
		t.Fatalf("cut asset after restart: %+v", got)
	}
	if queued, err = e.s.store.Queued(); err != nil || queued != 0 {
		t.Fatalf("%d jobs still queued", queued)
	}
	// Both uploads and both thumbnails are on disk, nothing else.
	if n := countBlobs(t, dir); n != 4 {
		t.Fatalf("%d blobs, want 4", n)
	}
}

// A panic while one asset is processed fails that asset only; the worker goes on.
func TestPanicFailsOnlyItsAsset(t *testing.T) {
	var victim atomic.Value
	victim.Store("")
	e := openEnv(t, t.TempDir(), Config{Workers: 1}, func(s *Service) {
		s.hookProcessing = func(ctx context.Context, id string) {
			if id == victim.Load().(string) {
				panic("decoder bug")
			}
		}
	})
	data := photo(t, "interiors", "houses_162_bedroom.jpg")
	a, _, _ := e.s.Declare(owner, "a.jpg", "image/jpeg")
	victim.Store(a.ID)
	e.s.Upload(a.ID, "image/jpeg", bytes.NewReader(data))
	e.s.Confirm(owner, a.ID)
	b, _ := e.s.Add(owner, "b.jpg", "image/jpeg", bytes.NewReader(data))
	if got := e.wait(a.ID); got.Status != core.AssetFailed || got.Code != core.CodeUnreadable || !strings.Contains(got.Reason, "decoder bug") {
		t.Fatalf("panicking asset: %+v", got)
	}
	if got := e.wait(b.ID); got.Status != core.AssetReady {
		t.Fatalf("asset after the panic: %+v", got)
	}
}
