// Package ui is Porchlight's desktop window (Fyne): the photographer drops exposure
// brackets on it, adjusts the scenes and the edit, processes them as a batch and
// compares the results with the originals.
//
// The window holds one shoot at a time (shoot.go): named, with a persistent id,
// stored through Deps.Shoots on every change (debounced, by a background saver)
// and listed in the sidebar (sidebar.go) with the hot folders' work, which shows
// as read-only shoots built from the engine's orders. The most recent shoot opens
// on start exactly as it was left; its submitted scenes re-attach to their orders,
// which the engine kept running. Processing a scene again keeps its earlier
// results as versions until they are deleted.
//
// The window talks to the engine through the small interfaces of deps.go, never
// through HTTP, and acts as the standard API key named "window" (OwnerKey), so its
// photos and orders are kept apart from API clients' like any key's. Background
// work (grouping, imports, submissions, the engine's events, deliveries) never runs
// on the UI goroutine; widgets change only through fyne.Do, and redraws are
// coalesced to at most ten a second, so the window stays responsive under load.
//
// Settings live in the config file (see config.go for the window's keys). The
// environment variable PORCHLIGHT_UI_AUTOLOAD (see autoload.go) drops paths and
// processes them on start, for demos and scripted screenshots.
package ui

import (
	"context"
	"errors"
	"fmt"
	"image"
	"log"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/ui/appicon"
)

// AppID is the Fyne application id (as in FyneApp.toml).
const AppID = "photo.porchlight.app"

// Window is the main window and everything it drives.
type Window struct {
	app   fyne.App
	win   fyne.Window
	deps  Deps
	cfg   *Config
	owner string
	do    func(func()) // runs a function on the UI goroutine

	ctx    context.Context
	cancel context.CancelFunc
	busy   sync.WaitGroup // background work started by the window

	shoot    *Shoot
	thumbs   *thumbCache
	defaults core.Options // the shoot's options (UI goroutine)

	shoots       Shoots
	hotOwner     string          // the hot folders' owner ("" when unknown)
	side         *sidebar        // the shoots list
	shownVersion map[int]int     // scene id -> version shown in the detail (UI goroutine)
	saveQ        chan core.Shoot // snapshots for the saver, in order
	deleted      atomic.Value    // id of the shoot deleted last: never saved again

	savedMu sync.Mutex
	saved   map[string]bool      // shoots written to the store
	savedAt map[string]time.Time // the newest snapshot written of each

	saveMu      sync.Mutex
	saveDone    *sync.Cond // signalled as queued snapshots are written
	savePending int        // snapshots queued and not yet written

	bgMu sync.Mutex
	bg   map[string]*Shoot // window shoots switched away from with work under way

	deliverMu sync.Mutex
	delivered map[string]bool // orders whose photo was written (or is being)

	importMu    sync.Mutex
	importQueue []string
	importSeen  map[string]bool
	importWake  chan struct{}

	runsMu  sync.Mutex
	runs    map[int]*run
	nextRun int

	cancelMu     sync.Mutex
	cancelWanted map[int]bool // scenes cancelled while being submitted

	dirty     atomic.Bool
	queued    atomic.Bool
	drawnVer  atomic.Uint64
	selected  int // scene id shown in the detail, 0 for the overview
	onDropped func(fyne.Position, []fyne.URI)

	// widgets
	list        *widget.List
	grid        *widget.GridWrap
	center      *fyne.Container
	overview    fyne.CanvasObject
	emptyState  fyne.CanvasObject
	detail      *detailView
	hotDoneMu   sync.Mutex
	hotDoneSeen map[string]time.Time // hot orders seen completed without their result yet, by order id
	undoDelete  func()               // puts back the scene deleted last; nil when there is none
	undoBtn     *widget.Button       // shown while undoDelete is set
	adjust      *adjustView          // the sliders of the scene shown
	shootForm   *optionsForm
	sceneForm   *optionsForm
	sceneHeader *widget.Label
	sceneReset  *widget.Button
	sideTabs    *container.AppTabs
	processBtn  *widget.Button
	cancelBtn   *widget.Button
	statusText  *fullTextLabel
	countsText  *widget.Label
	overallBar  *thinBar
	overallPct  *widget.Label
	activity    *widget.Activity
	activityMsg *widget.Label
	listActions []*widget.Button
	settings    fyne.Window
	lastNotice  *fyne.Notification // the last system notification sent

	sceneFormKey string        // what the scene form shows, to skip rebinding it
	ranWith      *widget.Label // a submitted scene's resolved settings
	appBar       *fyne.Container
}

// setText changes a label only when its text differs: measuring text is the
// costly part of a redraw.
func setText(l *widget.Label, s string) {
	if l.Text != s {
		l.SetText(s)
	}
}

