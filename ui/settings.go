package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/catalog"
)

// settingsView is the settings window: general, the API and its keys, model
// backends and hot folders. Everything it changes goes to the config file; what the
// running services cannot change on the fly says that it applies at the next start.
type settingsView struct {
	w        *Window
	hotOwner string // uuid of the hot folders' internal owner
	win      fyne.Window
	tabs     *container.AppTabs

	// general
	outDir  *widget.Entry
	naming  *widget.Entry
	workers *widget.Select
	resCap  *widget.Entry
	themes  *widget.RadioGroup

	// API
	apiOn   *widget.Check
	listen  *widget.Entry
	keyList *widget.List
	keys    []core.Key

	// backends
	backends    map[string]map[string]any
	backendList *widget.List
	featureSel  map[string]*widget.Select
	testResult  *widget.Label

	// hot folders
	hotEntries []map[string]any
	hotList    *widget.List
	hotStatus  []hotfolder.FolderStatus
	stopPoll   context.CancelFunc
}

// openSettings shows the settings window (Ctrl+,).
func (w *Window) openSettings() {
	if w.settings != nil {
		w.settings.RequestFocus()
		return
	}
	sv := w.newSettingsView()
	w.settings = sv.win
	sv.win.SetOnClosed(func() {
		sv.stopPoll()
		w.settings = nil
	})
	sv.win.Show()
}

func (w *Window) newSettingsView() *settingsView {
	sv := &settingsView{w: w, win: w.app.NewWindow("Porchlight settings")}
	sv.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon("General", theme.SettingsIcon(), sv.general()),
		container.NewTabItemWithIcon("API", theme.ComputerIcon(), sv.api()),
		container.NewTabItemWithIcon("Model backends", theme.StorageIcon(), sv.backendsTab()),
		container.NewTabItemWithIcon("Hot folders", theme.FolderIcon(), sv.hotTab()),
	)
	sv.tabs.SetTabLocation(container.TabLocationLeading)
	// A dialog: Close at the bottom right, Esc (with no text field focused) and
	// Ctrl+W close it too; each tab saves its own changes.
	closeBtn := widget.NewButtonWithIcon("Close", theme.CancelIcon(), sv.win.Close)
	sv.win.SetContent(container.NewBorder(nil, container.NewBorder(widget.NewSeparator(), nil, nil, closeBtn), nil, nil, sv.tabs))
	sv.win.Canvas().SetOnTypedKey(func(ev *fyne.KeyEvent) {
		if ev.Name == fyne.KeyEscape {
			sv.win.Close()
		}
	})
	sv.win.Canvas().AddShortcut(&desktop.CustomShortcut{KeyName: fyne.KeyW, Modifier: fyne.KeyModifierShortcutDefault},
		func(fyne.Shortcut) { sv.win.Close() })
	sv.win.Resize(fyne.NewSize(880, 600))
	sv.win.CenterOnScreen()
	ctx, cancel := context.WithCancel(w.ctx)
	sv.stopPoll = cancel
	go sv.pollHotFolders(ctx)
	return sv
}

func (sv *settingsView) save(what string) {
	if err := sv.w.cfg.Save(); err != nil {
		dialog.ShowError(err, sv.win)
		return
	}
	sv.w.setStatus(what + " saved to " + sv.w.cfg.File())
}

