package hotfolder

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/syncbuf"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// startLogged is start with a logger at the default (info) level into buf.
func (e *env) startLogged(buf *syncbuf.Buffer, cfgs ...Config) *Service {
	e.t.Helper()
	return e.serve(e.assets, slog.New(slog.NewTextHandler(buf, nil)), cfgs...)
}

// errorReport reads <name>.error.txt from the errors folder, "" while it is not there.
func errorReport(c Config, name string) string {
	b, err := os.ReadFile(filepath.Join(c.Input, DefaultErrors, name+".error.txt"))
	if err != nil {
		return ""
	}
	return string(b)
}

// A file that is not a photo and a JPEG cut short, dropped beside a good photo at
// the same folder level, go to the errors folder on their own, each with its
// report, logged as warnings, while the good photo is grouped and delivered: none
// of it waits for max_wait (two minutes).
func TestBadFilesGoToErrorsAtOnceAndOthersCarryOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupAuto, 0
	c.MaxWait = DefaultMaxWait
	var logs syncbuf.Buffer
	e.startLogged(&logs, c)

	kitchen := readPhoto(t, photoKitchen...)
	begin := time.Now()
	drop(t, c.Input, "living.jpg", readPhoto(t, photoBedroom...))
	drop(t, c.Input, "notes.jpg", []byte("shot list: living, kitchen, porch\n"))
	drop(t, c.Input, "porch.jpg", kitchen[:len(kitchen)/2])

	const bound = 30 * time.Second // far below max_wait
	waitFor(t, bound, "the bad files in the errors folder and the good photo delivered", func() bool {
		return errorReport(c, "notes") != "" && errorReport(c, "porch") != "" && e.settledCount("studio") == 3 &&
			slices.Contains(outputs(t, c.Output), "living.jpg")
	})
	t.Logf("settled in %v", time.Since(begin).Round(time.Millisecond))

	st := e.status("studio")
	if st.Done != 1 || st.Failed != 2 {
		t.Fatalf("status: %+v", st)
	}
	in := filesIn(t, c.Input)
	for _, want := range []string{"_errors/notes.jpg", "_errors/porch.jpg", "_done/living.jpg"} {
		if !slices.Contains(in, want) {
			t.Fatalf("input folder lacks %s: %v", want, in)
		}
	}
	// The text file is named for what it is, an unsupported format; the JPEG cut
	// short is a photo that cannot be read.
	if r := errorReport(c, "notes"); !strings.Contains(r, "notes.jpg") || !strings.Contains(r, "unsupported format") ||
		!strings.Contains(r, "Code: unsupported_format") || strings.Contains(r, "input_unreadable") {
		t.Fatalf("notes report:\n%s", r)
	}
	if r := errorReport(c, "porch"); !strings.Contains(r, "porch.jpg") || !strings.Contains(r, "cut short") || !strings.Contains(r, "Code: input_unreadable") {
		t.Fatalf("porch report:\n%s", r)
	}
	sc := readSidecar(t, filepath.Join(c.Output, "living.jpg.json"))
	if sc.Status != "completed" || len(sc.Inputs) != 1 {
		t.Fatalf("the good photo's sidecar: %+v", sc)
	}
	for _, n := range sc.Notes { // other steps may note things; a lost bracket is not one
		if strings.Contains(n, "bracket") {
			t.Fatalf("the good photo's sidecar warns of brackets: %q", n)
		}
	}
	log := logs.String()
	for _, name := range []string{"notes.jpg", "porch.jpg"} {
		found := false
		for _, line := range strings.Split(log, "\n") {
			found = found || (strings.Contains(line, "level=WARN") && strings.Contains(line, name))
		}
		if !found {
			t.Fatalf("no warning names %s:\n%s", name, log)
		}
	}
}

// windowFrames are room_window_e995's five frames (EXIF exposures 2 EV apart, 02
// the darkest): those in keep whole, those in cut truncated to half, the others
// replaced by a text file.
func windowFrames(t *testing.T, keep, cut []int) (names []string, data [][]byte) {
	t.Helper()
	names = testphotos.Brackets(t, "room_window_e995")
	if len(names) != 5 {
		t.Fatalf("room_window_e995 has %d frames", len(names))
	}
	for i, n := range names {
		b := readPhoto(t, "brackets", "room_window_e995", n)
		switch {
		case slices.Contains(keep, i):
		case slices.Contains(cut, i):
			b = b[:len(b)/2]
		default:
			b = []byte("this file was overwritten by a sync conflict\n")
		}
		data = append(data, b)
	}
	return names, data
}

func stemOfName(n string) string { return strings.TrimSuffix(n, filepath.Ext(n)) }