// Run opens the main window and blocks until it is closed or ctx ends.
func Run(ctx context.Context, deps Deps) error {
	log.SetOutput(newFyneLogFilter(log.Writer()))
	a := fyneapp.NewWithID(AppID)
	a.SetIcon(fyne.NewStaticResource("porchlight.png", appicon.PNG()))
	w, err := New(a, deps)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		fyne.Do(a.Quit)
	}()
	w.win.Show()
	w.startAutoload()
	a.Run()
	w.Close()
	return nil
}

// New builds the main window on app a with the given services; it does not show it.
func New(a fyne.App, deps Deps) (*Window, error) { return newWindow(a, deps, fyne.Do) }

// newWindow is New with the function that runs work on the UI goroutine (tests
// drive their own loop).
func newWindow(a fyne.App, deps Deps, do func(func())) (*Window, error) {
	if deps.Engine == nil || deps.Assets == nil || deps.Keys == nil {
		return nil, errors.New("ui: the window needs the engine, the asset store and the key service")
	}
	if deps.Config == nil {
		deps.Config = NewConfig(nil, "")
	}
	owner, err := OwnerKey(deps.Keys)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Window{
		app: a, deps: deps, cfg: deps.Config, owner: owner, do: do,
		ctx: ctx, cancel: cancel, shoot: NewShoot(),
		importSeen: map[string]bool{}, importWake: make(chan struct{}, 1),
		runs: map[int]*run{}, cancelWanted: map[int]bool{},
		shoots: deps.Shoots, shownVersion: map[int]int{}, saveQ: make(chan core.Shoot, 64),
		saved: map[string]bool{}, savedAt: map[string]time.Time{}, delivered: map[string]bool{},
		bg: map[string]*Shoot{},
	}
	if w.shoots == nil {
		w.shoots = &memShoots{}
	}
	w.saveDone = sync.NewCond(&w.saveMu)
	// The hot folders' work is listed beside the window's; without its owner the
	// sidebar lists the window's shoots only.
	if hot, err := deps.Keys.InternalOwner(keys.OwnerHotfolders); err == nil {
		w.hotOwner = hot
	}
	w.defaults = catalog.CorrectionsOn(optionsFromConfig(deps.Config.Get(KeyOptions)))
	// The most recent shoot opens as it was left.
	recs, err := w.shoots.List(ctx, owner)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("ui: list the shoots: %w", err)
	}
	for _, r := range recs {
		w.saved[r.ID] = true
	}
	resumed := len(recs) > 0
	if resumed {
		w.shoot = LoadShoot(recs[0])
		if o := w.shoot.Options(); len(optionsToMap(o)) > 0 {
			w.defaults = o
		}
	}
	w.shoot.SetOptions(w.defaults)
	w.thumbs = newThumbCache(600, w.markDirty)
	a.Settings().SetTheme(newTheme(w.cfg.String(KeyTheme, ThemeDark)))
	w.win = a.NewWindow("Porchlight")
	w.win.SetIcon(fyne.NewStaticResource("porchlight.png", appicon.PNG()))
	w.build()
	w.win.Resize(fyne.NewSize(1360, 860))
	w.win.SetMaster()
	w.onDropped = func(_ fyne.Position, uris []fyne.URI) { w.Drop(urisToPaths(uris)) }
	w.win.SetOnDropped(w.onDropped)
	w.win.SetCloseIntercept(w.requestClose)
	w.shortcuts()
	w.start()
	w.reloadShoots()
	if resumed {
		id := w.shoot.ID()
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.reattach(w.ctx, id)
		}()
	}
	return w, nil
}

// requestClose closes the window, asking first while scenes are being processed
// (the engine goes on with them, and the shoot re-attaches at the next start).
func (w *Window) requestClose() {
	c := w.shoot.Counts()
	if c.Active == 0 {
		w.closeNow()
		return
	}
	msg := fmt.Sprintf("%d %s still being processed. Porchlight goes on with them when it starts again, and they show in this shoot then.",
		c.Active, plural(c.Active, "scene is", "scenes are"))
	dialog.ShowConfirm("Close Porchlight?", msg, func(ok bool) {
		if ok {
			w.closeNow()
		}
	}, w.win)
}

func (w *Window) closeNow() {
	w.rememberOptions()
	w.win.Close()
}

// start runs the background work: imports, ingest polling, the event tracker, the
// thumbnail loaders and the redraw ticker.
func (w *Window) start() {
	goBusy := func(f func(context.Context)) {
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			f(w.ctx)
		}()
	}
	for range 2 {
		goBusy(w.importer)
	}
	goBusy(w.ingestWatcher)
	goBusy(w.tracker)
	for range 2 {
		goBusy(w.thumbs.work)
	}
	goBusy(w.saver)
	goBusy(func(ctx context.Context) {
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-w.ctx.Done():
				return
			case <-t.C:
				w.flushRedraw()
			}
		}
	})
}

