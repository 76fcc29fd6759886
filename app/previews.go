package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/porchlight/porchlight/engine/pipeline"
)

// Preview bases are the window's: each order it can re-edit keeps its image before
// the sliders (about 17 MB at 2048 px) so that a slider move renders at once. They
// are a cache, rebuilt by processing a scene again, so the sweeper keeps the newest
// within a size cap and removes the rest.

// previewCap is the most disk the preview bases may take.
const previewCap = 4 << 30

// previewSweepEvery is how often the sweeper looks.
const previewSweepEvery = 10 * time.Minute

// previewDir is where the window's preview bases live.
func previewDir(dataDir string) string { return filepath.Join(dataDir, "previews") }

// previewSweeper keeps dir under limit bytes, the oldest bases going first.
type previewSweeper struct {
	dir   string
	limit int64
	log   *slog.Logger
}

// Serve sweeps at start and then every previewSweepEvery until ctx is done.
func (s *previewSweeper) Serve(ctx context.Context) error {
	t := time.NewTicker(previewSweepEvery)
	defer t.Stop()
	for {
		if n, err := s.sweep(); err != nil {
			s.log.Warn("sweep preview bases", "dir", s.dir, "err", err)
		} else if n > 0 {
			s.log.Info("removed old preview bases", "count", n)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// sweep removes the oldest bases until the rest fit the limit, and temporary files
// a crash left; it returns how many bases it removed.
func (s *previewSweeper) sweep() (int, error) {
	entries, err := os.ReadDir(s.dir)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	type base struct {
		path string
		size int64
		mod  time.Time
	}
	var bases []base
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		p := filepath.Join(s.dir, e.Name())
		if !strings.HasSuffix(e.Name(), pipeline.PreviewExt) {
			if time.Since(info.ModTime()) > time.Hour {
				os.Remove(p) // a temporary file no writer finished
			}
			continue
		}
		bases = append(bases, base{p, info.Size(), info.ModTime()})
		total += info.Size()
	}
	slices.SortFunc(bases, func(a, b base) int { return a.mod.Compare(b.mod) })
	n := 0
	for _, b := range bases {
		if total <= s.limit {
			break
		}
		if err := os.Remove(b.path); err != nil && !os.IsNotExist(err) {
			return n, err
		}
		total -= b.size
		n++
	}
	return n, nil
}