func note(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

// general: output folder and naming, workers, resolution cap, theme.
func (sv *settingsView) general() fyne.CanvasObject {
	cfg := sv.w.cfg
	sv.outDir = widget.NewEntry()
	sv.outDir.SetText(cfg.String(KeyOutputDir, defaultOutputDir()))
	browse := widget.NewButtonWithIcon("", theme.FolderOpenIcon(), func() {
		d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
			if err == nil && u != nil {
				sv.outDir.SetText(u.Path())
			}
		}, sv.win)
		d.Resize(fyne.NewSize(800, 520))
		d.Show()
	})
	sv.naming = widget.NewEntry()
	sv.naming.SetText(cfg.String(KeyNaming, DefaultNaming))
	sv.naming.Validator = checkTemplate
	example := note("")
	showExample := func() {
		if checkTemplate(sv.naming.Text) != nil {
			example.SetText("Placeholders: " + placeholders)
			return
		}
		example.SetText("For example: " + outputName(sv.naming.Text, nameFields{
			Scene: "living_room", Name: "DSC_0082", Batch: "Maple Street", Index: 3, Date: time.Now(),
		}, ".jpg") + "   (placeholders: " + placeholders + ")")
	}
	sv.naming.OnChanged = func(string) { showExample() }
	showExample()
	opts := []string{"Automatic"}
	for i := 1; i <= max(8, runtime.NumCPU()); i++ {
		opts = append(opts, strconv.Itoa(i))
	}
	sv.workers = widget.NewSelect(opts, nil)
	if n := cfg.Int(KeyWorkers, 0); n > 0 {
		sv.workers.SetSelected(strconv.Itoa(n))
	} else {
		sv.workers.SetSelected("Automatic")
	}
	sv.resCap = widget.NewEntry()
	sv.resCap.SetText(strconv.Itoa(cfg.Int(KeyResCap, 8192)))
	sv.resCap.Validator = checkResCap
	sv.themes = widget.NewRadioGroup([]string{"System", "Light", "Dark"}, func(s string) {
		if s != "" {
			sv.w.setTheme(strings.ToLower(s))
		}
	})
	sv.themes.Horizontal = true
	sv.themes.Required = true
	sv.themes.SetSelected(humanize(cfg.String(KeyTheme, ThemeDark)))
	form := widget.NewForm(
		widget.NewFormItem("Output folder", container.NewBorder(nil, nil, nil, browse, sv.outDir)),
		widget.NewFormItem("File names", sv.naming),
		widget.NewFormItem("", example),
		widget.NewFormItem("Scenes at once", sv.workers),
		widget.NewFormItem("Longest edge (px)", sv.resCap),
		widget.NewFormItem("Theme", sv.themes),
	)
	saveBtn := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() {
		if err := sv.applyGeneral(); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.save("Settings")
	})
	saveBtn.Importance = widget.HighImportance
	where := "Scenes at once and the longest edge apply at the next start."
	if d := sv.w.deps.DataDir; d != "" {
		where += " Imported photos and the database are kept in " + d + "."
	}
	return container.NewBorder(nil, container.NewBorder(nil, nil, nil, saveBtn, note(where)),
		nil, nil, container.NewVScroll(form))
}

func checkResCap(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 256 || n > 20000 {
		return errors.New("a whole number of pixels from 256 to 20000")
	}
	return nil
}

// applyGeneral checks the general fields and sets them in the configuration.
func (sv *settingsView) applyGeneral() error {
	dir := strings.TrimSpace(sv.outDir.Text)
	if dir == "" {
		return errors.New("choose an output folder")
	}
	if err := checkTemplate(sv.naming.Text); err != nil {
		return err
	}
	if err := checkResCap(sv.resCap.Text); err != nil {
		return fmt.Errorf("longest edge: %w", err)
	}
	cfg := sv.w.cfg
	cfg.Set(KeyOutputDir, dir)
	cfg.Set(KeyNaming, sv.naming.Text)
	n, _ := strconv.Atoi(sv.workers.Selected) // "Automatic" is 0
	cfg.Set(KeyWorkers, n)
	c, _ := strconv.Atoi(strings.TrimSpace(sv.resCap.Text))
	cfg.Set(KeyResCap, c)
	return nil
}

