package app

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/pipeline"
)

// The sweeper keeps the newest preview bases within its limit and clears files a
// crashed writer left.
func TestPreviewSweeperKeepsTheNewestWithinTheLimit(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	write := func(name string, size int, age time.Duration) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
		return p
	}
	oldest := write("a"+pipeline.PreviewExt, 400, 3*time.Hour)
	middle := write("b"+pipeline.PreviewExt, 400, 2*time.Hour)
	newest := write("c"+pipeline.PreviewExt, 400, time.Hour)
	stale := write(".tmp-123", 10, 2*time.Hour)
	fresh := write(".tmp-456", 10, time.Minute) // a writer may still be at it

	s := &previewSweeper{dir: dir, limit: 900, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	n, err := s.sweep()
	if err != nil || n != 1 {
		t.Fatalf("sweep removed %d, err %v; want 1", n, err)
	}
	for p, want := range map[string]bool{oldest: false, middle: true, newest: true, stale: false, fresh: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s present %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
	if n, _ := (&previewSweeper{dir: filepath.Join(dir, "none"), limit: 1}).sweep(); n != 0 {
		t.Fatal("a missing folder was swept")
	}
}
