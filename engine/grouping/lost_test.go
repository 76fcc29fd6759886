package grouping

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// windowSet copies room_window_e995 (five JPEGs with EXIF, 2 EV apart, 02 the
// darkest) into a folder: the frames in keep whole, those in cut truncated to half,
// the others replaced by a text file under the same name.
func windowSet(t *testing.T, keep, cut []int) string {
	t.Helper()
	dir := t.TempDir()
	names := testphotos.Brackets(t, "room_window_e995")
	if len(names) != 5 {
		t.Fatalf("room_window_e995 has %d frames", len(names))
	}
	for i, n := range names {
		b, err := os.ReadFile(testphotos.Path(t, "brackets", "room_window_e995", n))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case contains(keep, i):
		case contains(cut, i):
			b = b[:len(b)/2]
		default:
			b = []byte("this file was overwritten by a sync conflict\n")
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// The two darkest frames of a five-bracket set, whose brighter frames are cut short
// or are not photos, are one scene that cannot be made: it would be dark.
func TestDarkBracketsLeftFailTheScene(t *testing.T) {
	dir := windowSet(t, []int{0, 1}, []int{2, 3})
	res, err := Group([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 1 || len(res.Scenes[0].Files) != 2 || len(res.Skipped) != 3 {
		t.Fatalf("scenes %+v, skipped %+v", res.Scenes, res.Skipped)
	}
	s := res.Scenes[0]
	if s.Warning != "" || len(s.Lost) != 3 {
		t.Fatalf("scene: %+v", s)
	}
	for _, want := range []string{"_06.jpg", "_08.jpg", "_10.jpg", "too dark"} {
		if !strings.Contains(s.Problem, want) {
			t.Fatalf("problem %q does not say %q", s.Problem, want)
		}
	}
}

// Darkest, middle and brightest frames left of five, the lost ones between them by
// EXIF (a truncated copy keeps it): the scene is made, with a warning. The lost
// frames' capture times also keep the 30 s pauses of the frames left from
// splitting the scene.
func TestSpanningBracketsLeftWarn(t *testing.T) {
	dir := windowSet(t, []int{0, 2, 4}, []int{1, 3})
	res, err := Group([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 1 || len(res.Scenes[0].Files) != 3 {
		t.Fatalf("scenes %+v", res.Scenes)
	}
	s := res.Scenes[0]
	if s.Problem != "" || !strings.Contains(s.Warning, "3 of 5 brackets") || !strings.Contains(s.Warning, "_04.jpg") || !strings.Contains(s.Warning, "_08.jpg") {
		t.Fatalf("scene: %+v", s)
	}
}

// The same three frames with the middle ones replaced by text files (no EXIF, no
// capture time): the names place them between the frames left.
func TestSpanningBracketsLeftByPosition(t *testing.T) {
	dir := windowSet(t, []int{0, 2, 4}, nil)
	res, err := Group([]string{dir}, Options{MaxGap: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 1 || res.Scenes[0].Problem != "" || res.Scenes[0].Warning == "" {
		t.Fatalf("scenes %+v", res.Scenes)
	}
}

func TestPlacingLostPhotos(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	nan := math.NaN()
	lost := func(path string, taken time.Time, ev float64) Lost {
		return Lost{Path: path, Reason: "unreadable", Taken: taken, EV: ev}
	}
	cases := []struct {
		name    string
		photos  []Photo
		lost    []Lost
		want    []string // per scene: "" nothing lost, "warn" or "fail"
		lostIn  []int    // per scene: how many lost files it holds
		problem string   // a word the failed scene's problem has
	}{
		{"a stray file beside single photos stands alone", []Photo{
			photo("/s/IMG_1.jpg", "", time.Time{}, 0, nan, -2, 0),
			photo("/s/IMG_3.jpg", "", time.Time{}, 0, nan, -2, 2),
		}, []Lost{lost("/s/IMG_2.jpg", time.Time{}, nan)}, []string{"", ""}, []int{0, 0}, ""},
		{"a lone dark frame beside unreadable look-alikes is what is left of a set", []Photo{
			photo("/s/IMG_1.jpg", "", time.Time{}, 0, nan, -6.5, 0),
		}, []Lost{lost("/s/IMG_2.jpg", time.Time{}, nan), lost("/s/IMG_3.jpg", time.Time{}, nan)}, []string{"fail"}, []int{2}, "too dark"},
		{"a file unlike the scene's names is not its bracket", []Photo{
			photo("/s/IMG_0001.jpg", "", time.Time{}, 0, nan, -4, 0),
			photo("/s/IMG_0002.jpg", "", time.Time{}, 0, nan, -2, 0),
			photo("/s/IMG_0003.jpg", "", time.Time{}, 0, nan, 0, 0),
		}, []Lost{lost("/s/notes.jpg", time.Time{}, nan)}, []string{""}, []int{0}, ""},
		{"the brightest bracket lost by EXIF", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, -2, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 0, 0, 0),
			photo("/s/c.jpg", "cam", at(2), 0.16, 2, 0, 0),
		}, []Lost{lost("/s/d.jpg", at(3), 4)}, []string{"fail"}, []int{1}, "too dark"},
		{"the darkest bracket lost at the start of the names", []Photo{
			photo("/s/IMG_2.png", "", time.Time{}, 0, nan, -3, 0),
			photo("/s/IMG_3.png", "", time.Time{}, 0, nan, -1, 0),
			photo("/s/IMG_4.png", "", time.Time{}, 0, nan, 1, 0),
		}, []Lost{lost("/s/IMG_1.png", time.Time{}, nan)}, []string{"fail"}, []int{1}, "too bright"},
		{"a middle bracket lost", []Photo{
			photo("/s/IMG_1.png", "", time.Time{}, 0, nan, -3, 0),
			photo("/s/IMG_2.png", "", time.Time{}, 0, nan, -1, 0),
			photo("/s/IMG_4.png", "", time.Time{}, 0, nan, 1, 0),
		}, []Lost{lost("/s/IMG_3.png", time.Time{}, nan)}, []string{"warn"}, []int{1}, ""},
		{"two brackets left of three", []Photo{
			photo("/s/IMG_1.png", "", time.Time{}, 0, nan, -3, 0),
			photo("/s/IMG_3.png", "", time.Time{}, 0, nan, 1, 0),
		}, []Lost{lost("/s/IMG_2.png", time.Time{}, nan)}, []string{"fail"}, []int{1}, "at least 3"},
		{"between two scenes, the nearer in time takes it", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, -2, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 0, 0, 0),
			photo("/s/c.jpg", "cam", at(2), 0.16, 2, 0, 0),
			photo("/s/e.jpg", "cam", at(20), 0.01, -2, 0, 2),
			photo("/s/f.jpg", "cam", at(21), 0.04, 0, 0, 2),
			photo("/s/g.jpg", "cam", at(22), 0.16, 2, 0, 2),
		}, []Lost{lost("/s/d.jpg", at(3), nan)}, []string{"fail", ""}, []int{1, 0}, ""},
		{"between two scenes without times, the short one takes it", []Photo{
			photo("/s/IMG_1.png", "", time.Time{}, 0, nan, -3, 0),
			photo("/s/IMG_2.png", "", time.Time{}, 0, nan, -1, 0),
			photo("/s/IMG_3.png", "", time.Time{}, 0, nan, 1, 0),
			photo("/s/IMG_5.png", "", time.Time{}, 0, nan, -3, 2),
			photo("/s/IMG_6.png", "", time.Time{}, 0, nan, -1, 2),
		}, []Lost{lost("/s/IMG_4.png", time.Time{}, nan)}, []string{"", "fail"}, []int{0, 1}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scenes, _ := GroupAll(tc.photos, tc.lost, Options{})
			if len(scenes) != len(tc.want) {
				t.Fatalf("%d scenes, want %d: %+v", len(scenes), len(tc.want), scenes)
			}
			for i, s := range scenes {
				got := ""
				switch {
				case s.Problem != "" && s.Warning != "":
					t.Fatalf("scene %d has both a warning and a problem: %+v", i, s)
				case s.Problem != "":
					got = "fail"
				case s.Warning != "":
					got = "warn"
				}
				if got != tc.want[i] || len(s.Lost) != tc.lostIn[i] {
					t.Fatalf("scene %d: %s with %d lost, want %s with %d: %+v", i, got, len(s.Lost), tc.want[i], tc.lostIn[i], s)
				}
				if got == "fail" && !strings.Contains(s.Problem, tc.problem) {
					t.Fatalf("problem %q does not say %q", s.Problem, tc.problem)
				}
			}
		})
	}
}