// api: the server switch and address, and the keys.
func (sv *settingsView) api() fyne.CanvasObject {
	cfg := sv.w.cfg
	running := "The API is off in this session."
	if sv.w.deps.APIAddr != "" {
		running = "The API is running on http://" + sv.w.deps.APIAddr + " (loopback only)."
	}
	sv.apiOn = widget.NewCheck("Run the API while the window is open", nil)
	sv.apiOn.SetChecked(cfg.Bool(KeyAPIEnabled, true))
	sv.listen = widget.NewEntry()
	sv.listen.SetText(cfg.String(KeyListen, "127.0.0.1:8787"))
	sv.listen.Validator = checkListen
	saveBtn := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() {
		if err := sv.applyAPI(); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.save("API settings")
	})
	top := container.NewVBox(note(running), sv.apiOn,
		widget.NewForm(widget.NewFormItem("Address", sv.listen)),
		container.NewBorder(nil, nil, nil, saveBtn, note("Applies at the next start.")),
		widget.NewSeparator(),
		widget.NewLabelWithStyle("API keys", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}))

	sv.keyList = widget.NewList(
		func() int { return len(sv.keys) },
		func() fyne.CanvasObject {
			name := widget.NewLabel("")
			name.Truncation = fyne.TextTruncateEllipsis
			rotate := widget.NewButtonWithIcon("Rotate", theme.ViewRefreshIcon(), nil)
			revoke := widget.NewButtonWithIcon("Revoke", theme.DeleteIcon(), nil)
			revoke.Importance = widget.DangerImportance
			return container.NewBorder(nil, nil, nil, container.NewHBox(rotate, revoke), name)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(sv.keys) {
				return
			}
			k := sv.keys[i]
			c := o.(*fyne.Container)
			name := c.Objects[0].(*widget.Label)
			btns := c.Objects[1].(*fyne.Container)
			rotate, revoke := btns.Objects[0].(*widget.Button), btns.Objects[1].(*widget.Button)
			used := "never used"
			if k.LastUsedAt != nil {
				used = "last used " + k.LastUsedAt.Local().Format("2006-01-02 15:04")
			}
			label := fmt.Sprintf("%s · %s · %s… · %s", k.Name, k.Scope, k.Prefix, used)
			internal := k.UUID == sv.w.owner || k.UUID == sv.hotOwner
			if internal {
				label += " · used by Porchlight itself"
			}
			name.SetText(label)
			rotate.OnTapped = func() { sv.rotateKey(k) }
			revoke.OnTapped = func() { sv.revokeKey(k) }
			setEnabled(rotate, !internal)
			setEnabled(revoke, !internal)
		})
	newName := widget.NewEntry()
	newName.SetPlaceHolder("Name, e.g. my-script")
	scope := widget.NewSelect([]string{string(core.ScopeStandard), string(core.ScopeAdmin)}, nil)
	scope.SetSelected(string(core.ScopeStandard))
	create := widget.NewButtonWithIcon("Create key", theme.ContentAddIcon(), func() {
		sv.createKey(newName.Text, core.Scope(scope.Selected))
		newName.SetText("")
	})
	create.Importance = widget.HighImportance
	bottom := container.NewBorder(nil, nil, nil, container.NewHBox(scope, create), newName)
	sv.reloadKeys()
	return container.NewBorder(top, bottom, nil, nil, sv.keyList)
}

func checkListen(s string) error {
	host, port, err := net.SplitHostPort(strings.TrimSpace(s))
	if err != nil {
		return errors.New("host:port, e.g. 127.0.0.1:8787")
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return errors.New("the port is a number from 0 to 65535")
	}
	if host == "" {
		return errors.New("name the host, e.g. 127.0.0.1 (loopback keeps the API private)")
	}
	return nil
}

func (sv *settingsView) applyAPI() error {
	if err := checkListen(sv.listen.Text); err != nil {
		return fmt.Errorf("address: %w", err)
	}
	sv.w.cfg.Set(KeyAPIEnabled, sv.apiOn.Checked)
	sv.w.cfg.Set(KeyListen, strings.TrimSpace(sv.listen.Text))
	return nil
}

