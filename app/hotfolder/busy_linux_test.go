//go:build linux

package hotfolder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func TestBusyFilesSeesWritersAndLocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "x.jpg")
	w, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("partial"))
	if r := busyFiles([]string{p})[p]; !strings.Contains(r, "open for writing") {
		w.Close()
		t.Fatalf("a file open for writing is not busy: %q", r)
	}
	w.Close()
	if r := busyFiles([]string{p})[p]; r != "" {
		t.Fatalf("a closed file is busy: %q", r)
	}
	// A reader holding an exclusive lock (as some copy tools do) also keeps it.
	l, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := unix.Flock(int(l.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if r := busyFiles([]string{p})[p]; !strings.Contains(r, "locked") {
		t.Fatalf("a locked file is not busy: %q", r)
	}
	unix.Flock(int(l.Fd()), unix.LOCK_UN)
	if r := busyFiles([]string{p})[p]; r != "" {
		t.Fatalf("an unlocked file is busy: %q", r)
	}
}
