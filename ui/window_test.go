package ui

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var ctrlEnter = &desktop.CustomShortcut{KeyName: fyne.KeyReturn, Modifier: fyne.KeyModifierShortcutDefault}
var ctrlPeriod = &desktop.CustomShortcut{KeyName: fyne.KeyPeriod, Modifier: fyne.KeyModifierShortcutDefault}

// houses returns the small single-photo interiors (about 1000 px wide each).
func houses(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testphotos.Dir(t), "interiors", "houses_*.jpg"))
	if err != nil || len(files) < 8 {
		t.Fatalf("interiors missing: %v %v", files, err)
	}
	sort.Strings(files)
	return files
}

// Dropping the bracket folders and the interiors shows one scene per bracket folder
// (named after it, every photo of the folder in it) and one per interior photo.
// With -short only the smaller bracket sets are dropped.
func TestDropShowsScenesOfTheTestdataFolders(t *testing.T) {
	root := testphotos.Dir(t)
	h := newHarness(t, 1)
	dropped := []string{filepath.Join(root, "brackets"), filepath.Join(root, "interiors")}
	var folders []string
	if testing.Short() {
		folders = []string{"house_interior_kim", "oldhouse_exterior", "room_window_e995", "memorial_church_debevec"}
		dropped = []string{filepath.Join(root, "interiors")}
		for _, f := range folders {
			dropped = append(dropped, filepath.Join(root, "brackets", f))
		}
	} else {
		entries, _ := os.ReadDir(filepath.Join(root, "brackets"))
		for _, e := range entries {
			folders = append(folders, e.Name())
		}
	}
	ids := h.drop(dropped...)
	interiors, _ := filepath.Glob(filepath.Join(root, "interiors", "*"))
	if got, want := h.w.shoot.Len(), len(folders)+len(interiors); got != want || len(ids) != want {
		t.Fatalf("%d scenes, want one per bracket folder and per interior: %d", got, want)
	}
	seen := map[string]bool{}
	for _, s := range h.w.shoot.Scenes() {
		dir := filepath.Base(filepath.Dir(s.Files[0]))
		for _, f := range s.Files {
			if filepath.Base(filepath.Dir(f)) != dir {
				t.Errorf("scene %s mixes folders: %v", s.Name, s.Files)
			}
		}
		if dir == "interiors" {
			if len(s.Files) != 1 || s.Name != stem(s.Files[0]) {
				t.Errorf("interior scene %q has %d files", s.Name, len(s.Files))
			}
			continue
		}
		var photos []string
		entries, _ := filepath.Glob(filepath.Join(root, "brackets", dir, "*"))
		for _, e := range entries {
			if !strings.HasSuffix(e, ".txt") {
				photos = append(photos, e)
			}
		}
		got := append([]string(nil), s.Files...)
		sort.Strings(got)
		if s.Name != dir || strings.Join(got, "|") != strings.Join(photos, "|") {
			t.Errorf("scene %q: %v, want the whole folder %s", s.Name, s.Files, dir)
		}
		seen[dir] = true
	}
	for _, f := range folders {
		if !seen[f] {
			t.Errorf("no scene for %s", f)
		}
	}
	// The list shows them: binding a row reads the scene.
	row := newSceneRow(h.w)
	first, _ := h.w.shoot.At(0)
	row.bind(first)
	if row.name.Text != first.Name || !strings.Contains(row.status.Text, "brackets") {
		t.Fatalf("row shows %q / %q", row.name.Text, row.status.Text)
	}
	// Dropping a folder again adds nothing.
	if again := h.drop(filepath.Join(root, "brackets", "house_interior_kim")); len(again) != 0 {
		t.Fatalf("a second drop added %d scenes", len(again))
	}
}