// Close stops the window's background work, waits for it and saves the shoot.
func (w *Window) Close() {
	w.cancel()
	w.busy.Wait()
	w.flushSaves()
}

// Owner is the key uuid the window acts as.
func (w *Window) Owner() string { return w.owner }

// FyneWindow is the underlying window.
func (w *Window) FyneWindow() fyne.Window { return w.win }

// markDirty asks for a redraw at the next tick.
func (w *Window) markDirty() { w.dirty.Store(true) }

// flushRedraw queues one redraw when something changed and none is queued yet.
func (w *Window) flushRedraw() {
	if !w.dirty.Load() && w.shoot.Version() == w.drawnVer.Load() {
		return
	}
	if !w.queued.CompareAndSwap(false, true) {
		return
	}
	w.dirty.Store(false)
	w.do(func() {
		w.queued.Store(false)
		w.refresh()
	})
}

// refresh redraws everything that shows the shoot (UI goroutine).
func (w *Window) refresh() {
	w.drawnVer.Store(w.shoot.Version())
	n := w.shoot.Len()
	w.list.Refresh()
	if w.selected != 0 {
		if _, ok := w.shoot.Get(w.selected); !ok {
			w.selectScene(0)
		}
	}
	switch {
	case n == 0:
		w.showCenter(w.emptyState)
	case w.selected == 0:
		w.grid.Refresh()
		w.showCenter(w.overview)
	default:
		w.showCenter(w.detail.Object())
		w.detail.update()
	}
	c := w.shoot.Counts()
	label := "Process"
	if c.Draft > 0 {
		label = fmt.Sprintf("Process %d %s", c.Draft, plural(c.Draft, "scene", "scenes"))
	}
	setEnabled(w.processBtn, c.Draft > 0)
	if w.processBtn.Text != label {
		w.processBtn.SetText(label)
		w.appBar.Refresh() // the button's width changed
	}
	setEnabled(w.cancelBtn, c.Active > 0)
	setText(w.countsText, countsLine(c))
	submitted := c.Total - c.Draft
	if submitted > 0 {
		w.overallBar.SetValue(c.Progress)
		setText(w.overallPct, fmt.Sprintf("%.0f%%", c.Progress*100))
		w.overallBar.Show()
		w.overallPct.Show()
	} else {
		w.overallBar.Hide()
		w.overallPct.Hide()
	}
	w.updateSceneForm()
	w.updateAdjust()
	w.updateListActions()
	w.updateSidebar()
	title := "Porchlight · " + w.shoot.Name()
	if c.Total > 0 {
		title += " · " + countsLine(Counts{Total: c.Total, Completed: c.Completed, Failed: c.Failed, Active: c.Active, Queued: c.Queued, Draft: c.Draft})
	}
	if w.win.Title() != title {
		w.win.SetTitle(title)
	}
}

func countsLine(c Counts) string {
	if c.Total == 0 {
		return "No scenes"
	}
	s := fmt.Sprintf("%d %s", c.Total, plural(c.Total, "scene", "scenes"))
	if c.Draft > 0 {
		s += fmt.Sprintf(" · %d to process", c.Draft)
	}
	if running := c.Active - c.Queued; running > 0 {
		s += fmt.Sprintf(" · %d working", running)
	}
	if c.Queued > 0 {
		s += fmt.Sprintf(" · %d queued", c.Queued)
	}
	if c.Completed > 0 {
		s += fmt.Sprintf(" · %d done", c.Completed)
	}
	if c.Failed > 0 {
		s += fmt.Sprintf(" · %d failed", c.Failed)
	}
	// Only running scenes have an estimate; with scenes still queued the longest
	// of them would promise too much.
	if c.Active > 0 && c.Queued == 0 && c.ETASeconds > 0 {
		s += " · " + etaText(c.ETASeconds)
	}
	return s
}

func etaText(sec int) string {
	switch {
	case sec < 60:
		return fmt.Sprintf("about %d s left", max(sec, 1))
	case sec < 3600:
		return fmt.Sprintf("about %d min left", (sec+30)/60)
	}
	return fmt.Sprintf("about %.1f h left", float64(sec)/3600)
}

func (w *Window) showCenter(o fyne.CanvasObject) {
	if len(w.center.Objects) == 1 && w.center.Objects[0] == o {
		return
	}
	w.center.Objects = []fyne.CanvasObject{o}
	w.center.Refresh()
}

