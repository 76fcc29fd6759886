package hotfolder

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func write(s string) func(io.Writer) error {
	return func(w io.Writer) error { _, err := io.WriteString(w, s); return err }
}

func TestPlaceNeverOverwritesAndLeavesNoTemp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.jpg"), []byte("old"), 0o644)
	var intents []string
	name, err := place(dir, "a", ".jpg", tempName("s1", "output"), func(n string) error { intents = append(intents, n); return nil }, write("new"))
	if err != nil || name != "a-2.jpg" {
		t.Fatalf("place: %q %v", name, err)
	}
	if !slices.Equal(intents, []string{"a-2.jpg"}) {
		t.Fatalf("intents %v", intents)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.jpg")); string(b) != "old" {
		t.Fatal("overwritten")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a-2.jpg")); string(b) != "new" {
		t.Fatal("content")
	}
	if got := filesIn(t, dir); !slices.Equal(got, []string{"a-2.jpg", "a.jpg"}) {
		t.Fatalf("left behind: %v", got)
	}
	// A failing write leaves nothing.
	if _, err := place(dir, "b", ".jpg", tempName("s2", "output"), nil, func(io.Writer) error { return errors.New("disk full") }); err == nil {
		t.Fatal("a failed write was placed")
	}
	if got := filesIn(t, dir); len(got) != 2 {
		t.Fatalf("a failed write left %v", got)
	}
}

// An interrupted placement is recognised from the journaled name and the temporary
// file: linked (both present, one file), renamed (temporary gone), or not done.
func TestPlacedAfterInterruption(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	temp := tempName("s1", "output")
	tmp := filepath.Join(dir, temp)

	// Crash after the link, before the journal noted it: both names, same file.
	os.WriteFile(tmp, []byte("x"), 0o644)
	os.Link(tmp, filepath.Join(dir, "a.jpg"))
	if !placed(dir, temp, "a.jpg") {
		t.Fatal("a linked file was not recognised")
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("the temporary file was kept")
	}
	// Crash after the intent, before the link: the name is someone else's or free.
	os.WriteFile(tmp, []byte("x"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.jpg"), []byte("foreign"), 0o644)
	if placed(dir, temp, "b.jpg") || placed(dir, temp, "c.jpg") || placed(dir, temp, "") {
		t.Fatal("an unfinished placement was taken as done")
	}
}

func TestMoveFileKeepsBothOnCollisionAndRecoversAHalfMove(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	in, done := filepath.Join(root, "in"), filepath.Join(root, "done")
	os.MkdirAll(filepath.Join(in, "sub"), 0o755)
	os.MkdirAll(filepath.Join(done, "sub"), 0o755)
	os.WriteFile(filepath.Join(done, "sub", "a.jpg"), []byte("earlier"), 0o644)
	src := filepath.Join(in, "sub", "a.jpg")
	os.WriteFile(src, []byte("now"), 0o644)
	dst, err := moveFile(src, done, "sub/a.jpg", idOf(t, src))
	if err != nil || dst != filepath.Join(done, "sub", "a-2.jpg") {
		t.Fatalf("move: %q %v", dst, err)
	}
	if b, _ := os.ReadFile(filepath.Join(done, "sub", "a.jpg")); string(b) != "earlier" {
		t.Fatal("the earlier file was overwritten")
	}
	// A move interrupted after the link and before the unlink is finished, not
	// repeated under a third name.
	src2 := filepath.Join(in, "b.jpg")
	os.WriteFile(src2, []byte("b"), 0o644)
	os.Link(src2, filepath.Join(done, "b.jpg"))
	dst, err = moveFile(src2, done, "b.jpg", idOf(t, src2))
	if err != nil || dst != filepath.Join(done, "b.jpg") {
		t.Fatalf("half move: %q %v", dst, err)
	}
	got := filesIn(t, root)
	if !slices.Equal(got, []string{"done/b.jpg", "done/sub/a-2.jpg", "done/sub/a.jpg"}) {
		t.Fatalf("after the moves: %v", got)
	}
}

func TestWriteOwnedReplacesOnlyItsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := filepath.Join(dir, "a.jpg.json")
	if err := writeOwned(p, write("one")); err != nil {
		t.Fatal(err)
	}
	if err := writeOwned(p, write("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("content %q", b)
	}
	for _, f := range filesIn(t, dir) {
		if strings.HasPrefix(filepath.Base(f), ".") {
			t.Fatalf("temporary file left: %s", f)
		}
	}
}