// The whole loop: drop, options for the shoot and one scene, Ctrl+Enter, every scene
// completes with a thumbnail and a file in the output folder, a notification, then
// the comparison of one scene.
func TestProcessShootToCompletion(t *testing.T) {
	h := newHarness(t, 2)
	brackets := testphotos.Path(t, "brackets", "house_interior_kim")
	h.drop(append([]string{brackets}, houses(t)[:4]...)...)
	if h.w.shoot.Len() != 5 {
		t.Fatalf("%d scenes from a bracket folder and 4 single photos", h.w.shoot.Len())
	}
	if s, _ := h.w.shoot.At(0); s.Name != "house_interior_kim" || len(s.Files) != 4 {
		t.Fatalf("bracket scene %s has %d files", s.Name, len(s.Files))
	}
	// The shoot gets the tone look; one scene overrides the look and the quality.
	h.w.shootForm.SetValue("tonecraft", true)
	if !boolOpt(h.w.defaults.Tonecraft) {
		t.Fatal("shoot options did not take the tone look")
	}
	special, _ := h.w.shoot.At(2)
	h.w.Select(special.ID)
	h.loop.pump()
	h.w.sceneForm.SetValue("tonecraft_profile", "bright_airy")
	h.w.sceneForm.SetValue("quality", 70)

	h.shortcut(ctrlEnter)
	h.waitFor("every scene to settle", 2*time.Minute, func() bool {
		c := h.w.shoot.Counts()
		return c.Completed+c.Failed == c.Total
	})
	for _, s := range h.w.shoot.Scenes() {
		if s.Summary.Status != core.OrderCompleted {
			t.Fatalf("%s: %s %s", s.Name, s.Summary.Status, s.Summary.Error)
		}
		if s.Summary.Recipes["develop"] == "" {
			t.Errorf("%s: recipes %v", s.Name, s.Summary.Recipes)
		}
		rec, err := h.sys.engine.OrderRecord(context.Background(), h.w.owner, s.OrderID)
		if err != nil {
			t.Fatal(err)
		}
		if !rec.Resolved.Tonecraft {
			t.Errorf("%s ran without the shoot's tone look", s.Name)
		}
		if len(rec.Inputs) != len(s.Files) {
			t.Errorf("%s: %d inputs for %d brackets", s.Name, len(rec.Inputs), len(s.Files))
		}
		wantProfile, wantQ := "signature", 92
		if s.ID == special.ID {
			wantProfile, wantQ = "bright_airy", 70
		}
		if rec.Resolved.TonecraftProfile != wantProfile || rec.Resolved.Quality != wantQ {
			t.Errorf("%s ran with %s q%d, want %s q%d", s.Name, rec.Resolved.TonecraftProfile, rec.Resolved.Quality, wantProfile, wantQ)
		}
	}
	// Results land in the output folder, and every scene shows its result's thumbnail.
	h.waitFor("results in the output folder and thumbnails", time.Minute, func() bool {
		for _, s := range h.w.shoot.Scenes() {
			if s.Saved == "" {
				return false
			}
			if img, _ := h.w.sceneThumb(s); img == nil || h.w.thumbs.Peek("asset:"+s.Summary.OutputAssetID) == nil {
				return false
			}
		}
		return true
	})
	for _, s := range h.w.shoot.Scenes() {
		if filepath.Dir(s.Saved) != h.out || filepath.Base(s.Saved) != s.Name+".jpg" {
			t.Errorf("%s saved as %s", s.Name, s.Saved)
		}
		st, err := os.Stat(s.Saved)
		if err != nil || st.Size() < 10000 {
			t.Errorf("%s: output %v %v", s.Name, st, err)
		}
		img := h.w.thumbs.Peek("asset:" + s.Summary.OutputAssetID)
		if b := img.Bounds(); max(b.Dx(), b.Dy()) > thumbEdge || b.Dx() < 100 {
			t.Errorf("%s: thumbnail %v", s.Name, b)
		}
	}
	h.waitFor("the batch notification", 10*time.Second, func() bool { return h.w.lastNotice != nil })
	if !strings.Contains(h.w.lastNotice.Content, "5 photos finished") {
		t.Errorf("notification %q", h.w.lastNotice.Content)
	}
	// The options are remembered in the config file.
	b, err := os.ReadFile(h.cfg.File())
	if err != nil || !strings.Contains(string(b), "tonecraft: true") {
		t.Errorf("config file does not remember the options: %v\n%s", err, b)
	}

	// Before/after of the special scene: both photos load, the split sits in the
	// middle, C shows the original and C again the result.
	h.w.Select(special.ID)
	d := h.w.detail
	h.waitFor("the comparison to load", 30*time.Second, func() bool {
		d.compare.mu.Lock()
		defer d.compare.mu.Unlock()
		return d.compare.before != nil && d.compare.after != nil && d.compare.after.Bounds().Dx() > thumbEdge
	})
	if d.compare.Mode() != modeSplit || d.compare.Split() != 0.5 {
		t.Fatalf("compare starts in mode %d at %.2f", d.compare.Mode(), d.compare.Split())
	}
	h.key(fyne.KeyC)
	if d.compare.Mode() != modeBefore {
		t.Fatal("C did not show the original")
	}
	h.key(fyne.KeyC)
	if d.compare.Mode() != modeAfter {
		t.Fatal("C again did not show the result")
	}
	if !strings.Contains(d.info.Text, "develop 1.3.0") || !strings.Contains(d.info.Text, h.out) {
		t.Errorf("detail says %q", d.info.Text)
	}
	// Ctrl+1 zooms to 100 %: the view asks for the photo's full size.
	h.shortcut(&desktop.CustomShortcut{KeyName: fyne.Key1, Modifier: fyne.KeyModifierShortcutDefault})
	h.waitFor("the full-size photos", 30*time.Second, func() bool {
		m := d.compare.MinSize()
		return m.Width >= 900 && d.loaded != "" && strings.HasSuffix(d.loaded, "true")
	})
	h.shortcut(&desktop.CustomShortcut{KeyName: fyne.Key0, Modifier: fyne.KeyModifierShortcutDefault})
	if d.actual {
		t.Fatal("Ctrl+0 did not fit the photo again")
	}

	// Export a small WebP copy of the result.
	exp := filepath.Join(t.TempDir(), "small.webp")
	s, _ := h.w.shoot.Get(special.ID)
	if err := exportTo(h.sys.assets, s.Summary.OutputAssetID, core.ExportOptions{Format: "webp", Quality: 80, MaxEdge: 400}, exp); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(exp); err != nil || len(b) < 1000 || string(b[8:12]) != "WEBP" {
		t.Fatalf("export: %v", err)
	}
}