// build lays out the window: the app bar, the scene list on the left, the photo in
// the middle, the options on the right and the status bar at the bottom.
func (w *Window) build() {
	w.statusText = newFullTextLabel("Drop bracket folders or photos on the window to begin.", "Message",
		func() fyne.Window { return w.win })
	w.countsText = widget.NewLabel("")
	w.overallBar = newThinBar()
	w.overallPct = widget.NewLabel("")
	w.overallBar.Hide()
	w.overallPct.Hide()
	w.activity = widget.NewActivity()
	w.activityMsg = widget.NewLabel("")
	w.activity.Hide()
	w.activityMsg.Hide()

	w.detail = newDetailView(w)
	w.adjust = newAdjustView(w)
	w.adjust.onPreview = w.showAdjusted
	w.list = w.buildList()
	w.grid = w.buildGrid()
	w.overview = w.buildOverview()
	w.emptyState = w.buildEmptyState()
	w.center = container.NewStack(w.emptyState)

	left := w.buildLeft()
	right := w.buildRight()
	top := w.buildAppBar()
	api := "API off"
	if w.deps.APIAddr != "" {
		api = "API on http://" + w.deps.APIAddr
	}
	apiLabel := widget.NewLabel(api)
	apiLabel.Importance = widget.LowImportance
	barBox := container.NewCenter(container.NewGridWrap(fyne.NewSize(160, 6), w.overallBar))
	w.undoBtn = widget.NewButtonWithIcon("Undo", theme.ContentUndoIcon(), w.undoLast)
	w.undoBtn.Importance = widget.LowImportance
	w.undoBtn.Hide()
	status := container.NewBorder(nil, nil,
		container.NewHBox(w.activity, w.activityMsg, w.undoBtn),
		container.NewHBox(w.countsText, barBox, w.overallPct, widget.NewSeparator(), apiLabel),
		w.statusText)
	bottom := container.NewVBox(widget.NewSeparator(), status)

	mid := container.NewHSplit(w.center, right)
	mid.Offset = 0.72
	scenes := container.NewHSplit(left, mid)
	scenes.Offset = 0.26
	main := container.NewHSplit(w.buildSidebar(), scenes)
	main.Offset = 0.15
	w.win.SetContent(container.NewBorder(top, bottom, nil, nil, main))
}

func (w *Window) buildAppBar() fyne.CanvasObject {
	icon := canvas.NewImageFromResource(fyne.NewStaticResource("porchlight.png", appicon.PNG()))
	icon.FillMode = canvas.ImageFillContain
	icon.SetMinSize(fyne.NewSize(28, 28))
	title := widget.NewLabelWithStyle("Porchlight", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	addFiles := widget.NewButtonWithIcon("Add photos", theme.FileImageIcon(), w.pickFile)
	addFolder := widget.NewButtonWithIcon("Add folder", theme.FolderOpenIcon(), w.pickFolder)
	importShoot := widget.NewButtonWithIcon("Import shoot…", theme.DownloadIcon(), w.importShoot)
	w.processBtn = widget.NewButtonWithIcon("Process", theme.MediaPlayIcon(), func() { w.Process() })
	w.processBtn.Importance = widget.HighImportance
	w.processBtn.Disable()
	w.cancelBtn = widget.NewButtonWithIcon("Cancel all", theme.MediaStopIcon(), w.cancelAll)
	w.cancelBtn.Disable()
	settings := widget.NewButtonWithIcon("", theme.SettingsIcon(), w.openSettings)
	themeBtn := widget.NewButtonWithIcon("", theme.ColorPaletteIcon(), w.toggleTheme)
	left := container.NewHBox(icon, title, widget.NewSeparator(), addFiles, addFolder, importShoot)
	right := container.NewHBox(w.cancelBtn, w.processBtn, widget.NewSeparator(), themeBtn, settings)
	w.appBar = container.NewBorder(nil, nil, left, right)
	return container.NewVBox(w.appBar, widget.NewSeparator())
}

func (w *Window) buildLeft() fyne.CanvasObject {
	header := widget.NewLabelWithStyle("Scenes", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	up := widget.NewButtonWithIcon("", theme.MoveUpIcon(), func() { w.moveSelected(-1) })
	down := widget.NewButtonWithIcon("", theme.MoveDownIcon(), func() { w.moveSelected(1) })
	merge := widget.NewButtonWithIcon("Merge…", theme.ContentAddIcon(), w.mergeDialog)
	remove := widget.NewButtonWithIcon("", theme.DeleteIcon(), w.deleteSelected)
	rename := widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), w.renameSelected)
	clearDone := widget.NewButtonWithIcon("Clear finished", theme.ContentClearIcon(), func() {
		if n := w.shoot.ClearSettled(); n > 0 {
			w.setStatus(fmt.Sprintf("Cleared %d finished %s.", n, plural(n, "scene", "scenes")))
		}
		w.refresh()
	})
	for _, b := range []*widget.Button{up, down, merge, remove, rename} {
		b.Importance = widget.LowImportance
	}
	clearDone.Importance = widget.LowImportance
	w.listActions = []*widget.Button{up, down, merge, remove, rename}
	actions := container.NewHBox(up, down, merge, rename, remove)
	top := container.NewBorder(nil, nil, header, actions)
	return container.NewBorder(top, container.NewHBox(clearDone), nil, nil, w.list)
}

