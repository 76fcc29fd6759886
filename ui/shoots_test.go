package ui

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/engine/store"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// startSystem runs a real Porchlight on the data dir dir (which may hold one
// stopped before); stop ends it, and the test's cleanup stops it too.
func startSystem(t testing.TB, dir string) (*system, func()) {
	s, stop, run := startSystemWith(t, dir)
	run()
	return s, stop
}

// startSystemWith is startSystem with an engine that takes orders but runs none
// (they stay pending, as if the program stopped at once) until run is called.
func startSystemWith(t testing.TB, dir string) (_ *system, stop, run func()) {
	t.Helper()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := &system{dir: dir, db: db, keys: keys.New(db)}
	if s.assets, err = assets.New(db, dir, assets.Config{}); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	s.engine, err = engine.New(db, s.assets, engine.Config{Workers: 1, Logger: log, Pipeline: pipeline.New(pipeline.Config{Logger: log, PreviewDir: filepath.Join(dir, "previews")})})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	serve := func(svc interface{ Serve(context.Context) error }) {
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			svc.Serve(ctx)
		}()
	}
	serve(s.assets)
	serve(s.keys)
	var once, ran sync.Once
	run = func() { ran.Do(func() { serve(s.engine) }) }
	stop = func() {
		once.Do(func() {
			cancel()
			s.done.Wait()
			s.keys.Flush()
			db.Close()
		})
	}
	t.Cleanup(stop)
	return s, stop, run
}

// windowOn builds a window over sys with its shoots in sys's database, saving
// results into out; close closes it as quitting does.
func windowOn(t testing.TB, sys *system, cfgFile, out string) (*harness, func()) {
	t.Helper()
	a := test.NewApp()
	t.Cleanup(a.Quit)
	cfg := NewConfig(viper.New(), cfgFile)
	if _, err := os.Stat(cfgFile); err == nil {
		v := viper.New()
		v.SetConfigFile(cfgFile)
		if err := v.ReadInConfig(); err != nil {
			t.Fatal(err)
		}
		cfg = NewConfig(v, cfgFile)
	}
	cfg.Set(KeyOutputDir, out)
	loop := &uiLoop{}
	w, err := newWindow(a, Deps{
		Engine: sys.engine, Assets: sys.assets, Keys: sys.keys, Shoots: store.NewShoots(sys.db),
		Available: sys.engine.Pipeline().FeatureAvailable, Config: cfg, DataDir: sys.dir,
		PreviewDir: filepath.Join(sys.dir, "previews"),
	}, loop.do)
	if err != nil {
		t.Fatal(err)
	}
	w.win.Resize(fyne.NewSize(1360, 860))
	var once sync.Once
	closeW := func() {
		once.Do(func() {
			w.Close()
			loop.pump()
		})
	}
	t.Cleanup(closeW)
	return &harness{t: t, sys: sys, loop: loop, w: w, cfg: cfg, out: out}, closeW
}

func sceneNamed(t testing.TB, sh *Shoot, name string) Scene {
	t.Helper()
	for _, s := range sh.Scenes() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no scene %s in %v", name, sceneNames(sh))
	return Scene{}
}

func sceneNames(sh *Shoot) []string {
	var out []string
	for _, s := range sh.Scenes() {
		out = append(out, s.Name)
	}
	return out
}