func (sv *settingsView) reloadKeys() {
	keys, err := sv.w.deps.Keys.List()
	if err != nil {
		sv.w.setStatus(err.Error())
		return
	}
	sv.keys = keys
	// The hot folders' owner is known by its recorded id, never by its name: a key
	// someone named "hotfolders" is an ordinary key.
	if id, err := sv.w.deps.Keys.InternalOwner(hotfolder.OwnerKeyName); err == nil {
		sv.hotOwner = id
	}
	sv.keyList.Refresh()
}

func (sv *settingsView) createKey(name string, scope core.Scope) {
	k, secret, err := sv.w.deps.Keys.Create(strings.TrimSpace(name), scope)
	if err != nil {
		dialog.ShowError(err, sv.win)
		return
	}
	sv.reloadKeys()
	sv.showSecret("Key "+k.Name+" created", secret)
}

func (sv *settingsView) rotateKey(k core.Key) {
	dialog.ShowConfirm("Rotate "+k.Name+"?", "The current secret stops working at once.", func(ok bool) {
		if !ok {
			return
		}
		nk, secret, err := sv.w.deps.Keys.Rotate(k.UUID)
		if err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.reloadKeys()
		sv.showSecret("New secret for "+nk.Name, secret)
	}, sv.win)
}

func (sv *settingsView) revokeKey(k core.Key) {
	dialog.ShowConfirm("Revoke "+k.Name+"?", "Its secret stops working at once; its orders stay.", func(ok bool) {
		if !ok {
			return
		}
		if err := sv.w.deps.Keys.Revoke(k.UUID); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.reloadKeys()
	}, sv.win)
}

// showSecret shows a new secret once, with a copy button.
func (sv *settingsView) showSecret(title, secret string) {
	e := widget.NewEntry()
	e.SetText(secret)
	copyBtn := widget.NewButtonWithIcon("Copy", theme.ContentCopyIcon(), func() {
		sv.win.Clipboard().SetContent(secret)
		sv.w.setStatus("Secret copied to the clipboard.")
	})
	body := container.NewVBox(
		note("This is the only time the secret is shown. Copy it now; only its hash is stored."),
		container.NewBorder(nil, nil, nil, copyBtn, e))
	d := dialog.NewCustom(title, "Done", body, sv.win)
	d.Resize(fyne.NewSize(620, 200))
	d.Show()
}

// Backend protocols the configuration can name (engine/backends and its adapters).
var backendTypes = []string{"iopaint", "comfyui", "a1111", "openai", "remote"}

// featuresWithBackends are the catalog features a backend can run.
func featuresWithBackends() []string {
	var out []string
	for _, f := range catalog.Features(nil) {
		if f.NeedsBackend || f.Key == catalog.FeatureMagicEraser {
			out = append(out, f.Key)
		}
	}
	return out
}