// Of a five-bracket set only the two darkest frames are whole: the normal ones are
// cut short and the brightest is a text file. The bad files go to the errors folder
// on their own, and the scene of the two dark frames fails too, naming them, instead
// of delivering a dark photo.
func TestDarkBracketsLeftFailTheScene(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupAuto, 0
	c.MaxWait = 3 * time.Second // so that nothing is held back for long, whatever the cause
	e.start(c)
	names, data := windowFrames(t, []int{0, 1}, []int{2, 3})
	for i, n := range names {
		drop(t, c.Input, n, data[i])
	}
	waitFor(t, 60*time.Second, "four scenes", func() bool { return e.settledCount("studio") == 4 })

	st := e.status("studio")
	if st.Done != 0 || st.Failed != 4 {
		t.Fatalf("status: %+v", st)
	}
	if got := outputs(t, c.Output); len(got) != 0 {
		t.Fatalf("a photo was delivered: %v", got)
	}
	for _, n := range names[2:] {
		if r := errorReport(c, stemOfName(n)); !strings.Contains(r, n) {
			t.Fatalf("%s has no report of its own:\n%s", n, r)
		}
	}
	// The scene is named after its first bracket in capture order (04, then 02).
	var dark []Sidecar
	for _, sc := range scenesByLabel(t, c) {
		if len(sc.Inputs) == 2 {
			dark = append(dark, sc)
		}
	}
	if len(dark) != 1 {
		t.Fatalf("%d scenes of two brackets", len(dark))
	}
	sc := dark[0]
	if sc.Status != "failed" || sc.ErrorCode != "brackets_missing" || sc.OrderID != "" ||
		!slices.Equal(inputPaths(sc), []string{names[1], names[0]}) {
		t.Fatalf("the dark scene's report: %+v", sc)
	}
	r := errorReport(c, sc.Scene)
	for _, want := range append([]string{names[0], names[1], "too dark"}, names[2:]...) {
		if !strings.Contains(r, want) {
			t.Fatalf("the dark scene's report does not say %q:\n%s", want, r)
		}
	}
	t.Logf("the dark scene's report:\n%s", r)
	in := filesIn(t, c.Input)
	for _, n := range names {
		if !slices.Contains(in, DefaultErrors+"/"+n) {
			t.Fatalf("%s is not in the errors folder: %v", n, in)
		}
	}
}

// Darkest, middle and brightest frames of the set are whole, the two between them
// cut short: the scene still spans the exposures, so it is delivered, with a
// warning in its sidecar naming the lost frames, and the cut files go to errors.
func TestSpanningBracketsLeftDeliverWithWarning(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.needMerge()
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupAuto, 0
	c.MaxWait = 3 * time.Second
	e.start(c)
	names, data := windowFrames(t, []int{0, 2, 4}, []int{1, 3})
	for i, n := range names {
		drop(t, c.Input, n, data[i])
	}
	waitFor(t, 90*time.Second, "the scene and the two cut files", func() bool { return e.settledCount("studio") == 3 })

	st := e.status("studio")
	if st.Done != 1 || st.Failed != 2 {
		t.Fatalf("status: %+v", st)
	}
	out := outputs(t, c.Output)
	if len(out) != 1 {
		t.Fatalf("outputs: %v", out)
	}
	sc := readSidecar(t, filepath.Join(c.Output, out[0]+".json"))
	if sc.Status != "completed" || len(sc.Inputs) != 3 {
		t.Fatalf("sidecar: %+v", sc)
	}
	warned := false
	for _, n := range sc.Notes {
		warned = warned || (strings.Contains(n, "3 of 5 brackets") && strings.Contains(n, names[1]) && strings.Contains(n, names[3]))
	}
	if !warned {
		t.Fatalf("no warning in the sidecar's notes: %q", sc.Notes)
	}
	for _, i := range []int{1, 3} {
		if r := errorReport(c, stemOfName(names[i])); !strings.Contains(r, "cut short") {
			t.Fatalf("%s report:\n%s", names[i], r)
		}
	}
	if len(st.Recent) == 0 || st.Recent[0].Kind != "completed" || !strings.Contains(st.Recent[0].Message, "3 of 5 brackets") {
		t.Fatalf("recent: %+v", st.Recent)
	}
}

// With count grouping a bad file keeps its place in the count: the five frames are
// one scene of the three whole ones, made with a warning, not a scene that takes
// the next drop's first frames.
func TestCountGroupingKeepsBadFilesPlace(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	e.needMerge()
	c := folderConfig(t, "studio")
	c.Count = 5
	c.Naming = "{name}"
	e.start(c)
	names, data := windowFrames(t, []int{0, 2, 4}, nil)
	for i, n := range names {
		drop(t, c.Input, n, data[i])
	}
	waitFor(t, 90*time.Second, "the scene and the two bad files", func() bool { return e.settledCount("studio") == 3 })
	st := e.status("studio")
	if st.Done != 1 || st.Failed != 2 {
		t.Fatalf("status: %+v", st)
	}
	sc := readSidecar(t, filepath.Join(c.Output, stemOfName(names[0])+".jpg.json"))
	if !slices.Equal(inputPaths(sc), []string{names[0], names[2], names[4]}) || len(sc.Notes) == 0 || !strings.Contains(sc.Notes[0], "3 of 5 brackets") {
		t.Fatalf("sidecar: %+v", sc)
	}
}

// A JPEG with data after its end marker (as a phone's motion photo appends its
// video) is whole: it is taken, not failed as cut short.
func TestJPEGWithTrailerIsTaken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	e.start(c)
	data := append(readPhoto(t, photoBedroom...), make([]byte, 64<<10)...)
	drop(t, c.Input, "motion.jpg", data)
	waitFor(t, 30*time.Second, "the scene", func() bool { return e.settledCount("studio") == 1 })
	if st := e.status("studio"); st.Done != 1 {
		t.Fatalf("status: %+v", st)
	}
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"motion.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
}
