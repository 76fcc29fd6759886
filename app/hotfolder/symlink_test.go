package hotfolder

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/syncbuf"
)

// linkedConfig is folderConfig with the input given as a symbolic link (root/in) to
// the folder real (created when mkReal).
func linkedConfig(t *testing.T, name, real string, mkReal bool) Config {
	t.Helper()
	c := folderConfig(t, name)
	if err := os.Remove(c.Input); err != nil {
		t.Fatal(err)
	}
	if mkReal {
		if err := os.MkdirAll(real, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(real, c.Input); err != nil {
		t.Fatal(err)
	}
	return c
}

// retarget points the link at another folder at once, as `ln -sfn` does.
func retarget(t *testing.T, link, target string) {
	t.Helper()
	tmp := link + ".new"
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, link); err != nil {
		t.Fatal(err)
	}
}

// An input folder that is a symbolic link to the real folder (on another drive,
// say) is watched: what is dropped into the real folder is delivered, and its
// originals go to the done folder below the link.
func TestInputFolderThatIsALinkIsWatched(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	real := filepath.Join(t.TempDir(), "data", "in")
	c := linkedConfig(t, "linked", real, true)
	e.start(c)

	data := readPhoto(t, photoBedroom...)
	drop(t, real, "living.jpg", data)
	drop(t, c.Input, "sub/kitchen.jpg", readPhoto(t, photoKitchen...)) // through the link
	waitFor(t, 30*time.Second, "both scenes", func() bool { return e.settledCount("linked") == 2 })

	st := e.status("linked")
	if st.Done != 2 || st.Failed != 0 || st.Input != c.Input || st.State != StateWatching {
		t.Fatalf("status: %+v", st)
	}
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"kitchen.jpg", "living.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	if got := filesIn(t, real); !slices.Equal(got, []string{"_done/living.jpg", "_done/sub/kitchen.jpg"}) {
		t.Fatalf("real input folder after delivery: %v", got)
	}
	if fi, err := os.Lstat(c.Input); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link itself was touched: %v, %v", fi, err)
	}
}

// A link whose target is missing pauses the folder, saying so in the status and the
// log; once the target exists what is dropped there is delivered. A link pointed at
// another folder is followed at the next scan.
func TestDanglingAndRetargetedInputLink(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	base := t.TempDir()
	first, second := filepath.Join(base, "first"), filepath.Join(base, "second")
	c := linkedConfig(t, "mount", first, false)
	logs := &syncbuf.Buffer{}
	e.startLogged(logs, c)

	waitFor(t, 10*time.Second, "the folder to pause", func() bool {
		st := e.status("mount")
		return st.State == StatePaused && strings.Contains(st.Reason, "symbolic link to "+first) &&
			strings.Contains(st.Reason, "does not exist")
	})
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "symbolic link to "+first) {
		t.Fatalf("the log does not say the link is dangling:\n%s", l)
	}

	drop(t, first, "room.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, 30*time.Second, "the scene in the link's target", func() bool { return e.settledCount("mount") == 1 })
	if st := e.status("mount"); st.State != StateWatching || st.Reason != "" {
		t.Fatalf("status once the target exists: %+v", st)
	}

	drop(t, second, "kitchen.jpg", readPhoto(t, photoKitchen...))
	retarget(t, c.Input, second)
	waitFor(t, 30*time.Second, "the scene in the new target", func() bool { return e.settledCount("mount") == 2 })
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"kitchen.jpg", "room.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	if got := filesIn(t, second); !slices.Equal(got, []string{"_done/kitchen.jpg"}) {
		t.Fatalf("new target after delivery: %v", got)
	}
	if got := filesIn(t, first); !slices.Equal(got, []string{"_done/room.jpg"}) {
		t.Fatalf("old target: %v", got)
	}
}

// spyAssets is the asset store, keeping what every Add read, so that a test can
// tell whether a file's bytes were ever read.
type spyAssets struct {
	Assets
	mu   sync.Mutex
	read [][]byte
}

func (s *spyAssets) Add(owner, filename, contentType string, body io.Reader) (core.Asset, error) {
	var buf bytes.Buffer
	a, err := s.Assets.Add(owner, filename, contentType, io.TeeReader(body, &buf))
	s.mu.Lock()
	s.read = append(s.read, buf.Bytes())
	s.mu.Unlock()
	return a, err
}

// saw reports whether any Add read data.
func (s *spyAssets) saw(data []byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.read {
		if bytes.Equal(r, data) {
			return true
		}
	}
	return false
}

// startSpied is startLogged with the asset store watched.
func (e *env) startSpied(logs *syncbuf.Buffer, cfgs ...Config) *spyAssets {
	e.t.Helper()
	spy := &spyAssets{Assets: e.assets}
	e.serve(spy, slog.New(slog.NewTextHandler(logs, nil)), cfgs...)
	return spy
}