// backendsTab edits `backends` (name -> type, url) and `features` (feature ->
// backend name).
func (sv *settingsView) backendsTab() fyne.CanvasObject {
	sv.backends = readBackends(sv.w.cfg.Get(KeyBackends))
	sv.testResult = note("")
	names := func() []string {
		out := make([]string, 0, len(sv.backends))
		for n := range sv.backends {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	sv.backendList = widget.NewList(
		func() int { return len(sv.backends) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			test := widget.NewButtonWithIcon("Test connection", theme.MediaPlayIcon(), nil)
			del := widget.NewButtonWithIcon("", theme.DeleteIcon(), nil)
			return container.NewBorder(nil, nil, nil, container.NewHBox(test, del), l)
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			ns := names()
			if i >= len(ns) {
				return
			}
			n := ns[i]
			b := sv.backends[n]
			c := o.(*fyne.Container)
			c.Objects[0].(*widget.Label).SetText(fmt.Sprintf("%s · %v · %v", n, b["type"], b["url"]))
			btns := c.Objects[1].(*fyne.Container)
			url, _ := b["url"].(string)
			btns.Objects[0].(*widget.Button).OnTapped = func() { sv.testBackend(n, url) }
			btns.Objects[1].(*widget.Button).OnTapped = func() {
				delete(sv.backends, n)
				sv.refreshBackends()
			}
		})
	name := widget.NewEntry()
	name.SetPlaceHolder("Name, e.g. studio-gpu")
	typ := widget.NewSelect(backendTypes, nil)
	typ.SetSelected("iopaint")
	url := widget.NewEntry()
	url.SetPlaceHolder("http://127.0.0.1:8080")
	key := widget.NewPasswordEntry()
	key.SetPlaceHolder("API key, if it needs one")
	add := widget.NewButtonWithIcon("Add", theme.ContentAddIcon(), func() {
		if err := sv.addBackend(name.Text, typ.Selected, url.Text, key.Text); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		name.SetText("")
		url.SetText("")
		key.SetText("")
	})
	addRow := container.NewBorder(nil, nil, nil, add,
		container.NewGridWithColumns(4, name, typ, url, key))

	sv.featureSel = map[string]*widget.Select{}
	features := readFeatures(sv.w.cfg.Get(KeyFeatures))
	var items []*widget.FormItem
	for _, f := range featuresWithBackends() {
		s := widget.NewSelect(append([]string{"None"}, names()...), nil)
		if b, ok := features[f]; ok {
			s.SetSelected(b)
		} else {
			s.SetSelected("None")
		}
		sv.featureSel[f] = s
		items = append(items, widget.NewFormItem(humanize(f), s))
	}
	saveBtn := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() {
		if err := sv.applyBackends(); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.save("Model backends")
	})
	saveBtn.Importance = widget.HighImportance
	top := container.NewVBox(
		note("Generative features (staging, declutter, mess cleaner) run on a model backend; the magic eraser runs built in unless mapped. Applies at the next start."),
		addRow, sv.testResult)
	bottom := container.NewVBox(widget.NewSeparator(),
		widget.NewLabelWithStyle("Which backend runs each feature", fyne.TextAlignLeading, fyne.TextStyle{Bold: true}),
		widget.NewForm(items...), container.NewBorder(nil, nil, nil, saveBtn))
	return container.NewBorder(top, bottom, nil, nil, sv.backendList)
}

func (sv *settingsView) refreshBackends() {
	var names []string
	for n := range sv.backends {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, s := range sv.featureSel {
		sel := s.Selected
		s.Options = append([]string{"None"}, names...)
		if _, ok := sv.backends[sel]; !ok {
			sel = "None"
		}
		s.SetSelected(sel)
		s.Refresh()
	}
	sv.backendList.Refresh()
}

func (sv *settingsView) addBackend(name, typ, url, apiKey string) error {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" || name == "none" {
		return errors.New("give the backend a name")
	}
	entry := map[string]any{"type": typ, "url": strings.TrimSpace(url)}
	if k := strings.TrimSpace(apiKey); k != "" {
		entry["api_key"] = k
	}
	// The engine's own parser, so what is saved is what it will accept.
	if _, err := backends.ParseSpec(name, entry); err != nil {
		return err
	}
	sv.backends[name] = entry
	sv.refreshBackends()
	return nil
}

func (sv *settingsView) applyBackends() error {
	features := map[string]any{}
	for f, s := range sv.featureSel {
		if s.Selected != "" && s.Selected != "None" {
			features[f] = s.Selected
		}
	}
	backends := map[string]any{}
	for n, b := range sv.backends {
		backends[n] = b
	}
	sv.w.cfg.Set(KeyBackends, backends)
	sv.w.cfg.Set(KeyFeatures, features)
	return nil
}

// testBackend makes a plain HTTP GET of the backend's URL with a timeout.
func (sv *settingsView) testBackend(name, url string) {
	sv.testResult.SetText("Testing " + name + "…")
	go func() {
		msg := testConnection(url, 5*time.Second)
		sv.w.do(func() { sv.testResult.SetText(name + ": " + msg) })
	}()
}

// testConnection answers whether url answers an HTTP GET within timeout.
func testConnection(url string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "not a usable URL: " + err.Error()
	}
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "no answer: " + err.Error()
	}
	resp.Body.Close()
	return fmt.Sprintf("reachable (HTTP %d in %d ms)", resp.StatusCode, time.Since(start).Milliseconds())
}

