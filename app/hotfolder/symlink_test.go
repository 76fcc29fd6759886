package hotfolder

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
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
	logs := &logBuffer{}
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