// secretLike writes, outside the input folder, a private file (a key, another
// user's file) with the size and modification time of the file at p, as someone
// who swaps p for a link to it would pick, and returns its path and bytes.
func secretLike(t *testing.T, p string) (string, []byte) {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	data := []byte("-----BEGIN OPENSSH PRIVATE KEY-----\n")
	data = append(data, bytes.Repeat([]byte("k"), int(st.Size())-len(data))...)
	secret := filepath.Join(t.TempDir(), "id_rsa")
	if err := os.WriteFile(secret, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(secret, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	return secret, data
}

// swapForLink replaces the file at p by a symbolic link to target at once.
func swapForLink(t *testing.T, p, target string) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(p), ".swap")
	if err := os.Symlink(target, tmp); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// stillLink fails unless p is still a symbolic link to target, whose bytes are
// still data.
func stillLink(t *testing.T, p, target string, data []byte) {
	t.Helper()
	if got, err := os.Readlink(p); err != nil || got != target {
		t.Errorf("the link %s was touched: %q, %v", p, got, err)
	}
	if got, err := os.ReadFile(target); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the link's target %s was touched: %v", target, err)
	}
}

// A settled photo swapped for a link between the listing and the reading (the
// hashing and the checks of a scan) is not read through the link.
func TestFileSwappedForALinkBeforeItIsReadIsNotRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	svc, err := New([]Config{c}, Deps{DB: e.db, Engine: e.engine, Assets: e.assets, Keys: e.keys, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	f := svc.byName["studio"]
	p := filepath.Join(c.Input, "room.jpg")
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	secret, data := secretLike(t, p)

	list, _, err := f.list()
	if err != nil || len(list) != 1 {
		t.Fatalf("listing: %v, %v", list, err)
	}
	now := time.Now()
	f.scan(now, list) // seen: it settles from now
	swapForLink(t, p, secret)
	f.scan(now.Add(c.Settle), list) // settled as listed; read now

	f.mu.Lock()
	got := f.files["room.jpg"]
	f.mu.Unlock()
	if got != nil {
		sum := sha256.Sum256(data)
		t.Fatalf("the file was read through the link (its secret's sha256 is %x): %+v", sum, got)
	}
	stillLink(t, p, secret, data)
}

// A photo that settled and was grouped, then replaced by a link before it was
// imported, is not read: its scene fails into the errors folder with a report
// saying so, and the link is left where it is, neither moved nor followed.
func TestSettledPhotoReplacedByALinkFailsItsSceneUnread(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	ownedScene(t, e, c, "room.jpg")
	p := filepath.Join(c.Input, "room.jpg")
	secret, data := secretLike(t, p)
	swapForLink(t, p, secret)

	logs := &syncbuf.Buffer{}
	spy := e.startSpied(logs, c)
	waitFor(t, 30*time.Second, "the scene to fail", func() bool { return e.status("studio").Failed == 1 })

	if spy.saw(data) {
		t.Error("the link's target was read into the asset store")
	}
	report := errorReport(c, "room")
	t.Log("\n" + report)
	for _, want := range []string{"room.jpg", "symbolic link", "not read", "input_replaced"} {
		if !strings.Contains(report, want) {
			t.Errorf("the error report lacks %q:\n%s", want, report)
		}
	}
	if got := filesIn(t, filepath.Join(c.Input, DefaultErrors)); !slices.Equal(got, []string{"room.error.json", "room.error.txt"}) {
		t.Errorf("errors folder: %v", got)
	}
	stillLink(t, p, secret, data)
	if l := logs.String(); !strings.Contains(l, "level=WARN") || !strings.Contains(l, "symbolic link") {
		t.Errorf("the log does not tell:\n%s", l)
	}
}

// Moving originals acts only on the file that was read: a failed scene's input
// replaced by a link (with the size and time it had) is not moved to the errors
// folder, nor is what the link leads to.
func TestOriginalsMoveOnlyTheFileThatWasRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	failedScene(t, e, c, "room.jpg")
	p := filepath.Join(c.Input, "room.jpg")
	secret, data := secretLike(t, p)
	swapForLink(t, p, secret)

	e.start(c)
	waitFor(t, 30*time.Second, "the failed scene", func() bool { return e.status("studio").Failed == 1 })
	if got := filesIn(t, filepath.Join(c.Input, DefaultErrors)); !slices.Equal(got, []string{"room.error.json", "room.error.txt"}) {
		t.Errorf("errors folder: %v", got)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Join(c.Input, DefaultErrors), "room.jpg")); err == nil {
		t.Error("the link was moved into the errors folder")
	}
	stillLink(t, p, secret, data)
}