// Esc cancels the selected scene, Ctrl+. cancels everything still under way; the
// engine agrees, and cancelled scenes say so.
func TestCancelSceneAndBatch(t *testing.T) {
	h := newHarness(t, 1)
	big := testphotos.Path(t, "interiors", "cwz_library3_20240401_185503.JPG")
	h.drop(append([]string{big}, houses(t)...)...)
	n := h.w.shoot.Len()
	if n != 9 {
		t.Fatalf("%d scenes", n)
	}
	h.w.shootForm.SetValue("tonecraft", true)
	h.w.Process()
	h.waitFor("the batch to be submitted", time.Minute, func() bool {
		for _, s := range h.w.shoot.Scenes() {
			if s.Phase != PhaseSubmitted {
				return false
			}
		}
		return true
	})
	last, _ := h.w.shoot.At(n - 1)
	h.w.Select(last.ID)
	h.key(fyne.KeyEscape)
	h.waitFor("the last scene to be cancelled", 30*time.Second, func() bool {
		s, _ := h.w.shoot.Get(last.ID)
		return s.Summary.Status == core.OrderCancelled
	})
	h.w.Select(0)
	h.shortcut(ctrlPeriod)
	h.waitFor("every scene to settle", time.Minute, func() bool {
		c := h.w.shoot.Counts()
		return c.Active == 0
	})
	cancelled := 0
	var batch string
	for _, s := range h.w.shoot.Scenes() {
		batch = s.BatchID
		switch s.Summary.Status {
		case core.OrderCancelled:
			cancelled++
			if s.Summary.OutputAssetID != "" || s.Saved != "" {
				t.Errorf("%s was cancelled but has a result", s.Name)
			}
			if got := h.w.sceneStatus(s); got != "Cancelled" {
				t.Errorf("%s shows %q", s.Name, got)
			}
		case core.OrderCompleted:
		default:
			t.Errorf("%s ended %s", s.Name, s.Summary.Status)
		}
	}
	if cancelled < 2 {
		t.Fatalf("only %d scenes were cancelled", cancelled)
	}
	agg, err := h.sys.engine.Batch(context.Background(), h.w.owner, batch)
	if err != nil {
		t.Fatal(err)
	}
	if !agg.Done || agg.Failed != cancelled || agg.Completed != n-cancelled {
		t.Fatalf("engine says %+v, window counted %d cancelled", agg, cancelled)
	}
	h.waitFor("the notification", 10*time.Second, func() bool { return h.w.lastNotice != nil })

	// A cancelled scene can be tried again: it goes out alone and completes.
	h.w.Select(last.ID)
	h.loop.pump()
	if h.w.detail.retry.Hidden {
		t.Fatal("no Try again on a cancelled scene")
	}
	h.w.detail.retry.OnTapped()
	h.shortcut(ctrlEnter)
	h.waitFor("the retried scene to complete", time.Minute, func() bool {
		s, _ := h.w.shoot.Get(last.ID)
		return s.Summary.Status == core.OrderCompleted && s.Saved != ""
	})
	if s, _ := h.w.shoot.Get(last.ID); s.BatchID != "" {
		t.Fatalf("a single scene went out as batch %s", s.BatchID)
	}
}

// A scene refused by the catalog's validator is not submitted and says why; the
// message is the catalog's own.
func TestInvalidSceneIsRefusedWithTheCatalogsMessage(t *testing.T) {
	h := newHarness(t, 1)
	h.drop(houses(t)[:2]...)
	s, _ := h.w.shoot.At(0)
	h.w.Select(s.ID)
	h.loop.pump()
	h.w.sceneForm.SetValue("gen_edit", "indoor_staging")
	h.w.sceneForm.SetValue("staging_style", "keep")
	msg := h.w.sceneForm.Problem()
	if !strings.Contains(msg, "Furniture style") || !strings.Contains(msg, "floor_finish or wall_color") {
		t.Fatalf("form shows %q", msg)
	}
	if err := h.w.submitDrafts(); err == nil {
		t.Fatal("an invalid scene was submitted")
	}
	for _, sc := range h.w.shoot.Scenes() {
		if sc.Phase != PhaseDraft || sc.OrderID != "" {
			t.Fatalf("%s left draft: %+v", sc.Name, sc.Phase)
		}
	}
	got, _ := h.w.shoot.Get(s.ID)
	if got.Problem != msg {
		t.Fatalf("scene problem %q, form said %q", got.Problem, msg)
	}
}
