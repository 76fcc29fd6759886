package ui

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// findButton returns the first button labelled text under o.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch v := o.(type) {
	case *widget.Button:
		if v.Text == text {
			return v
		}
	case *fyne.Container:
		for _, c := range v.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// The settings are a dialog: a Close button closes them, and so does Esc; either
// way the window can open them again.
func TestSettingsCloseAndEsc(t *testing.T) {
	h := newHarness(t, 1)
	h.w.openSettings()
	if h.w.settings == nil {
		t.Fatal("settings did not open")
	}
	win := h.w.settings
	closeBtn := findButton(win.Content(), "Close")
	if closeBtn == nil {
		t.Fatal("the settings have no Close button")
	}
	test.Tap(closeBtn)
	h.loop.pump()
	if h.w.settings != nil {
		t.Fatal("Close did not close the settings")
	}

	h.w.openSettings()
	if h.w.settings == nil {
		t.Fatal("settings did not open again")
	}
	h.w.settings.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.loop.pump()
	if h.w.settings != nil {
		t.Fatal("Esc did not close the settings")
	}
}

// The hot-folder form offers every order option of the option table, and what is
// set there is what the hot folder runs with.
func TestHotFolderFormOffersEveryOrderOption(t *testing.T) {
	h := newHarness(t, 1)
	sv := h.w.newSettingsView()
	defer sv.win.Close()
	sv.stopPoll()

	e := map[string]any{"name": "studio", "input": t.TempDir(), "output": t.TempDir(),
		"options": map[string]any{"quality": 80}}
	f := sv.hotOptionsForm(e)
	for _, p := range catalog.Params() {
		if f.fields[p.Name] == nil {
			t.Errorf("the hot-folder form lacks order option %s", p.Name)
		}
	}
	if q := f.Own().Quality; q == nil || *q != 80 {
		t.Fatalf("the form does not show the folder's quality: %v", q)
	}
	f.SetValue("sky", true)
	f.SetValue("sky_style", "clear")
	f.SetValue("perspective_strength", 0.5)
	setHotOptions(e, f.Own())
	cfgs, err := hotfolder.Decode([]map[string]any{e})
	if err != nil {
		t.Fatal(err)
	}
	o := cfgs[0].Options
	if o.Sky == nil || !*o.Sky || o.SkyStyle == nil || *o.SkyStyle != "clear" || o.Quality == nil || *o.Quality != 80 ||
		o.PerspectiveStrength == nil || *o.PerspectiveStrength != 0.5 {
		t.Fatalf("the folder runs with %+v", o)
	}
}

// A hot folder added in the settings starts when saved: a photo dropped into it
// is delivered without a restart.
func TestHotFolderAddedInSettingsStartsAtOnce(t *testing.T) {
	h := newHarness(t, 1)
	hot, err := hotfolder.New(nil, hotfolder.Deps{DB: h.sys.db, Engine: h.sys.engine, Assets: h.sys.assets, Keys: h.sys.keys})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { defer close(served); hot.Serve(ctx) }()
	defer func() { cancel(); <-served }()
	h.w.deps.Hot = hot

	sv := h.w.newSettingsView()
	defer sv.win.Close()
	sv.stopPoll()
	in, out := t.TempDir(), t.TempDir()
	sv.hotEntries = []map[string]any{{"name": "studio", "input": in, "output": out, "grouping": "count:1"}}
	if err := sv.applyHot(); err != nil {
		t.Fatal(err)
	}
	if err := sv.startHot(); err != nil {
		t.Fatal(err)
	}
	if st := hot.Status(); len(st) != 1 || st[0].Name != "studio" {
		t.Fatalf("the service runs %+v", st)
	}
	b, err := os.ReadFile(testphotos.Path(t, "interiors", "houses_109_bedroom.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in, ".bedroom.part"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Rename(filepath.Join(in, ".bedroom.part"), filepath.Join(in, "bedroom.jpg"))
	h.waitFor("the photo delivered", 2*time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(out, "bedroom.jpg"))
		return err == nil
	})
}
