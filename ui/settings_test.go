package ui

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/core"
)

// Settings changed in the window reach the config file, and a window opened on that
// file shows them again.
func TestSettingsRoundTrip(t *testing.T) {
	h := newHarness(t, 1)
	sv := h.w.newSettingsView()
	defer sv.win.Close()
	sv.stopPoll()

	out := t.TempDir()
	sv.outDir.SetText(out)
	sv.naming.SetText("{date}_{scene}")
	sv.workers.SetSelected("3")
	sv.resCap.SetText("4096")
	sv.themes.SetSelected("Light")
	if h.cfg.String(KeyTheme, "") != ThemeLight {
		t.Fatal("the theme did not apply at once")
	}
	if c := fyne.CurrentApp().Settings().Theme().Color("background", 0); c != lightShades["background"] {
		t.Fatalf("theme background %v", c)
	}
	sv.naming.SetText("{nope}")
	if err := sv.applyGeneral(); err == nil {
		t.Fatal("a template with an unknown placeholder was accepted")
	}
	sv.naming.SetText("{date}_{scene}")
	if err := sv.applyGeneral(); err != nil {
		t.Fatal(err)
	}

	sv.apiOn.SetChecked(false)
	sv.listen.SetText("localhost")
	if err := sv.applyAPI(); err == nil {
		t.Fatal("an address without a port was accepted")
	}
	sv.listen.SetText("127.0.0.1:9911")
	if err := sv.applyAPI(); err != nil {
		t.Fatal(err)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	if err := sv.addBackend("gpu", "iopaint", srv.URL, ""); err != nil {
		t.Fatal(err)
	}
	if err := sv.addBackend("bad", "comfyui", "ftp://x", ""); err == nil {
		t.Fatal("a backend without an http URL was accepted")
	}
	sv.featureSel["indoor_staging"].SetSelected("gpu")
	if err := sv.applyBackends(); err != nil {
		t.Fatal(err)
	}
	if got := testConnection(srv.URL, 2*time.Second); !strings.HasPrefix(got, "reachable (HTTP 200") {
		t.Fatalf("test connection: %s", got)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	if got := testConnection(closed.URL, time.Second); !strings.HasPrefix(got, "no answer") {
		t.Fatalf("test connection of a closed server: %s", got)
	}

	in, done := t.TempDir(), t.TempDir()
	sv.hotEntries = append(sv.hotEntries, map[string]any{"name": "studio", "output": done})
	if err := sv.applyHot(); err == nil {
		t.Fatal("a hot folder without an input was accepted")
	}
	sv.hotEntries[0] = map[string]any{"name": "studio", "input": in, "output": done, "preset": "natural", "grouping": "count:3", "enabled": true}
	if err := sv.applyHot(); err != nil {
		t.Fatal(err)
	}
	if err := h.cfg.Save(); err != nil {
		t.Fatal(err)
	}

	// The file holds it all.
	v := viper.New()
	v.SetConfigFile(h.cfg.File())
	if err := v.ReadInConfig(); err != nil {
		t.Fatal(err)
	}
	checks := map[string]any{
		KeyOutputDir: out, KeyNaming: "{date}_{scene}", KeyWorkers: 3, KeyResCap: 4096, KeyTheme: "light",
		KeyAPIEnabled: false, KeyListen: "127.0.0.1:9911",
		"backends.gpu.type": "iopaint", "backends.gpu.url": srv.URL, "features.indoor_staging": "gpu",
	}
	for k, want := range checks {
		if got := v.Get(k); got != want {
			t.Errorf("%s = %v (%T), want %v", k, got, got, want)
		}
	}
	hot := readHotEntries(v.Get(KeyHotfolders))
	if len(hot) != 1 {
		t.Fatalf("hot folders in the file: %v", v.Get(KeyHotfolders))
	}
	if cfgs, err := hotfolder.Decode(hot); err != nil || cfgs[0].Name != "studio" || cfgs[0].Count != 3 {
		t.Fatalf("saved hot folder does not decode: %+v %v", cfgs, err)
	}

	// A new window on the same file shows the same settings.
	h.w.cfg = NewConfig(v, h.cfg.File())
	again := h.w.newSettingsView()
	defer again.win.Close()
	again.stopPoll()
	if again.outDir.Text != out || again.naming.Text != "{date}_{scene}" || again.workers.Selected != "3" ||
		again.resCap.Text != "4096" || again.themes.Selected != "Light" || again.apiOn.Checked || again.listen.Text != "127.0.0.1:9911" {
		t.Fatalf("reopened settings: %q %q %q %q %q %t %q", again.outDir.Text, again.naming.Text, again.workers.Selected,
			again.resCap.Text, again.themes.Selected, again.apiOn.Checked, again.listen.Text)
	}
	if again.featureSel["indoor_staging"].Selected != "gpu" || len(again.backends) != 1 || len(again.hotEntries) != 1 {
		t.Fatalf("reopened backends %v / features / hot folders %v", again.backends, again.hotEntries)
	}
}

// Keys made in the settings work with the key service; the internal owners (the
// window's and the hot folders', known by id) cannot be rotated or revoked from there.
func TestSettingsKeys(t *testing.T) {
	h := newHarness(t, 1)
	sv := h.w.newSettingsView()
	defer sv.win.Close()
	sv.stopPoll()
	sv.createKey("my-script", core.ScopeStandard)
	var made core.Key
	for _, k := range sv.keys {
		if k.Name == "my-script" {
			made = k
		}
	}
	if made.UUID == "" {
		t.Fatalf("created key not listed: %+v", sv.keys)
	}
	if len(sv.win.Canvas().Overlays().List()) == 0 {
		t.Fatal("the new secret was not shown")
	}
	// A key an admin named like the hot folders' owner is an ordinary key.
	sv.createKey(hotfolder.OwnerKeyName+"-look-alike", core.ScopeStandard)
	hotOwner, err := h.w.deps.Keys.InternalOwner(hotfolder.OwnerKeyName)
	if err != nil {
		t.Fatal(err)
	}
	sv.win.Resize(fyne.NewSize(900, 640))
	for i, k := range sv.keys {
		row := sv.keyList.CreateItem()
		sv.keyList.UpdateItem(i, row)
		btns := row.(*fyne.Container).Objects[1].(*fyne.Container)
		revoke := btns.Objects[1].(*widget.Button)
		internal := k.UUID == h.w.owner || k.UUID == hotOwner
		if internal != revoke.Disabled() {
			t.Errorf("key %s: revoke disabled=%t", k.Name, revoke.Disabled())
		}
	}
}

func TestAutoloadEnvironment(t *testing.T) {
	env := map[string]string{
		AutoloadEnv:        "a, /b ,",
		AutoloadOptionsEnv: "tonecraft=true; quality=80",
		AutoloadHoldEnv:    "0.5",
	}
	s, err := parseAutoload(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(s.paths) != 2 || !filepath.IsAbs(s.paths[0]) || s.paths[1] != "/b" || s.hold != 500*time.Millisecond {
		t.Fatalf("%+v", s)
	}
	if s.options["quality"] != "80" {
		t.Fatalf("options %v", s.options)
	}
	env[AutoloadOptionsEnv] = "quality=500"
	if _, err := parseAutoload(func(k string) string { return env[k] }); err == nil {
		t.Fatal("an invalid option was accepted")
	}
	if s, _ := parseAutoload(func(string) string { return "" }); len(s.paths) != 0 {
		t.Fatal("no paths expected")
	}
}

// The hot folders tab shows the running folders and pauses and resumes them.
func TestSettingsPauseHotFolder(t *testing.T) {
	h := newHarness(t, 1)
	in, out := t.TempDir(), t.TempDir()
	entry := map[string]any{"name": "studio", "input": in, "output": out}
	cfgs, err := hotfolder.Decode([]map[string]any{entry})
	if err != nil {
		t.Fatal(err)
	}
	hot, err := hotfolder.New(cfgs, hotfolder.Deps{DB: h.sys.db, Engine: h.sys.engine, Assets: h.sys.assets, Keys: h.sys.keys})
	if err != nil {
		t.Fatal(err)
	}
	h.w.deps.Hot = hot
	h.cfg.Set(KeyHotfolders, []any{entry})
	sv := h.w.newSettingsView()
	defer sv.win.Close()
	sv.stopPoll()
	sv.hotStatus = hot.Status()
	sv.win.Resize(fyne.NewSize(900, 640))

	row := func() (*fullTextLabel, *widget.Button) {
		o := sv.hotList.CreateItem()
		sv.hotList.UpdateItem(0, o)
		c := o.(*fyne.Container)
		return c.Objects[0].(*fyne.Container).Objects[1].(*fullTextLabel), c.Objects[1].(*fyne.Container).Objects[0].(*widget.Button)
	}
	state, pause := row()
	if pause.Disabled() || pause.Text != "Pause" || !strings.Contains(state.Text, in) {
		t.Fatalf("row: %q, button %q disabled=%t", state.Text, pause.Text, pause.Disabled())
	}
	pause.OnTapped()
	if st := hot.Status()[0]; st.State != hotfolder.StatePaused {
		t.Fatalf("after Pause the folder is %s", st.State)
	}
	state, pause = row()
	if pause.Text != "Resume" || !strings.HasPrefix(state.Text, hotfolder.StatePaused) {
		t.Fatalf("paused row: %q / %q", state.Text, pause.Text)
	}
	pause.OnTapped()
	if st := hot.Status()[0]; st.State == hotfolder.StatePaused {
		t.Fatal("Resume left the folder paused")
	}
}