func readBackends(v any) map[string]map[string]any {
	out := map[string]map[string]any{}
	m, ok := v.(map[string]any)
	if !ok {
		return out
	}
	for k, e := range m {
		if em, ok := e.(map[string]any); ok {
			out[k] = em
		}
	}
	return out
}

func readFeatures(v any) map[string]string {
	out := map[string]string{}
	if m, ok := v.(map[string]any); ok {
		for k, e := range m {
			if s, ok := e.(string); ok {
				out[k] = s
			}
		}
	}
	if m, ok := v.(map[string]string); ok {
		for k, e := range m {
			out[k] = e
		}
	}
	return out
}

// hotTab lists the configured hot folders with their live state; folders can be
// paused and resumed at once, and added, edited or removed, which starts them when saved.
func (sv *settingsView) hotTab() fyne.CanvasObject {
	sv.hotEntries = readHotEntries(sv.w.cfg.Get(KeyHotfolders))
	sv.hotList = widget.NewList(
		func() int { return len(sv.hotEntries) },
		func() fyne.CanvasObject {
			title := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			// The state line ends with the folder's last error, which can be long.
			state := newFullTextLabel("", "Hot folder", func() fyne.Window { return sv.win })
			state.SizeName = theme.SizeNameCaptionText
			pause := widget.NewButtonWithIcon("Pause", theme.MediaPauseIcon(), nil)
			edit := widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), nil)
			del := widget.NewButtonWithIcon("", theme.DeleteIcon(), nil)
			return container.NewBorder(nil, nil, nil, container.NewHBox(pause, edit, del), container.NewVBox(title, state))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i >= len(sv.hotEntries) {
				return
			}
			e := sv.hotEntries[i]
			c := o.(*fyne.Container)
			texts := c.Objects[0].(*fyne.Container)
			btns := c.Objects[1].(*fyne.Container)
			name := hotName(e)
			texts.Objects[0].(*widget.Label).SetText(name)
			st, live := sv.statusOf(name)
			line := fmt.Sprintf("%v → %v", e["input"], e["output"])
			if live {
				line = fmt.Sprintf("%s · %s · %d waiting, %d working, %d done, %d failed", st.State, line, st.Pending, st.Processing, st.Done, st.Failed)
				if st.LastError != "" {
					line += " · " + st.LastError
				} else if st.Reason != "" {
					line += " · " + st.Reason
				}
			} else {
				line += " · starts when saved"
			}
			texts.Objects[1].(*fullTextLabel).SetText(line)
			pause := btns.Objects[0].(*widget.Button)
			if live && st.State == hotfolder.StatePaused {
				pause.SetText("Resume")
				pause.SetIcon(theme.MediaPlayIcon())
			} else {
				pause.SetText("Pause")
				pause.SetIcon(theme.MediaPauseIcon())
			}
			setEnabled(pause, live && st.State != hotfolder.StateDisabled)
			pause.OnTapped = func() { sv.togglePause(name, st.State == hotfolder.StatePaused) }
			btns.Objects[1].(*widget.Button).OnTapped = func() { sv.editHot(i) }
			btns.Objects[2].(*widget.Button).OnTapped = func() {
				sv.hotEntries = append(sv.hotEntries[:i], sv.hotEntries[i+1:]...)
				sv.hotList.Refresh()
			}
		})
	add := widget.NewButtonWithIcon("Add hot folder", theme.ContentAddIcon(), func() { sv.editHot(-1) })
	saveBtn := widget.NewButtonWithIcon("Save", theme.DocumentSaveIcon(), func() {
		if err := sv.applyHot(); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.save("Hot folders")
		if err := sv.startHot(); err != nil {
			dialog.ShowError(err, sv.win)
		}
	})
	saveBtn.Importance = widget.HighImportance
	top := note("Photos dropped into an input folder are grouped, processed and written to its output folder. Saved folders start at once; pause and resume act at once.")
	return container.NewBorder(top, container.NewBorder(nil, nil, add, saveBtn), nil, nil, sv.hotList)
}

