package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// A folder of nine brackets dropped on the window is one scene of nine frames
// (living_room_windows' five frames and four of them again under new names).
func TestNineBracketsAreOneScene(t *testing.T) {
	h := newHarness(t, 1)
	names := testphotos.Brackets(t, "living_room_windows")
	if len(names) != 5 {
		t.Fatalf("living_room_windows: %v", names)
	}
	dir := filepath.Join(t.TempDir(), "living")
	os.Mkdir(dir, 0o700)
	for i := 0; i < 9; i++ {
		b, err := os.ReadFile(filepath.Join(testphotos.Dir(t), "brackets", "living_room_windows", names[i%5]))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("DSC_%04d.png", i+1)), b, 0o600)
	}
	ids := h.drop(dir)
	if len(ids) != 1 {
		t.Fatalf("nine brackets made %d scenes", len(ids))
	}
	if s, _ := h.w.shoot.Get(ids[0]); len(s.Files) != 9 {
		t.Fatalf("the scene has %d brackets, want 9", len(s.Files))
	}
	// The engine merges all nine (the API's limit of 5 is the API's own).
	h.w.Process()
	h.waitFor("the nine-bracket scene to finish", 3*time.Minute, func() bool {
		s, _ := h.w.shoot.Get(ids[0])
		return s.Summary.Status == "completed" || s.Summary.Status == "failed" || s.Phase == PhaseRefused
	})
	if s, _ := h.w.shoot.Get(ids[0]); s.Summary.Status != "completed" || len(s.Summary.Inputs) != 9 {
		t.Fatalf("the scene ended %q with %d inputs: %s %s", s.Summary.Status, len(s.Summary.Inputs), s.Summary.Error, s.Problem)
	}
}