func (w *Window) buildRight() fyne.CanvasObject {
	w.shootForm = newOptionsForm(false, w.deps.Available, func(o core.Options) {
		w.defaults = o
		w.shoot.SetOptions(o)
		w.markDirty()
	})
	w.shootForm.Set(core.Options{}, w.defaults, false)
	w.sceneForm = newOptionsForm(true, w.deps.Available, func(o core.Options) {
		if err := w.shoot.SetOverrides(w.selected, o); err != nil {
			w.setStatus(err.Error())
		}
		w.markDirty()
	})
	w.shootForm.pickMask = w.pickMask
	w.sceneForm.pickMask = w.pickMask
	w.sceneHeader = widget.NewLabel("Select a scene to change its settings; everything else follows the shoot.")
	w.sceneHeader.Wrapping = fyne.TextWrapWord
	w.sceneReset = widget.NewButtonWithIcon("Use shoot settings", theme.ContentUndoIcon(), func() {
		if err := w.shoot.SetOverrides(w.selected, core.Options{}); err != nil {
			w.setStatus(err.Error())
			return
		}
		w.updateSceneForm()
		w.refresh()
	})
	shootHelp := widget.NewLabel("Applies to every scene you process next.")
	shootHelp.Importance = widget.LowImportance
	shootTab := container.NewVScroll(container.NewPadded(container.NewVBox(shootHelp, w.shootForm.Object())))
	w.ranWith = widget.NewLabel("")
	w.ranWith.Wrapping = fyne.TextWrapWord
	w.ranWith.Hide()
	sceneTab := container.NewVScroll(container.NewPadded(container.NewVBox(w.sceneHeader, w.sceneReset, w.ranWith, w.sceneForm.Object())))
	w.sideTabs = container.NewAppTabs(
		container.NewTabItemWithIcon("Shoot", theme.GridIcon(), shootTab),
		container.NewTabItemWithIcon("Scene", theme.FileImageIcon(), sceneTab),
		container.NewTabItemWithIcon("Adjust", theme.ColorChromaticIcon(), container.NewPadded(w.adjust.Object())),
	)
	w.sideTabs.OnSelected = func(*container.TabItem) { w.updateAdjust() }
	return w.sideTabs
}

// updateSceneForm binds the scene tab to the selected scene, when the scene, its
// state, its overrides or the shoot's options changed.
func (w *Window) updateSceneForm() {
	s, ok := w.shoot.Get(w.selected)
	key := fmt.Sprintf("%d/%d/%v/%v/%d", s.ID, s.Phase, optionsToMap(s.Overrides), optionsToMap(w.defaults), len(w.shoot.Drafts()))
	if key == w.sceneFormKey {
		return
	}
	w.sceneFormKey = key
	if !ok {
		w.sceneHeader.SetText("Select a scene to change its settings; everything else follows the shoot.")
		w.sceneForm.Set(w.defaults, core.Options{}, w.shoot.Len() == 1)
		w.sceneForm.SetDisabled(true)
		w.sceneReset.Disable()
		return
	}
	single := len(w.shoot.Drafts()) == 1 && s.Phase == PhaseDraft
	w.sceneForm.Set(w.defaults, s.Overrides, single)
	if s.Phase == PhaseDraft {
		w.sceneHeader.SetText(s.Name + ": changes here apply to this scene only (marked •).")
		w.sceneForm.SetDisabled(false)
		w.sceneForm.Object().Show()
		w.sceneReset.Show()
		w.sceneReset.Enable()
		w.ranWith.Hide()
		return
	}
	// Submitted: what the engine runs, after defaults and presets, read back.
	w.sceneForm.Object().Hide()
	w.sceneReset.Hide()
	verb := " runs with these settings:"
	if s.Terminal() {
		verb = " ran with these settings:"
	}
	w.sceneHeader.SetText(s.Name + verb)
	text := "Not submitted."
	if s.OrderID != "" {
		if rec, err := w.deps.Engine.OrderRecord(w.ctx, w.shootOwner(), s.OrderID); err == nil {
			text = strings.Join(resolvedLines(rec.Resolved, len(rec.Inputs)), "\n")
		} else {
			text = err.Error()
		}
	} else if s.Problem != "" {
		text = s.Problem
	}
	w.ranWith.SetText(text)
	w.ranWith.Show()
}