// A shoot survives a restart of the whole program: the window opens it again with
// the same name, scenes in the same order with the same brackets and overrides,
// the same options, the processed scene re-attached to its order and its saved
// photo, and the drafts still drafts (which then process).
func TestShootSurvivesRestart(t *testing.T) {
	photos := houses(t)
	dir, out := t.TempDir(), t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")

	sys, stop := startSystem(t, dir)
	h, closeW := windowOn(t, sys, cfgFile, out)
	h.w.shootForm.SetValue("quality", 80)
	first := h.drop(photos[0])[0]
	h.shortcut(ctrlEnter)
	h.waitFor("the first scene saved", 2*time.Minute, func() bool {
		s, _ := h.w.shoot.Get(first)
		return s.Summary.Status == core.OrderCompleted && s.Saved != ""
	})
	ids := h.drop(photos[1], photos[2])
	if err := h.w.shoot.Move(ids[1], -1); err != nil { // photos[2] before photos[1]
		t.Fatal(err)
	}
	h.w.Select(ids[0])
	h.loop.pump()
	h.w.sceneForm.SetValue("quality", 65)
	h.w.renameShoot("Elm Street")
	h.loop.pump()
	before := h.w.shoot.Scenes()
	id := h.w.shoot.ID()
	done, _ := h.w.shoot.Get(first)
	closeW()
	stop()

	sys2, _ := startSystem(t, dir)
	h2, _ := windowOn(t, sys2, cfgFile, t.TempDir())
	sh := h2.w.shoot
	if sh.ID() != id || sh.Name() != "Elm Street" {
		t.Fatalf("opened %s %q, want %s Elm Street", sh.ID(), sh.Name(), id)
	}
	if q := h2.w.defaults.Quality; q == nil || *q != 80 {
		t.Errorf("shoot quality %v, want 80", q)
	}
	after := sh.Scenes()
	if len(after) != len(before) {
		t.Fatalf("%d scenes after the restart, want %d", len(after), len(before))
	}
	for i, s := range after {
		b := before[i]
		if s.ID != b.ID || s.Name != b.Name || strings.Join(s.Files, "|") != strings.Join(b.Files, "|") {
			t.Errorf("scene %d is %s %v, was %s %v", i, s.Name, s.Files, b.Name, b.Files)
		}
		if optionsKey(s.Overrides) != optionsKey(b.Overrides) {
			t.Errorf("%s overrides %v, were %v", s.Name, optionsToMap(s.Overrides), optionsToMap(b.Overrides))
		}
	}
	if d := sh.Drafts(); len(d) != 2 || d[0].ID != ids[1] || d[1].ID != ids[0] {
		t.Fatalf("drafts %v", sceneNames(sh))
	}
	if s, _ := sh.Get(ids[0]); s.Overrides.Quality == nil || *s.Overrides.Quality != 65 {
		t.Errorf("the scene's quality override was lost: %v", optionsToMap(s.Overrides))
	}
	h2.waitFor("the processed scene re-attached to its order", 30*time.Second, func() bool {
		s, _ := sh.Get(first)
		return s.Summary.OutputAssetID != "" && len(s.Summary.Recipes) > 0
	})
	s, _ := sh.Get(first)
	if s.Phase != PhaseSubmitted || s.OrderID != done.OrderID || s.Saved != done.Saved || len(s.Versions) != 1 {
		t.Fatalf("processed scene after the restart: %d %s %q (%d versions), want %s %q", s.Phase, s.OrderID, s.Saved, len(s.Versions), done.OrderID, done.Saved)
	}
	if q := s.Versions[0].Options.Quality; q == nil || *q != 80 {
		t.Errorf("the version forgot its options: %v", optionsToMap(s.Versions[0].Options))
	}
	// The sidebar lists it with its counts; the drafts process after the restart.
	h2.waitFor("the sidebar", 10*time.Second, func() bool {
		return len(h2.w.side.entries) == 1 && h2.w.side.entries[0].ID == id
	})
	if line := entryLine(h2.w.liveEntry(h2.w.side.entries[0])); !strings.Contains(line, "3 scenes · 1/3 done") {
		t.Errorf("sidebar row %q", line)
	}
	h2.shortcut(ctrlEnter)
	h2.waitFor("the drafts processed", 2*time.Minute, func() bool {
		c := sh.Counts()
		return c.Completed == 3
	})
}

// optionsKey prints options comparably (fmt sorts map keys).
func optionsKey(o core.Options) string { return fmt.Sprint(optionsToMap(o)) }