// Links inside the input folder are never followed: a linked folder is not walked
// and a linked photo is not taken, each logged once; the photos beside them are.
func TestLinksInsideTheInputAreNeverFollowed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	outside := t.TempDir()
	kitchen := readPhoto(t, photoKitchen...)
	drop(t, outside, "shoot/kitchen.jpg", kitchen)
	drop(t, outside, "private.jpg", kitchen)
	for link, target := range map[string]string{"shoot": "shoot", "private.jpg": "private.jpg"} {
		if err := os.Symlink(filepath.Join(outside, target), filepath.Join(c.Input, link)); err != nil {
			t.Fatal(err)
		}
	}
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))

	logs := &syncbuf.Buffer{}
	spy := e.startSpied(logs, c)
	waitFor(t, 30*time.Second, "the photo beside the links", func() bool { return e.settledCount("studio") == 1 })
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"room.jpg"}) {
		t.Errorf("outputs: %v", got)
	}
	if spy.saw(kitchen) {
		t.Error("a photo behind a link was imported")
	}
	if got := filesIn(t, outside); !slices.Equal(got, []string{"private.jpg", "shoot/kitchen.jpg"}) {
		t.Errorf("the links' targets were touched: %v", got)
	}
	for _, name := range []string{"shoot", "private.jpg"} {
		if fi, err := os.Lstat(filepath.Join(c.Input, name)); err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("the link %s was touched: %v", name, err)
		}
	}
	l := logs.String()
	for _, name := range []string{"shoot", "private.jpg"} {
		if strings.Count(l, "file="+name) != 1 {
			t.Errorf("the link %s is not logged once:\n%s", name, l)
		}
	}
}

// idOf is the identity of the file at p, as a listing records it.
func idOf(t *testing.T, p string) journal.FileID {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	return identity(fi)
}

// openTest opens an input file as a scan does, closed at the end of the test.
func openTest(t *testing.T, p string) *os.File {
	t.Helper()
	fh, _, err := openInput(p, journal.FileID{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fh.Close() })
	return fh
}

// moveFile moves only the file it was told of: not a link in its place, not
// another file, and on another file system it copies the file it opened.
func TestMoveFileMovesOnlyTheFileThatWasRead(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	in, done := filepath.Join(root, "in"), filepath.Join(root, "done")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(root, "secret")
	os.WriteFile(secret, []byte("private"), 0o600)

	p := filepath.Join(in, "a.jpg")
	os.WriteFile(p, []byte("photo"), 0o644)
	read := idOf(t, p)
	swapForLink(t, p, secret)
	if _, err := moveFile(p, done, "a.jpg", read); !isReplaced(err) {
		t.Errorf("a link in place of the file was moved: %v", err)
	}
	stillLink(t, p, secret, []byte("private"))

	q := filepath.Join(in, "b.jpg")
	os.WriteFile(q, []byte("photo"), 0o644)
	read = idOf(t, q)
	os.Rename(q, filepath.Join(root, "kept")) // kept, so that its inode is not reused
	os.WriteFile(q, []byte("other"), 0o644)
	if _, err := moveFile(q, done, "b.jpg", read); !errors.Is(err, errChanged) {
		t.Errorf("another file under the name was moved: %v", err)
	}
	if got := filesIn(t, done); len(got) != 0 {
		t.Errorf("done folder: %v", got)
	}

	// Across file systems the bytes are copied from the file checked.
	shm, err := os.MkdirTemp("/dev/shm", "hotfolder-move-")
	if err != nil {
		t.Skipf("no second file system to move to: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	if st, err := os.Stat(shm); err != nil || identity(st).Dev == idOf(t, in).Dev {
		t.Skip("/dev/shm is on the same file system")
	}
	os.WriteFile(q, []byte("photo"), 0o644)
	dst, err := moveFile(q, shm, "b.jpg", idOf(t, q))
	if b, _ := os.ReadFile(dst); err != nil || string(b) != "photo" {
		t.Fatalf("move across file systems: %q %q %v", dst, b, err)
	}
	if _, err := os.Lstat(q); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the moved file is still in the input: %v", err)
	}
	os.WriteFile(q, []byte("photo"), 0o644)
	read = idOf(t, q)
	swapForLink(t, q, secret)
	if _, err := moveFile(q, shm, "c.jpg", read); !isReplaced(err) {
		t.Errorf("a link was moved across file systems: %v", err)
	}
	if got := filesIn(t, shm); !slices.Equal(got, []string{"b.jpg"}) {
		t.Errorf("second file system: %v", got)
	}
	stillLink(t, q, secret, []byte("private"))
}

// A failed scene's input that has the bytes, size and time that were read but
// another inode (a drive mounted again, a copy restored with its times) is still
// moved to the errors folder, not left to be imported again.
func TestOriginalWithAnotherInodeButTheSameBytesIsMoved(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	s := failedScene(t, e, c, "room.jpg")
	p := filepath.Join(c.Input, "room.jpg")
	data, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if err := os.Rename(p, filepath.Join(t.TempDir(), "kept")); err != nil { // its inode is not reused
		t.Fatal(err)
	}
	drop(t, c.Input, "room.jpg", data)
	os.Chtimes(p, st.ModTime(), st.ModTime())
	if idOf(t, p) == s.Files[0].FileID {
		t.Fatal("the copy has the same inode")
	}

	e.start(c)
	waitFor(t, 30*time.Second, "the failed scene", func() bool { return e.status("studio").Failed == 1 })
	want := []string{"_errors/room.error.json", "_errors/room.error.txt", "_errors/room.jpg"}
	if got := filesIn(t, c.Input); !slices.Equal(got, want) {
		t.Errorf("input folder: %v, want %v", got, want)
	}
}
