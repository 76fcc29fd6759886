package ui

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// A folder of nine brackets dropped on the window is one scene of nine frames:
// living_room_windows' five exposures, and between each two the exposure half-way
// (their mean in linear light), each with its exposure time in EXIF as a camera
// writes it, so culling sees nine exposures and keeps them all.
func TestNineBracketsAreOneScene(t *testing.T) {
	h := newHarness(t, 1)
	dir := nineExposures(t)
	ids := h.drop(dir)
	if len(ids) != 1 {
		t.Fatalf("nine brackets made %d scenes", len(ids))
	}
	if s, _ := h.w.shoot.Get(ids[0]); len(s.Files) != 9 {
		t.Fatalf("the scene has %d brackets, want 9; set aside %+v", len(s.Files), s.SetAside)
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

// nineExposures writes nine distinct exposures of living_room_windows to a folder.
func nineExposures(t testing.TB) string {
	t.Helper()
	names := testphotos.Brackets(t, "living_room_windows")
	if len(names) != 5 {
		t.Fatalf("living_room_windows: %v", names)
	}
	frames := make([]*imaging.Image, len(names))
	for i, n := range names {
		img, _, err := codec.DecodeFile(filepath.Join(testphotos.Dir(t), "brackets", "living_room_windows", n), codec.DecodeOptions{MaxPixels: -1})
		if err != nil {
			t.Fatal(err)
		}
		frames[i] = img
	}
	// Capture order by brightness, darkest first.
	slices.SortFunc(frames, func(a, b *imaging.Image) int { return cmp.Compare(meanLinear(a), meanLinear(b)) })
	dir := filepath.Join(t.TempDir(), "living")
	os.Mkdir(dir, 0o700)
	n := 0
	shot := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	write := func(img *imaging.Image) {
		meta := codec.Meta{DateTimeOriginal: shot.Add(time.Duration(n) * time.Second),
			ExposureTime: math.Exp2(float64(n)/2) / 64, FNumber: 8, ISO: 100}
		n++
		p := filepath.Join(dir, fmt.Sprintf("DSC_%04d.jpg", n))
		if err := codec.WriteFile(p, img, codec.EncodeOptions{Format: "jpeg", Quality: 95, Meta: &meta}); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range frames {
		write(f)
		if i+1 < len(frames) {
			mid := imaging.New(f.W(), f.H(), f.C)
			next := frames[i+1]
			for j := range mid.Pix {
				mid.Pix[j] = (f.Pix[j] + next.Pix[j]) / 2
			}
			write(mid)
		}
	}
	return dir
}

func meanLinear(img *imaging.Image) float64 {
	var sum float64
	for _, v := range img.Pix {
		sum += float64(v)
	}
	return sum / float64(len(img.Pix))
}