// A scene whose order had not run when the program stopped re-attaches to it after
// the restart: the engine runs it then, and the window follows it to its saved
// photo. Closing with it under way asked first.
func TestPendingSceneFinishesAfterRestart(t *testing.T) {
	dir, out := t.TempDir(), t.TempDir()
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	sys, stop, _ := startSystemWith(t, dir)
	h, closeW := windowOn(t, sys, cfgFile, out)
	id := h.drop(houses(t)[4])[0]
	h.shortcut(ctrlEnter)
	h.waitFor("the order submitted", time.Minute, func() bool {
		s, _ := h.w.shoot.Get(id)
		return s.Phase == PhaseSubmitted
	})
	h.w.requestClose()
	if h.w.win.Canvas().Overlays().Top() == nil {
		t.Fatal("closing with a scene under way did not ask")
	}
	orderID := func() string { s, _ := h.w.shoot.Get(id); return s.OrderID }()
	closeW()
	stop()

	sys2, _ := startSystem(t, dir)
	out2 := t.TempDir()
	h2, _ := windowOn(t, sys2, cfgFile, out2)
	h2.waitFor("the order run after the restart and its photo saved", 2*time.Minute, func() bool {
		s, _ := h2.w.shoot.Get(id)
		return s.Summary.Status == core.OrderCompleted && s.Saved != ""
	})
	s, _ := h2.w.shoot.Get(id)
	if s.OrderID != orderID || len(s.Versions) != 1 || filepath.Dir(s.Saved) != out2 {
		t.Fatalf("re-attached to %s (want %s), %d versions, saved %s", s.OrderID, orderID, len(s.Versions), s.Saved)
	}
	if entries, _ := os.ReadDir(out2); len(entries) != 1 {
		t.Errorf("%d files written, want the one photo once", len(entries))
	}
}

