package hotfolder

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

// An input folder that disappears (an unplugged drive, a lost share) pauses the
// folder, with the reason in the status; when it returns, what was dropped on it is
// processed.
func TestVanishedInputPausesAndResumes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "share")
	e.start(c)
	data := readPhoto(t, photoBedroom...)
	drop(t, c.Input, "first.jpg", data)
	waitFor(t, 60*time.Second, "the first scene", func() bool { return e.settledCount("share") == 1 })

	away := c.Input + ".unplugged"
	if err := os.Rename(c.Input, away); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 10*time.Second, "the folder to pause", func() bool {
		st := e.status("share")
		return st.State == StatePaused && strings.Contains(st.Reason, "not reachable")
	})
	// Meanwhile, files are added on the other machine.
	drop(t, away, "second.jpg", data)
	drop(t, away, "third.jpg", readPhoto(t, photoKitchen...))
	time.Sleep(4 * c.Settle)
	if st := e.status("share"); st.State != StatePaused || st.Done != 1 {
		t.Fatalf("status while away: %+v", st)
	}
	if err := os.Rename(away, c.Input); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the dropped files after the return", func() bool { return e.settledCount("share") == 3 })
	st := e.status("share")
	if st.State != StateWatching || st.Reason != "" || st.Done != 3 {
		t.Fatalf("status after the return: %+v", st)
	}
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"first.jpg", "second.jpg", "third.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	var kinds []string
	for _, a := range st.Recent {
		kinds = append(kinds, a.Kind)
	}
	if !slices.Contains(kinds, "paused") || !slices.Contains(kinds, "resumed") {
		t.Fatalf("recent activity lacks the pause: %v", kinds)
	}
}

// An input folder missing at start is not an error: the folder waits for it.
func TestInputMissingAtStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "late")
	os.RemoveAll(c.Input)
	e.start(c)
	waitFor(t, 10*time.Second, "the paused state", func() bool { return e.status("late").State == StatePaused })
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, 60*time.Second, "the scene", func() bool { return e.settledCount("late") == 1 })
}

// Pausing from the window stops taking files (and is remembered across restarts);
// resuming takes what arrived meanwhile.
func TestPauseAndResumeFromTheWindow(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	e := newEnv(t, dataDir)
	c := folderConfig(t, "studio")
	svc := e.start(c)
	if err := svc.Pause("studio"); err != nil {
		t.Fatal(err)
	}
	if err := svc.Pause("nope"); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("pausing an unknown folder: %v", err)
	}
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	time.Sleep(6 * c.Settle)
	st := e.status("studio")
	if st.State != StatePaused || st.Reason != "paused from the window" || st.Done+st.Processing != 0 {
		t.Fatalf("status while paused: %+v", st)
	}
	e.close()

	e = newEnv(t, dataDir)
	svc = e.start(c)
	time.Sleep(4 * c.Settle)
	if st := e.status("studio"); st.State != StatePaused || st.Done != 0 {
		t.Fatalf("the pause was not remembered: %+v", st)
	}
	if err := svc.Resume("studio"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the scene after resuming", func() bool { return e.settledCount("studio") == 1 })
	if st := e.status("studio"); st.State != StateWatching {
		t.Fatalf("status after resuming: %+v", st)
	}
}

// A folder disabled in the configuration is listed but takes nothing.
func TestDisabledFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "off")
	c.Enabled = false
	svc := e.start(c)
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	time.Sleep(6 * c.Settle)
	if st := e.status("off"); st.State != StateDisabled || st.Pending+st.Done != 0 {
		t.Fatalf("status: %+v", st)
	}
	if err := svc.Resume("off"); core.KindOf(err) != core.KindConflict {
		t.Fatalf("resuming a disabled folder: %v", err)
	}
	if _, err := os.Stat(filepath.Join(c.Input, "room.jpg")); err != nil {
		t.Fatal("a disabled folder touched a file")
	}
}

// An output folder on a drive that is not there holds results back (the folder
// shows the error) until it returns; nothing is written elsewhere meanwhile.
func TestResultsWaitForUnreachableOutput(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	drive := filepath.Join(filepath.Dir(c.Output), "drive")
	c.Output = filepath.Join(drive, "out")
	e.start(c)
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, 60*time.Second, "the result to wait", func() bool {
		st := e.status("studio")
		return st.State == StateError && strings.Contains(st.LastError, "not reachable") && st.Processing == 1
	})
	if _, err := os.Stat(drive); !os.IsNotExist(err) {
		t.Fatal("the missing drive's folder was created")
	}
	if got := filesIn(t, c.Input); !slices.Equal(got, []string{"room.jpg"}) {
		t.Fatalf("the original moved before its result was written: %v", got)
	}
	os.Mkdir(drive, 0o755) // the drive is mounted again
	waitFor(t, 60*time.Second, "the result", func() bool { return e.settledCount("studio") == 1 })
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"room.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	if st := e.status("studio"); st.State != StateWatching || st.LastError != "" {
		t.Fatalf("status after the return: %+v", st)
	}
}