func hotName(e map[string]any) string {
	if n, ok := e["name"].(string); ok && n != "" {
		return n
	}
	if in, ok := e["input"].(string); ok {
		parts := strings.Split(strings.TrimRight(in, "/"), "/")
		return parts[len(parts)-1]
	}
	return "hot folder"
}

func (sv *settingsView) statusOf(name string) (hotfolder.FolderStatus, bool) {
	for _, s := range sv.hotStatus {
		if s.Name == name {
			return s, true
		}
	}
	return hotfolder.FolderStatus{}, false
}

// pollHotFolders refreshes the folders' live state while the window is open.
func (sv *settingsView) pollHotFolders(ctx context.Context) {
	if sv.w.deps.Hot == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		st := sv.w.deps.Hot.Status()
		sv.w.do(func() {
			sv.hotStatus = st
			sv.hotList.Refresh()
		})
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func (sv *settingsView) togglePause(name string, paused bool) {
	hot := sv.w.deps.Hot
	if hot == nil {
		return
	}
	var err error
	if paused {
		err = hot.Resume(name)
	} else {
		err = hot.Pause(name)
	}
	if err != nil {
		dialog.ShowError(err, sv.win)
		return
	}
	sv.hotStatus = hot.Status()
	sv.hotList.Refresh()
}

// editHot edits entry i (-1: a new one) in a form dialog.
func (sv *settingsView) editHot(i int) {
	e := map[string]any{"enabled": true, "grouping": "auto", "naming": "{name}", "originals": "move"}
	if i >= 0 {
		e = cloneMap(sv.hotEntries[i])
	}
	str := func(k string) string { s, _ := e[k].(string); return s }
	name := widget.NewEntry()
	name.SetText(str("name"))
	name.SetPlaceHolder("Defaults to the input folder's name")
	input := widget.NewEntry()
	input.SetText(str("input"))
	output := widget.NewEntry()
	output.SetText(str("output"))
	folderPicker := func(target *widget.Entry) fyne.CanvasObject {
		b := widget.NewButtonWithIcon("", theme.FolderOpenIcon(), func() {
			d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
				if err == nil && u != nil {
					target.SetText(u.Path())
				}
			}, sv.win)
			d.Resize(fyne.NewSize(800, 520))
			d.Show()
		})
		return container.NewBorder(nil, nil, nil, b, target)
	}
	looks := []string{"None"}
	looks = append(looks, catalog.PresetKeys(catalog.PresetsTonecraft)...)
	preset := widget.NewSelect(looks, nil)
	if p := str("preset"); p != "" {
		preset.SetSelected(p)
	} else {
		preset.SetSelected("None")
	}
	grouping := widget.NewEntry()
	grouping.SetText(str("grouping"))
	grouping.SetPlaceHolder("auto, subfolder or count:N")
	naming := widget.NewEntry()
	naming.SetText(str("naming"))
	originals := widget.NewSelect([]string{hotfolder.OriginalsLeave, hotfolder.OriginalsMove, hotfolder.OriginalsDelete}, nil)
	originals.SetSelected(str("originals"))
	enabled := widget.NewCheck("Enabled", nil)
	enabled.SetChecked(e["enabled"] != false)
	opts := sv.hotOptionsForm(e)
	optsScroll := container.NewVScroll(opts.Object())
	optsScroll.SetMinSize(fyne.NewSize(440, 280))
	items := []*widget.FormItem{
		widget.NewFormItem("Name", name),
		widget.NewFormItem("Input folder", folderPicker(input)),
		widget.NewFormItem("Output folder", folderPicker(output)),
		widget.NewFormItem("Tone look", preset),
		widget.NewFormItem("Grouping", grouping),
		widget.NewFormItem("File names", naming),
		widget.NewFormItem("Originals", originals),
		widget.NewFormItem("", enabled),
		widget.NewFormItem("Order options", optsScroll),
	}
	title := "Add hot folder"
	if i >= 0 {
		title = "Edit " + hotName(e)
	}
	d := dialog.NewForm(title, "Keep", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		set := func(k, v string) {
			if v = strings.TrimSpace(v); v == "" {
				delete(e, k)
			} else {
				e[k] = v
			}
		}
		set("name", name.Text)
		set("input", input.Text)
		set("output", output.Text)
		set("grouping", grouping.Text)
		set("naming", naming.Text)
		set("originals", originals.Selected)
		if preset.Selected == "None" {
			delete(e, "preset")
		} else {
			e["preset"] = preset.Selected
		}
		e["enabled"] = enabled.Checked
		setHotOptions(e, opts.Own())
		next := append([]map[string]any(nil), sv.hotEntries...)
		if i >= 0 {
			next[i] = e
		} else {
			next = append(next, e)
		}
		if _, err := hotfolder.Decode(next); err != nil {
			dialog.ShowError(err, sv.win)
			return
		}
		sv.hotEntries = next
		sv.hotList.Refresh()
	}, sv.win)
	d.Resize(fyne.NewSize(720, 760))
	d.Show()
}