// A shoot switched away from while its scene is being processed goes on in the
// background: its photo is written and its record and sidebar row say done, and
// opening it again shows the result.
func TestShootSwitchedAwayKeepsWorking(t *testing.T) {
	sys, _, run := startSystemWith(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	photos := houses(t)
	id := h.drop(photos[5])[0]
	first := h.w.shoot.ID()
	h.shortcut(ctrlEnter)
	h.waitFor("the order submitted", time.Minute, func() bool {
		s, _ := h.w.shoot.Get(id)
		return s.Phase == PhaseSubmitted
	})
	h.w.newShoot()
	h.drop(photos[6])
	run()
	shoots := store.NewShoots(sys.db)
	var saved string
	h.waitFor("the first shoot's photo written and stored", 2*time.Minute, func() bool {
		rec, err := shoots.Get(context.Background(), first)
		if err != nil || len(rec.Scenes) != 1 || len(rec.Scenes[0].Versions) != 1 {
			return false
		}
		v := rec.Scenes[0].Versions[0]
		saved = v.Saved
		return v.Status == core.OrderCompleted && v.Saved != ""
	})
	if _, err := os.Stat(saved); err != nil {
		t.Fatal(err)
	}
	if h.w.background(first) != nil {
		t.Error("the shoot stays in the background with nothing under way")
	}
	h.waitFor("its sidebar row done", 10*time.Second, func() bool {
		for _, e := range h.w.side.entries {
			if e.ID == first {
				return e.Done == 1
			}
		}
		return false
	})
	if c := h.w.shoot.Counts(); c.Total != 1 || c.Draft != 1 {
		t.Errorf("the open shoot changed: %+v", c)
	}
	h.w.openShoot(shootEntry{ID: first})
	h.waitFor("the first shoot open", 10*time.Second, func() bool { return h.w.shoot.ID() == first })
	if s, _ := h.w.shoot.Get(id); s.Saved != saved || s.Summary.Status != core.OrderCompleted {
		t.Errorf("reopened: %s %q", s.Summary.Status, s.Saved)
	}
}

// Processing a finished scene again with other options keeps both results as
// versions, both saved and stored; the older is a click away and can be deleted.
func TestReprocessKeepsVersions(t *testing.T) {
	dir := t.TempDir()
	sys, _ := startSystem(t, dir)
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	id := h.drop(houses(t)[3])[0]
	h.shortcut(ctrlEnter)
	saved := func(n int) func() bool {
		return func() bool {
			s, _ := h.w.shoot.Get(id)
			return len(s.Versions) == n && s.Summary.Status == core.OrderCompleted && s.Saved != ""
		}
	}
	h.waitFor("the first version saved", 2*time.Minute, saved(1))
	h.w.Select(id)
	h.loop.pump()
	h.w.reeditScene(id)
	h.loop.pump()
	s, _ := h.w.shoot.Get(id)
	if s.Phase != PhaseDraft || len(s.Versions) != 1 || s.OrderID != "" {
		t.Fatalf("after Process again: %d, %d versions, order %q", s.Phase, len(s.Versions), s.OrderID)
	}
	if shown, _ := h.w.shownScene(id); shown.Summary.OutputAssetID == "" {
		t.Error("the detail does not show the earlier result while the scene is edited again")
	}
	h.w.sceneForm.SetValue("quality", 55)
	h.shortcut(ctrlEnter)
	h.waitFor("the second version saved", 2*time.Minute, saved(2))
	s, _ = h.w.shoot.Get(id)
	v1, v2 := s.Versions[0], s.Versions[1]
	if v1.OrderID == v2.OrderID || v1.Saved == v2.Saved || s.Saved != v2.Saved {
		t.Fatalf("versions %+v / %+v", v1, v2)
	}
	for _, p := range []string{v1.Saved, v2.Saved} {
		if _, err := os.Stat(p); err != nil {
			t.Error(err)
		}
	}
	if q := v2.Options.Quality; q == nil || *q != 55 || (v1.Options.Quality != nil && *v1.Options.Quality == 55) {
		t.Errorf("version options %v / %v", optionsToMap(v1.Options), optionsToMap(v2.Options))
	}
	h.loop.pump()
	h.w.detail.update()
	if got := h.w.detail.versions.label.Text; got != "Version 2 of 2" || !h.w.detail.versions.label.Visible() {
		t.Errorf("selector %q", got)
	}
	h.w.ShowVersion(id, 0)
	if got := h.w.detail.versions.label.Text; got != "Version 1 of 2" {
		t.Errorf("selector %q after picking the first", got)
	}
	if shown, _ := h.w.shownScene(id); shown.OrderID != v1.OrderID || shown.Saved != v1.Saved {
		t.Errorf("the detail shows %s, want the first version %s", shown.OrderID, v1.OrderID)
	}
	// Both versions are in the stored record.
	shoots := store.NewShoots(sys.db)
	h.waitFor("both versions stored", 10*time.Second, func() bool {
		rec, err := shoots.Get(context.Background(), h.w.shoot.ID())
		return err == nil && len(rec.Scenes) == 1 && len(rec.Scenes[0].Versions) == 2 && rec.Scenes[0].Versions[1].Saved == v2.Saved
	})
	h.w.deleteVersion(id)
	s, _ = h.w.shoot.Get(id)
	if len(s.Versions) != 1 || s.Versions[0].OrderID != v2.OrderID || s.OrderID != v2.OrderID || s.Phase != PhaseSubmitted {
		t.Fatalf("after deleting the first version: %+v", s.Versions)
	}
	h.waitFor("the deletion stored", 10*time.Second, func() bool {
		rec, err := shoots.Get(context.Background(), h.w.shoot.ID())
		return err == nil && len(rec.Scenes[0].Versions) == 1
	})
}

// A photo dropped into a hot folder shows in the sidebar as a read-only shoot named
// after the folder and the day, live: its scene completes there with the path the
// folder wrote.
func TestHotFolderWorkAppearsInTheWindow(t *testing.T) {
	sys, _ := startSystem(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	in, out := t.TempDir(), t.TempDir()
	cfgs, err := hotfolder.Decode([]map[string]any{{"name": "studio", "input": in, "output": out, "grouping": "count:1"}})
	if err != nil {
		t.Fatal(err)
	}
	hot, err := hotfolder.New(cfgs, hotfolder.Deps{DB: sys.db, Engine: sys.engine, Assets: sys.assets, Keys: sys.keys,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); hot.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	h.w.deps.Hot = hot

	b, err := os.ReadFile(testphotos.Path(t, "interiors", "houses_109_bedroom.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, ".bedroom.part"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(in, ".bedroom.part"), filepath.Join(in, "bedroom.jpg"))

	var entry shootEntry
	h.waitFor("the hot folder's shoot listed", time.Minute, func() bool {
		for _, e := range h.w.side.entries {
			if e.Hot {
				entry = e
				return true
			}
		}
		return false
	})
	if want := "studio · " + time.Now().Format("2 Jan 2006"); entry.Name != want || entry.Scenes != 1 {
		t.Fatalf("hot entry %q with %d scenes, want %q with 1", entry.Name, entry.Scenes, want)
	}
	h.w.openShoot(entry)
	h.waitFor("the hot shoot open", 10*time.Second, func() bool { return h.w.shoot.ID() == entry.ID })
	if !h.w.shoot.ReadOnly() || h.w.shoot.Len() != 1 {
		t.Fatalf("read-only %v, %d scenes", h.w.shoot.ReadOnly(), h.w.shoot.Len())
	}
	h.waitFor("the scene done in the window, with the folder's result", 2*time.Minute, func() bool {
		s, _ := h.w.shoot.At(0)
		return s.Summary.Status == core.OrderCompleted && s.Saved != ""
	})
	s, _ := h.w.shoot.At(0)
	if s.Name != "bedroom" || filepath.Dir(s.Saved) != out {
		t.Errorf("scene %s saved %s, want bedroom in %s", s.Name, s.Saved, out)
	}
	if _, err := os.Stat(s.Saved); err != nil {
		t.Error(err)
	}
	h.waitFor("the sidebar to count it done", 10*time.Second, func() bool {
		for _, e := range h.w.side.entries {
			if e.ID == entry.ID {
				return e.Done == 1
			}
		}
		return false
	})
	if err := h.w.shoot.Reedit(s.ID); err == nil {
		t.Error("a hot folder's scene was made a draft")
	}
	// Dropping photos on it starts a shoot of the window's own.
	h.drop(houses(t)[0])
	if h.w.shoot.ReadOnly() || h.w.shoot.Len() != 1 {
		t.Fatalf("the drop went to read-only %v, %d scenes", h.w.shoot.ReadOnly(), h.w.shoot.Len())
	}
}

// The sidebar's actions: New shoot keeps the last one listed, selecting it loads it
// back, Rename names it, Delete removes it and opens the next.
func TestSidebarNewRenameDelete(t *testing.T) {
	sys, _ := startSystem(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	photos := houses(t)
	h.drop(photos[0], photos[1])
	first := h.w.shoot.ID()
	if h.w.shoot.Name() != "interiors" {
		t.Errorf("a new shoot is named %q, want its folder", h.w.shoot.Name())
	}
	h.w.newShoot()
	h.drop(photos[2])
	h.w.renameShoot("Oak Avenue")
	second := h.w.shoot.ID()
	h.waitFor("both shoots listed", 10*time.Second, func() bool {
		return len(h.w.side.entries) == 2 && h.w.isSaved(first) && h.w.isSaved(second)
	})
	var e shootEntry
	for _, x := range h.w.side.entries {
		if x.ID == first {
			e = x
		}
	}
	if e.Scenes != 2 || e.Name != "interiors" {
		t.Fatalf("entry %+v", e)
	}
	h.w.side.list.Select(slices.IndexFunc(h.w.side.entries, func(e shootEntry) bool { return e.ID == first }))
	h.waitFor("the first shoot loaded", 10*time.Second, func() bool { return h.w.shoot.ID() == first })
	if h.w.shoot.Len() != 2 {
		t.Fatalf("%d scenes in the first shoot", h.w.shoot.Len())
	}
	h.w.deleteShoot()
	h.waitFor("the other shoot open after the delete", 10*time.Second, func() bool { return h.w.shoot.ID() == second })
	if h.w.shoot.Name() != "Oak Avenue" || h.w.shoot.Len() != 1 {
		t.Errorf("opened %q with %d scenes", h.w.shoot.Name(), h.w.shoot.Len())
	}
	h.waitFor("the deleted shoot gone", 10*time.Second, func() bool { return len(h.w.side.entries) == 1 })
	if _, err := store.NewShoots(sys.db).Get(context.Background(), first); core.KindOf(err) != core.KindNotFound {
		t.Errorf("the deleted shoot is still stored: %v", err)
	}
}

// Closing with scenes under way asks first.
func TestCloseAsksWhileWorkIsUnderWay(t *testing.T) {
	h := newHarness(t, 1)
	h.drop(houses(t)[0])
	h.w.requestClose()
	if d := h.w.win.Canvas().Overlays().Top(); d != nil {
		t.Fatal("closing with nothing under way asked")
	}
	h2 := newHarness(t, 1)
	h2.drop(houses(t)[1])
	h2.shortcut(ctrlEnter)
	h2.w.requestClose()
	if h2.w.win.Canvas().Overlays().Top() == nil {
		t.Fatal("closing with a scene under way did not ask")
	}
}
