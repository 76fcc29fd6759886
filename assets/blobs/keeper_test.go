package blobs_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/store"
	enginestore "github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/childproc"
)

// keeper is a Keeper on a real database in dir, counted in the assets store.
type keeper struct {
	*blobs.Keeper
	st  *store.Bolt
	dir string
}

func openKeeper(t testing.TB, dir string) *keeper {
	t.Helper()
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	st, err := store.Open(db)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := blobs.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	return &keeper{Keeper: blobs.NewKeeper(bs, st), st: st, dir: dir}
}

// write starts a blob holding data.
func (k *keeper) write(t testing.TB, data string) *blobs.Writer {
	t.Helper()
	w, err := k.Create(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	return w
}

// commitRef commits data with one reference to it.
func (k *keeper) commitRef(t testing.TB, data string) blobs.Blob {
	t.Helper()
	b, err := k.Commit(k.write(t, data), func(b blobs.Blob, c *blobs.Change) error {
		return k.st.Update(func(tx store.Tx) error { return c.Ref(tx, b.Sum) })
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// unref drops one reference to sum.
func (k *keeper) unref(t testing.TB, sum string) {
	t.Helper()
	err := k.Release(func(c *blobs.Change) error {
		return k.st.Update(func(tx store.Tx) error { return c.Unref(tx, sum) })
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (k *keeper) refs(t testing.TB, sum string) uint64 {
	t.Helper()
	n, err := k.st.Refs(sum)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (k *keeper) temps(t testing.TB) int {
	t.Helper()
	tmps, err := os.ReadDir(filepath.Join(k.Dir(), "tmp"))
	if err != nil {
		t.Fatal(err)
	}
	return len(tmps)
}

// A blob stays on disk while anything references it and goes with its last
// reference; a release whose transaction fails changes nothing.
func TestCommitAndRelease(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	a := k.commitRef(t, "shared")
	if b := k.commitRef(t, "shared"); b != a {
		t.Fatalf("equal content, other blob: %+v %+v", a, b)
	}
	if n := k.refs(t, a.Sum); n != 2 || !k.Exists(a.Sum) || k.temps(t) != 0 {
		t.Fatalf("after two commits: %d references, exists %v, %d temp files", n, k.Exists(a.Sum), k.temps(t))
	}
	failed := errors.New("record refused")
	err := k.Release(func(c *blobs.Change) error {
		return k.st.Update(func(tx store.Tx) error {
			if err := c.Unref(tx, a.Sum); err != nil {
				return err
			}
			if err := c.Unref(tx, a.Sum); err != nil {
				return err
			}
			return failed // rolls both back
		})
	})
	if !errors.Is(err, failed) || k.refs(t, a.Sum) != 2 || !k.Exists(a.Sum) {
		t.Fatalf("failed release: %v, %d references, exists %v", err, k.refs(t, a.Sum), k.Exists(a.Sum))
	}
	k.unref(t, a.Sum)
	if n := k.refs(t, a.Sum); n != 1 || !k.Exists(a.Sum) {
		t.Fatalf("after one release: %d references, exists %v", n, k.Exists(a.Sum))
	}
	k.unref(t, a.Sum)
	if n := k.refs(t, a.Sum); n != 0 || k.Exists(a.Sum) {
		t.Fatalf("after the last release: %d references, exists %v", n, k.Exists(a.Sum))
	}
	if set, err := k.st.Referenced(); err != nil || len(set) != 0 {
		t.Fatalf("referenced after the last release: %v %v", set, err)
	}
}

// A committed blob that its transaction did not reference (the record was gone, the
// transaction failed) is removed, unless something else references the same bytes.
func TestCommitUnreferencedIsRemoved(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	b, err := k.Commit(k.write(t, "nobody's"), func(blobs.Blob, *blobs.Change) error { return nil })
	if err != nil || k.Exists(b.Sum) {
		t.Fatalf("untaken blob: %v, exists %v", err, k.Exists(b.Sum))
	}

	failed := errors.New("transaction failed")
	var sum string
	_, err = k.Commit(k.write(t, "rolled back"), func(b blobs.Blob, c *blobs.Change) error {
		sum = b.Sum
		return k.st.Update(func(tx store.Tx) error {
			if err := c.Ref(tx, b.Sum); err != nil {
				return err
			}
			return failed
		})
	})
	if !errors.Is(err, failed) || k.Exists(sum) || k.refs(t, sum) != 0 {
		t.Fatalf("rolled back commit: %v, exists %v, %d references", err, k.Exists(sum), k.refs(t, sum))
	}

	kept := k.commitRef(t, "twice")
	if _, err := k.Commit(k.write(t, "twice"), func(blobs.Blob, *blobs.Change) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if !k.Exists(kept.Sum) {
		t.Fatal("a referenced blob was removed when an equal commit went untaken")
	}
	if k.temps(t) != 0 {
		t.Fatalf("%d temp files left", k.temps(t))
	}
}

// One transaction moves a record from one blob to another: the old one goes once the
// transaction commits.
func TestCommitReplacesReference(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	old := k.commitRef(t, "first bytes")
	b, err := k.Commit(k.write(t, "second bytes"), func(b blobs.Blob, c *blobs.Change) error {
		return k.st.Update(func(tx store.Tx) error {
			if err := c.Ref(tx, b.Sum); err != nil {
				return err
			}
			return c.Unref(tx, old.Sum)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if k.Exists(old.Sum) || !k.Exists(b.Sum) || k.refs(t, b.Sum) != 1 || k.refs(t, old.Sum) != 0 {
		t.Fatalf("old exists %v, new exists %v", k.Exists(old.Sum), k.Exists(b.Sum))
	}
	// Unref of the same bytes it references keeps them.
	_, err = k.Commit(k.write(t, "second bytes"), func(b blobs.Blob, c *blobs.Change) error {
		return k.st.Update(func(tx store.Tx) error {
			if err := c.Ref(tx, b.Sum); err != nil {
				return err
			}
			return c.Unref(tx, b.Sum)
		})
	})
	if err != nil || !k.Exists(b.Sum) || k.refs(t, b.Sum) != 1 {
		t.Fatalf("re-upload of the same bytes: %v, exists %v, %d references", err, k.Exists(b.Sum), k.refs(t, b.Sum))
	}
}

// Bytes that could not be stored never reach the caller's transaction and leave no
// temporary file.
func TestCommitWriteError(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	w, err := k.Create(4)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("too long")); err == nil {
		t.Fatal("write past the limit accepted")
	}
	called := false
	_, err = k.Commit(w, func(blobs.Blob, *blobs.Change) error { called = true; return nil })
	var we *blobs.WriteError
	var tl *blobs.TooLargeError
	if !errors.As(err, &we) || !errors.As(err, &tl) || called {
		t.Fatalf("commit of a failed writer: %v (record called %v)", err, called)
	}
	if k.temps(t) != 0 {
		t.Fatalf("%d temp files left", k.temps(t))
	}
}

// Commits and releases of the same bytes in parallel: a blob that a caller holds a
// reference to is always on disk, and the last release removes it.
func TestCommitRacesRelease(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	var wg sync.WaitGroup
	var sum string
	var mu sync.Mutex
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				w, err := k.Create(0)
				if err != nil {
					t.Error(err)
					return
				}
				w.Write([]byte("contended"))
				b, err := k.Commit(w, func(b blobs.Blob, c *blobs.Change) error {
					return k.st.Update(func(tx store.Tx) error { return c.Ref(tx, b.Sum) })
				})
				if err != nil {
					t.Error(err)
					return
				}
				if !k.Exists(b.Sum) {
					t.Error("a referenced blob is missing")
				}
				mu.Lock()
				sum = b.Sum
				mu.Unlock()
				if err := k.Release(func(c *blobs.Change) error {
					return k.st.Update(func(tx store.Tx) error { return c.Unref(tx, b.Sum) })
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if k.Exists(sum) || k.refs(t, sum) != 0 || k.temps(t) != 0 {
		t.Fatalf("after all releases: exists %v, %d references, %d temp files", k.Exists(sum), k.refs(t, sum), k.temps(t))
	}
}

// SweepUnreferenced removes temporary files and blobs nothing references, and keeps
// the rest.
func TestSweepUnreferenced(t *testing.T) {
	k := openKeeper(t, t.TempDir())
	kept := k.commitRef(t, "kept")
	orphan, err := k.Put(strings.NewReader("orphan"), 0)
	if err != nil {
		t.Fatal(err)
	}
	k.write(t, "half") // a temp file left by a crash mid-upload
	n, err := k.SweepUnreferenced()
	if err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2 (orphan blob and temp file)", n, err)
	}
	if !k.Exists(kept.Sum) || k.Exists(orphan.Sum) || k.temps(t) != 0 {
		t.Fatalf("after sweep: kept=%v orphan=%v temps=%d", k.Exists(kept.Sum), k.Exists(orphan.Sum), k.temps(t))
	}
}

const crashDirEnv = "PORCHLIGHT_BLOBS_CRASH_DIR"

// TestCommitCrashChild is the process TestCommitCrash kills: it commits a referenced
// blob, leaves a second written but not committed, and stops a third between putting
// it in place and the transaction that would reference it.
func TestCommitCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("runs only as the child of TestCommitCrash")
	}
	k := openKeeper(t, dir)
	kept := k.commitRef(t, "committed before the crash")
	half := k.write(t, "written, not committed")
	if err := half.Close(); err != nil {
		t.Fatal(err)
	}
	k.Commit(k.write(t, "placed, not referenced"), func(b blobs.Blob, c *blobs.Change) error {
		fmt.Printf("PLACED %s %s\n", kept.Sum, b.Sum)
		os.Stdout.Sync()
		select {} // hold here until the parent kills the process
	})
}

// A process killed (SIGKILL) between writing blobs and referencing them leaves no
// reference to a missing blob; the sweep at the next start removes its temporary
// file and the blob no one references.
func TestCommitCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCommitCrashChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	sums := strings.Fields(childproc.WaitLine(t, out, "PLACED ", time.Minute))
	cmd.Process.Kill()
	cmd.Wait()
	if len(sums) != 2 {
		t.Fatalf("child announced %v", sums)
	}
	kept, placed := sums[0], sums[1]

	k := openKeeper(t, dir)
	if !k.Exists(placed) || k.temps(t) != 1 {
		t.Fatalf("the crash left placed=%v and %d temp files, want the placed blob and 1", k.Exists(placed), k.temps(t))
	}
	if n, err := k.SweepUnreferenced(); err != nil || n != 2 {
		t.Fatalf("swept %d (%v), want 2 (the placed blob and the temp file)", n, err)
	}
	set, err := k.st.Referenced()
	if err != nil {
		t.Fatal(err)
	}
	for sum := range set {
		if !k.Exists(sum) {
			t.Errorf("blob %s is referenced but missing", sum)
		}
	}
	if !set[kept] || len(set) != 1 {
		t.Errorf("referenced after the crash: %v, want only %s", set, kept)
	}
	if k.Exists(placed) || k.temps(t) != 0 {
		t.Errorf("after the sweep: placed=%v, %d temp files", k.Exists(placed), k.temps(t))
	}
}
