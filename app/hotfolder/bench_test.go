package hotfolder

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// BenchmarkIdleRescan is the cost of the periodic rescan of a folder holding 1000
// files that were already imported (originals left in place).
func BenchmarkIdleRescan(b *testing.B) {
	dir := b.TempDir()
	f := &folder{
		cfg:     Config{Input: dir, Done: filepath.Join(dir, DefaultDone), Errors: filepath.Join(dir, DefaultErrors), Output: filepath.Join(dir, "out"), Settle: time.Second, Rescan: time.Minute},
		files:   map[string]*journal.FileEntry{},
		active:  map[string]*journal.Scene{},
		tracked: map[string]*tracked{}, lastChange: map[string]time.Time{}, firstWait: map[string]time.Time{},
	}
	for i := range 1000 {
		name := fmt.Sprintf("IMG_%04d.jpg", i)
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x"), 0o644)
		st, _ := os.Stat(p)
		f.files[name] = &journal.FileEntry{Size: st.Size(), MtimeNs: st.ModTime().UnixNano(), Scene: "done-scene"}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		list, _, err := f.list()
		if err != nil {
			b.Fatal(err)
		}
		f.scan(time.Now(), list)
	}
}

// BenchmarkBusyCheck is the lock and /proc check made once per batch of newly
// settled files.
func BenchmarkBusyCheck(b *testing.B) {
	dir := b.TempDir()
	var paths []string
	for i := range 20 {
		p := filepath.Join(dir, fmt.Sprintf("IMG_%04d.jpg", i))
		os.WriteFile(p, []byte("x"), 0o644)
		paths = append(paths, p)
	}
	b.ReportAllocs()
	for b.Loop() {
		if busy := busyFiles(paths); len(busy) != 0 {
			b.Fatal(busy)
		}
	}
}