func (w *Window) updateListActions() {
	s, ok := w.shoot.Get(w.selected)
	for _, b := range w.listActions {
		if ok && s.Phase == PhaseDraft {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	// Deleting is also fine for settled scenes, renaming for any.
	if ok && s.Terminal() {
		w.listActions[3].Enable()
	}
	if ok && !w.shoot.ReadOnly() {
		w.listActions[4].Enable()
	}
}

func (w *Window) buildEmptyState() fyne.CanvasObject {
	icon := canvas.NewImageFromResource(fyne.NewStaticResource("porchlight.png", appicon.PNG()))
	icon.FillMode = canvas.ImageFillContain
	icon.SetMinSize(fyne.NewSize(112, 112))
	title := widget.NewLabelWithStyle("Drop brackets here", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	sub := widget.NewLabelWithStyle("Folders or photos: JPEG, PNG, TIFF, HEIC, WebP or camera RAW.\nBrackets of one scene are grouped for you.",
		fyne.TextAlignCenter, fyne.TextStyle{})
	sub.Importance = widget.LowImportance
	folder := widget.NewButtonWithIcon("Add folder…", theme.FolderOpenIcon(), w.pickFolder)
	folder.Importance = widget.HighImportance
	files := widget.NewButtonWithIcon("Add photos…", theme.FileImageIcon(), w.pickFile)
	hint := widget.NewLabelWithStyle("Ctrl+O opens · Ctrl+Enter processes · C compares", fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	hint.Importance = widget.LowImportance
	return container.NewCenter(container.NewVBox(
		container.NewCenter(icon), title, sub,
		container.NewCenter(container.NewHBox(folder, files)), hint))
}

// Drop adds dropped files and folders, as dropping them on the window does.
func (w *Window) Drop(paths []string) { w.addPaths(paths, nil) }

func urisToPaths(uris []fyne.URI) []string {
	var out []string
	for _, u := range uris {
		if u.Scheme() == "file" {
			out = append(out, u.Path())
		}
	}
	return out
}

// Process submits the draft scenes (Ctrl+Enter).
func (w *Window) Process() {
	if err := w.submitDrafts(); err != nil {
		w.showError(err)
		return
	}
	w.setStatus("Processing… results are saved to " + w.cfg.String(KeyOutputDir, defaultOutputDir()))
}

func (w *Window) pickFolder() {
	d := dialog.NewFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil {
			w.showError(err)
			return
		}
		if u != nil {
			w.Drop([]string{u.Path()})
		}
	}, w.win)
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

func (w *Window) pickFile() {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil {
			w.showError(err)
			return
		}
		if r != nil {
			r.Close()
			w.Drop([]string{r.URI().Path()})
		}
	}, w.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{
		".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff", ".heic", ".heif",
		".dng", ".cr2", ".cr3", ".crw", ".nef", ".arw", ".raf", ".orf", ".rw2",
		".JPG", ".JPEG", ".PNG", ".DNG", ".CR2", ".CR3", ".NEF", ".ARW",
	}))
	d.Resize(fyne.NewSize(900, 600))
	d.Show()
}

// pickMask imports a mask PNG chosen by the user and hands its asset id on.
func (w *Window) pickMask(set func(id string)) {
	d := dialog.NewFileOpen(func(r fyne.URIReadCloser, err error) {
		if err != nil || r == nil {
			if err != nil {
				w.showError(err)
			}
			return
		}
		path := r.URI().Path()
		r.Close()
		go func() {
			a, err := w.upload(path)
			for err == nil && a.Status != core.AssetReady && a.Status != core.AssetFailed {
				time.Sleep(100 * time.Millisecond)
				a, err = w.deps.Assets.Get(w.owner, a.ID)
			}
			w.do(func() {
				switch {
				case err != nil:
					w.showError(fmt.Errorf("mask: %w", err))
				case a.Status == core.AssetFailed:
					w.showError(fmt.Errorf("mask %s: %s", filepath.Base(path), a.Reason))
				default:
					set(a.ID)
				}
			})
		}()
	}, w.win)
	d.SetFilter(storage.NewExtensionFileFilter([]string{".png", ".PNG"}))
	d.Show()
}

func (w *Window) moveSelected(delta int) {
	if err := w.shoot.Move(w.selected, delta); err != nil {
		w.setStatus(err.Error())
	}
	if i := w.shoot.Index(w.selected); i >= 0 {
		w.list.Select(i)
	}
	w.refresh()
}

// selectScene shows scene id in the detail (0: the overview).
func (w *Window) selectScene(id int) {
	if w.selected == id {
		return
	}
	w.selected = id
	if id == 0 {
		w.list.UnselectAll()
	} else if i := w.shoot.Index(id); i >= 0 {
		w.list.Select(i)
		if w.sideTabs.SelectedIndex() != adjustTab {
			w.sideTabs.SelectIndex(1) // the scene's settings; the sliders stay open going scene to scene
		}
	}
	w.detail.show(id)
	w.refresh()
}

// Select shows scene id in the detail view.
func (w *Window) Select(id int) { w.selectScene(id) }

func (w *Window) setStatus(msg string) { w.statusText.SetText(msg) }

