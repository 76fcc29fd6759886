package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/grouping"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// dropWindowSet writes room_window_e995's five frames (02 the darkest) into a new
// folder: those in keep whole, those in cut truncated to half, the others replaced
// by a text file.
func dropWindowSet(t *testing.T, keep, cut []int) string {
	t.Helper()
	dir := t.TempDir()
	for i, n := range testphotos.Brackets(t, "room_window_e995") {
		b, err := os.ReadFile(testphotos.Path(t, "brackets", "room_window_e995", n))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case containsInt(keep, i):
		case containsInt(cut, i):
			b = b[:len(b)/2]
		default:
			b = []byte("not a photo any more\n")
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// A dropped bracket set whose brighter frames cannot be read is not left to be
// processed from its two dark frames: the scene is refused, saying why.
func TestDroppedDarkBracketsAreNotProcessed(t *testing.T) {
	res, err := grouping.Group([]string{dropWindowSet(t, []int{0, 1}, []int{2, 3})}, grouping.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sh := NewShoot()
	ids := sh.Add(res.Scenes)
	if len(ids) != 1 || len(sh.Drafts()) != 0 {
		t.Fatalf("scenes %+v, drafts %+v", sh.Scenes(), sh.Drafts())
	}
	s, _ := sh.Get(ids[0])
	status := (&Window{}).sceneStatus(s)
	if s.Phase != PhaseRefused || !strings.HasPrefix(status, "Not processed: ") || !strings.Contains(status, "too dark") {
		t.Fatalf("scene %+v: %q", s, status)
	}
	// Tried again by hand, it keeps saying what it lost.
	if err := sh.Retry(ids[0]); err != nil {
		t.Fatal(err)
	}
	s, _ = sh.Get(ids[0])
	sh.Submitted(s.ID, core.OrderSummary{OrderUUID: "o1", Status: core.OrderCompleted})
	s, _ = sh.Get(ids[0])
	if status := (&Window{}).sceneStatus(s); !strings.Contains(status, "⚠") || !strings.Contains(status, "too dark") {
		t.Fatalf("status after a retry: %q", status)
	}
}

// The darkest, middle and brightest frames left, the scene is processed and its
// status line carries the warning.
func TestDroppedSpanningBracketsWarn(t *testing.T) {
	res, err := grouping.Group([]string{dropWindowSet(t, []int{0, 2, 4}, []int{1, 3})}, grouping.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sh := NewShoot()
	ids := sh.Add(res.Scenes)
	if len(ids) != 1 || len(sh.Drafts()) != 1 {
		t.Fatalf("scenes %+v", sh.Scenes())
	}
	sh.Submitted(ids[0], core.OrderSummary{OrderUUID: "o1", Status: core.OrderCompleted})
	s, _ := sh.Get(ids[0])
	if status := (&Window{}).sceneStatus(s); !strings.HasPrefix(status, "Done · ⚠ made from 3 of 5 brackets") {
		t.Fatalf("status: %q", status)
	}
}