// hotOptionsForm is the order options of hot folder entry e: the same form, from
// the same option table, as the window's, so a folder can set every option the API
// has (those that need a photo of their own, a mask, are refused on Keep).
func (sv *settingsView) hotOptionsForm(e map[string]any) *optionsForm {
	f := newOptionsForm(false, sv.w.deps.Available, nil)
	f.Set(core.Options{}, optionsFromConfig(e["options"]), false)
	return f
}

// setHotOptions stores o as entry e's options, as the config file keeps them.
func setHotOptions(e map[string]any, o core.Options) {
	if m := optionsToMap(o); len(m) > 0 {
		e["options"] = m
	} else {
		delete(e, "options")
	}
}

// startHot hands the saved entries to the running hot-folder service, so added
// and edited folders start now. Folders with scenes in flight change once those
// are done (at the latest at the next start); the error says which.
func (sv *settingsView) startHot() error {
	hot := sv.w.deps.Hot
	if hot == nil {
		return nil
	}
	cfgs, err := hotfolder.Decode(sv.hotEntries)
	if err != nil {
		return err
	}
	err = hot.Apply(cfgs)
	sv.hotStatus = hot.Status()
	sv.hotList.Refresh()
	return err
}

// applyHot validates the entries as the service will read them and sets them.
func (sv *settingsView) applyHot() error {
	if _, err := hotfolder.Decode(sv.hotEntries); err != nil {
		return err
	}
	list := make([]any, len(sv.hotEntries))
	for i, e := range sv.hotEntries {
		list[i] = e
	}
	sv.w.cfg.Set(KeyHotfolders, list)
	return nil
}

func readHotEntries(v any) []map[string]any {
	var out []map[string]any
	switch l := v.(type) {
	case []any:
		for _, e := range l {
			if m, ok := e.(map[string]any); ok {
				out = append(out, cloneMap(m))
			}
		}
	case []map[string]any:
		for _, m := range l {
			out = append(out, cloneMap(m))
		}
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