// setActivity shows what is being done in the status bar ("" clears it); UI
// goroutine only.
func (w *Window) setActivity(msg string) {
	if msg == "" {
		w.activity.Stop()
		w.activity.Hide()
		w.activityMsg.Hide()
		return
	}
	w.activityMsg.SetText(msg)
	w.activityMsg.Show()
	w.activity.Show()
	w.activity.Start()
}

func (w *Window) showError(err error) {
	w.setStatus(err.Error())
	dialog.ShowError(err, w.win)
}

func (w *Window) notify(title, msg string) {
	w.setStatus(msg)
	w.lastNotice = fyne.NewNotification(title, msg)
	w.app.SendNotification(w.lastNotice)
}

// rememberOptions writes the shoot's options to the config file.
func (w *Window) rememberOptions() {
	w.cfg.Set(KeyOptions, optionsToMap(w.defaults))
	if w.cfg.File() == "" {
		return
	}
	if err := w.cfg.Save(); err != nil {
		w.setStatus("Settings not saved: " + err.Error())
	}
}

func (w *Window) toggleTheme() {
	next := ThemeDark
	if w.cfg.String(KeyTheme, ThemeDark) == ThemeDark {
		next = ThemeLight
	}
	w.setTheme(next)
}

func (w *Window) setTheme(choice string) {
	w.cfg.Set(KeyTheme, choice)
	w.app.Settings().SetTheme(newTheme(choice))
	if w.cfg.File() != "" {
		if err := w.cfg.Save(); err != nil {
			w.setStatus("Settings not saved: " + err.Error())
		}
	}
}

// openFolder shows a folder in the file manager.
func (w *Window) openFolder(dir string) {
	u := &url.URL{Scheme: "file", Path: dir}
	if err := w.app.OpenURL(u); err != nil {
		w.showError(fmt.Errorf("open %s: %w", dir, err))
	}
}

// shortcuts binds the keyboard: Ctrl+O open, Ctrl+Enter process, Ctrl+. or Esc
// cancel, C or Space compare, Ctrl+0 fit, Ctrl+1 100 %, Ctrl+, settings.
func (w *Window) shortcuts() {
	c := w.win.Canvas()
	ctrl := fyne.KeyModifierShortcutDefault
	add := func(k fyne.KeyName, mod fyne.KeyModifier, fn func()) {
		c.AddShortcut(&desktop.CustomShortcut{KeyName: k, Modifier: mod}, func(fyne.Shortcut) { fn() })
	}
	add(fyne.KeyO, ctrl, w.pickFolder)
	add(fyne.KeyO, ctrl|fyne.KeyModifierShift, w.pickFile)
	add(fyne.KeyReturn, ctrl, w.Process)
	add(fyne.KeyEnter, ctrl, w.Process)
	add(fyne.KeyPeriod, ctrl, w.cancelCurrent)
	add(fyne.Key0, ctrl, func() { w.detail.setActual(false) })
	add(fyne.Key1, ctrl, func() { w.detail.setActual(true) })
	add(fyne.KeyComma, ctrl, w.openSettings)
	add(fyne.KeyZ, ctrl, w.undoLast)
	add(fyne.KeyI, ctrl|fyne.KeyModifierShift, w.importShoot)
	c.SetOnTypedKey(func(e *fyne.KeyEvent) {
		switch e.Name {
		case fyne.KeyEscape:
			w.cancelCurrent()
		case fyne.KeyC, fyne.KeySpace:
			w.detail.toggleCompare()
		case fyne.KeyUp:
			w.step(-1)
		case fyne.KeyDown:
			w.step(1)
		}
	})
}

// cancelCurrent cancels the selected scene, or everything under way when none is
// selected.
func (w *Window) cancelCurrent() {
	if s, ok := w.shoot.Get(w.selected); ok {
		if s.Active() {
			w.cancelScene(s.ID)
		}
		return
	}
	w.cancelAll()
}

// step selects the previous or next scene.
func (w *Window) step(d int) {
	n := w.shoot.Len()
	if n == 0 {
		return
	}
	i := w.shoot.Index(w.selected) + d
	if w.selected == 0 {
		i = 0
	}
	i = min(max(i, 0), n-1)
	if s, ok := w.shoot.At(i); ok {
		w.selectScene(s.ID)
		w.list.ScrollTo(i)
	}
}

// shownScene returns scene id as the detail shows it: the version picked in the
// version selector, or the newest result while the scene is edited again.
func (w *Window) shownScene(id int) (Scene, bool) {
	s, ok := w.shoot.Get(id)
	if !ok || len(s.Versions) == 0 {
		return s, ok
	}
	k := w.versionShown(s)
	if k == len(s.Versions)-1 && s.Phase == PhaseSubmitted {
		return s, true
	}
	return s.AtVersion(k), true
}

// versionShown is the index of the version of s the detail shows.
func (w *Window) versionShown(s Scene) int {
	if k, ok := w.shownVersion[s.ID]; ok && k >= 0 && k < len(s.Versions) {
		return k
	}
	return len(s.Versions) - 1
}

// ShowVersion shows version i (from 0, oldest first) of scene id in the detail.
func (w *Window) ShowVersion(id, i int) {
	w.shownVersion[id] = i
	w.detail.update()
}

// deleteVersion deletes the version of scene id the detail shows.
func (w *Window) deleteVersion(id int) {
	s, ok := w.shoot.Get(id)
	if !ok || len(s.Versions) == 0 {
		return
	}
	k := w.versionShown(s)
	if err := w.shoot.DeleteVersion(id, k); err != nil {
		w.setStatus(err.Error())
		return
	}
	delete(w.shownVersion, id)
	w.setStatus(fmt.Sprintf("Deleted version %d of %s.", k+1, s.Name))
	w.refresh()
}

// versionBar is the detail's version selector ("Version 2 of 3"), its Delete
// version action and Process again.
type versionBar struct {
	w     *Window
	id    int
	prev  *widget.Button
	next  *widget.Button
	label *widget.Label
	del   *widget.Button
	again *widget.Button
	box   *fyne.Container
}

func newVersionBar(w *Window) *versionBar {
	b := &versionBar{w: w}
	step := func(d int) {
		s, ok := w.shoot.Get(b.id)
		if !ok {
			return
		}
		w.ShowVersion(b.id, min(max(w.versionShown(s)+d, 0), len(s.Versions)-1))
	}
	b.prev = widget.NewButtonWithIcon("", theme.NavigateBackIcon(), func() { step(-1) })
	b.next = widget.NewButtonWithIcon("", theme.NavigateNextIcon(), func() { step(1) })
	b.label = widget.NewLabel("")
	b.del = widget.NewButtonWithIcon("Delete version", theme.DeleteIcon(), func() {
		id := b.id
		dialog.ShowConfirm("Delete version", "Delete this version of the scene? Its saved photo stays where it is.", func(ok bool) {
			if ok {
				w.deleteVersion(id)
			}
		}, w.win)
	})
	b.again = widget.NewButtonWithIcon("Process again", theme.ViewRefreshIcon(), func() { w.reeditScene(b.id) })
	for _, x := range []*widget.Button{b.prev, b.next, b.del} {
		x.Importance = widget.LowImportance
	}
	b.box = container.NewHBox(b.prev, b.label, b.next, b.del, b.again)
	return b
}

// Object is the bar's canvas object.
func (b *versionBar) Object() fyne.CanvasObject { return b.box }

// update shows the versions of scene s (UI goroutine).
func (b *versionBar) update(s Scene) {
	b.id = s.ID
	cur, _ := b.w.shoot.Get(s.ID)
	n := len(cur.Versions)
	if n >= 2 || (n == 1 && cur.Phase == PhaseDraft) {
		k := b.w.versionShown(cur)
		setText(b.label, fmt.Sprintf("Version %d of %d", k+1, n))
		setEnabled(b.prev, k > 0)
		setEnabled(b.next, k < n-1)
		setEnabled(b.del, cur.Versions[k].Summary.Status.Terminal() && !b.w.shoot.ReadOnly())
		for _, o := range []fyne.CanvasObject{b.prev, b.label, b.next, b.del} {
			o.Show()
		}
	} else {
		for _, o := range []fyne.CanvasObject{b.prev, b.label, b.next, b.del} {
			o.Hide()
		}
	}
	if !b.w.shoot.ReadOnly() && (cur.Phase == PhaseSubmitted || cur.Phase == PhaseRefused) {
		b.again.Show()
	} else {
		b.again.Hide()
	}
}

// adjustTab is the index of the sliders' tab on the right.
const adjustTab = 2

// updateAdjust points the sliders at the scene shown while their tab is open.
func (w *Window) updateAdjust() {
	if w.adjust == nil || w.sideTabs == nil || w.sideTabs.SelectedIndex() != adjustTab {
		return
	}
	s, ok := w.shoot.Get(w.selected)
	if !ok {
		w.adjust.panel.SetNote("Select a scene to adjust it.")
		return
	}
	w.adjust.show(s)
}

// showAdjusted shows a slider preview as the scene's "after" (UI goroutine).
func (w *Window) showAdjusted(img image.Image, full image.Point, took time.Duration) {
	if w.selected != w.adjust.sceneID {
		return
	}
	before := w.adjust.before
	if before == nil {
		before = img
	}
	w.detail.compare.SetImages(before, img, full)
	w.adjust.panel.SetNote(fmt.Sprintf("Preview updated in %d ms. Render full size makes a new version with these settings.", took.Milliseconds()))
}
