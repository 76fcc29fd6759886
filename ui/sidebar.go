package ui

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// This file is the shoots sidebar and what keeps shoots across restarts: the
// current shoot is saved (debounced, by a background saver) on every change, the
// most recent one is opened on start, and opening a stored shoot re-attaches its
// submitted scenes to their orders. Hot-folder work is listed beside the window's
// shoots as read-only shoots, one per folder and day, built from the engine's
// orders of the hot folders' owner and kept live from its events.

// shootEntry is one row of the sidebar.
type shootEntry struct {
	ID     string
	Name   string
	Scenes int
	Done   int
	Date   time.Time
	Hot    bool                // a hot folder's work: read-only
	orders []core.OrderSummary // a hot shoot's orders, oldest first
}

// hotPrefix starts the ids of hot-folder shoots (never stored).
const hotPrefix = "hot/"

// maxHotOrders bounds the hot folders' orders listed (the newest): the folders keep
// running for months.
const maxHotOrders = 1000

// sidebar is the shoots list and its actions (UI goroutine).
type sidebar struct {
	list    *widget.List
	entries []shootEntry
	rename  *widget.Button
	del     *widget.Button
	syncing bool // selecting the current row in code, not by the user
}

// saveDelay is how long the saver waits for changes to stop before writing;
// saveMaxDelay bounds the wait under a stream of changes (imports, progress).
const (
	saveDelay    = 300 * time.Millisecond
	saveMaxDelay = 2 * time.Second
)

func (w *Window) buildSidebar() fyne.CanvasObject {
	sb := &sidebar{}
	w.side = sb
	sb.list = widget.NewList(
		func() int { return len(sb.entries) },
		func() fyne.CanvasObject {
			name := widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
			name.Truncation = fyne.TextTruncateEllipsis
			info := widget.NewLabel("")
			info.Truncation = fyne.TextTruncateEllipsis
			info.SizeName = theme.SizeNameCaptionText
			icon := widget.NewIcon(theme.FolderIcon())
			return container.NewBorder(nil, nil, icon, nil, container.New(&tightVBox{}, name, info))
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			if i < 0 || i >= len(sb.entries) {
				return
			}
			e := w.liveEntry(sb.entries[i])
			c := o.(*fyne.Container)
			text := c.Objects[0].(*fyne.Container)
			setText(text.Objects[0].(*widget.Label), e.Name)
			setText(text.Objects[1].(*widget.Label), entryLine(e))
			icon := c.Objects[1].(*widget.Icon)
			if e.Hot {
				icon.SetResource(theme.DownloadIcon())
			} else {
				icon.SetResource(theme.FolderIcon())
			}
		},
	)
	sb.list.OnSelected = func(i widget.ListItemID) {
		if sb.syncing || i < 0 || i >= len(sb.entries) {
			return
		}
		if e := sb.entries[i]; e.ID != w.shoot.ID() {
			w.openShoot(e)
		}
	}
	header := widget.NewLabelWithStyle("Shoots", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	add := widget.NewButtonWithIcon("New shoot", theme.ContentAddIcon(), w.newShoot)
	add.Importance = widget.LowImportance
	sb.rename = widget.NewButtonWithIcon("", theme.DocumentCreateIcon(), w.renameDialog)
	sb.del = widget.NewButtonWithIcon("", theme.DeleteIcon(), w.deleteDialog)
	sb.rename.Importance, sb.del.Importance = widget.LowImportance, widget.LowImportance
	top := container.NewBorder(nil, nil, header, container.NewHBox(sb.rename, sb.del))
	return container.NewBorder(top, container.NewHBox(add), nil, nil, sb.list)
}

// liveEntry is e with the counts of the current shoot, or of one still working in
// the background, as they are now.
func (w *Window) liveEntry(e shootEntry) shootEntry {
	sh := w.shoot
	if e.ID != sh.ID() {
		if sh = w.background(e.ID); sh == nil {
			return e
		}
	}
	c := sh.Counts()
	e.Name, e.Scenes, e.Done = sh.Name(), c.Total, c.Completed
	return e
}

// background returns the background shoot id, nil when there is none.
func (w *Window) background(id string) *Shoot {
	w.bgMu.Lock()
	defer w.bgMu.Unlock()
	return w.bg[id]
}

// backgroundShoots returns the shoots switched away from with work under way: the
// tracker keeps following their orders and writing their photos.
func (w *Window) backgroundShoots() []*Shoot {
	w.bgMu.Lock()
	defer w.bgMu.Unlock()
	out := make([]*Shoot, 0, len(w.bg))
	for _, sh := range w.bg {
		out = append(out, sh)
	}
	return out
}

// backgroundChanged saves a background shoot that changed, and lets it go once
// nothing of it is under way.
func (w *Window) backgroundChanged(sh *Shoot) {
	if !sh.Unsettled() {
		w.bgMu.Lock()
		delete(w.bg, sh.ID())
		w.bgMu.Unlock()
	}
	w.queueSaveOf(sh)
	w.markDirty()
}

// entryLine is a sidebar row's second line: scenes, done of total and date.
func entryLine(e shootEntry) string {
	parts := []string{fmt.Sprintf("%d %s", e.Scenes, plural(e.Scenes, "scene", "scenes"))}
	if e.Scenes > 0 {
		parts = append(parts, fmt.Sprintf("%d/%d done", e.Done, e.Scenes))
	}
	if !e.Date.IsZero() {
		parts = append(parts, e.Date.Local().Format("2 Jan 2006"))
	}
	if e.Hot {
		parts = append([]string{"Hot folder"}, parts...)
	}
	return strings.Join(parts, " · ")
}

// updateSidebar keeps the sidebar's selection on the current shoot and its actions
// on what the current shoot allows (UI goroutine).
func (w *Window) updateSidebar() {
	sb := w.side
	if sb == nil {
		return
	}
	id := w.shoot.ID()
	idx := slices.IndexFunc(sb.entries, func(e shootEntry) bool { return e.ID == id })
	sb.syncing = true
	if idx >= 0 {
		sb.list.Select(idx)
	} else {
		sb.list.UnselectAll()
	}
	sb.syncing = false
	sb.list.Refresh()
	setEnabled(sb.rename, !w.shoot.ReadOnly())
	setEnabled(sb.del, !w.shoot.ReadOnly())
}

// reloadShoots lists the shoots again in the background and shows them.
func (w *Window) reloadShoots() {
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		entries := w.listShoots(w.ctx)
		w.do(func() {
			w.side.entries = entries
			w.updateSidebar()
		})
	}()
}

// listShoots returns the window's shoots (the current one first when it is not
// stored yet), then the hot folders' work, newest first.
func (w *Window) listShoots(ctx context.Context) []shootEntry {
	var out []shootEntry
	recs, err := w.shoots.List(ctx, w.owner)
	if err != nil && ctx.Err() == nil {
		w.do(func() { w.setStatus("Cannot list the shoots: " + err.Error()) })
	}
	cur := w.shoot.ID()
	if !w.shoot.ReadOnly() && !slices.ContainsFunc(recs, func(r core.Shoot) bool { return r.ID == cur }) {
		out = append(out, shootEntry{ID: cur, Name: w.shoot.Name(), Date: w.shoot.Created()})
	}
	for _, r := range recs {
		out = append(out, shootEntry{ID: r.ID, Name: r.Name, Scenes: len(r.Scenes), Done: r.Done(), Date: r.CreatedAt})
	}
	return append(out, w.hotEntries(ctx)...)
}

// hotEntries groups the hot folders' orders by folder and day. An order's folder
// is known from the folder's recent activity; otherwise, with one folder
// configured, it is that one.
func (w *Window) hotEntries(ctx context.Context) []shootEntry {
	if w.hotOwner == "" {
		return nil
	}
	orders, err := w.deps.Engine.Orders(ctx, w.hotOwner, maxHotOrders)
	if err != nil || len(orders) == 0 {
		return nil
	}
	folderOf, _ := w.hotActivity()
	fallback := "Hot folder"
	if w.deps.Hot != nil {
		if st := w.deps.Hot.Status(); len(st) == 1 {
			fallback = st[0].Name
		}
	}
	byKey := map[string]*shootEntry{}
	var keys []string
	for i := len(orders) - 1; i >= 0; i-- { // oldest first
		o := orders[i]
		folder := folderOf[o.OrderUUID]
		if folder == "" {
			folder = fallback
		}
		day := o.CreatedAt.Local()
		key := hotPrefix + folder + "/" + day.Format("2006-01-02")
		e, ok := byKey[key]
		if !ok {
			e = &shootEntry{ID: key, Name: folder + " · " + day.Format("2 Jan 2006"), Date: o.CreatedAt, Hot: true}
			byKey[key] = e
			keys = append(keys, key)
		}
		e.orders = append(e.orders, o)
		e.Scenes++
		if o.Status == core.OrderCompleted {
			e.Done++
		}
	}
	out := make([]shootEntry, 0, len(keys))
	for i := len(keys) - 1; i >= 0; i-- {
		out = append(out, *byKey[keys[i]])
	}
	return out
}

// hotActivity maps the orders the hot folders reported on to their folder and to
// what the folder wrote (the result, or the error report).
func (w *Window) hotActivity() (folderOf map[string]string, acts map[string]hotActivity) {
	folderOf, acts = map[string]string{}, map[string]hotActivity{}
	if w.deps.Hot == nil {
		return folderOf, acts
	}
	for _, st := range w.deps.Hot.Status() {
		for _, a := range st.Recent {
			if a.OrderID == "" {
				continue
			}
			folderOf[a.OrderID] = st.Name
			out := a.Output
			if out != "" && !filepath.IsAbs(out) && st.Output != "" {
				out = filepath.Join(st.Output, out)
			}
			// Several activities can name one order; what one knows, a later one
			// without it does not erase.
			prev := acts[a.OrderID]
			if out == "" {
				out = prev.output
			}
			scene := a.Scene
			if scene == "" {
				scene = prev.scene
			}
			acts[a.OrderID] = hotActivity{scene: scene, output: out}
		}
	}
	return folderOf, acts
}

type hotActivity struct{ scene, output string }

// buildHotShoot makes the read-only shoot of a hot-folder entry: one submitted
// scene per order, named as the folder named it (or after its first photo).
func (w *Window) buildHotShoot(e shootEntry) *Shoot {
	_, acts := w.hotActivity()
	sh := NewShoot()
	sh.id, sh.name, sh.readOnly, sh.created = e.ID, e.Name, true, e.Date
	for i, o := range e.orders {
		act := acts[o.OrderUUID]
		name := act.scene
		if name == "" && len(o.Inputs) > 0 {
			if a, err := w.deps.Assets.Get(w.hotOwner, o.Inputs[0]); err == nil {
				name = stem(a.Filename)
			}
		}
		if name == "" {
			name = fmt.Sprintf("Scene %d", i+1)
		}
		s := &Scene{ID: sh.nextID, Name: sh.uniqueNameLocked(name), Phase: PhaseSubmitted,
			Versions: []Version{{OrderID: o.OrderUUID, BatchID: o.BatchID, At: o.CreatedAt, Summary: o, Saved: act.output}}}
		sh.nextID++
		s.mirror()
		sh.scenes = append(sh.scenes, s)
		sh.byID[s.ID] = s
		sh.byOrder[o.OrderUUID] = s
	}
	return sh
}

// shootOwner is the owner of the current shoot's orders and results.
func (w *Window) shootOwner() string {
	if w.shoot.ReadOnly() {
		return w.hotOwner
	}
	return w.owner
}

// newShoot saves the current shoot and starts an empty one with the options of the
// current one.
func (w *Window) newShoot() {
	if !w.canLeave() {
		return
	}
	sh := NewShoot()
	sh.options = cloneOptions(w.defaults)
	w.switchTo(sh, false)
	w.queueSave()
	w.setStatus("New shoot: drop bracket folders or photos on the window.")
}

// canLeave reports whether the current shoot may be swapped out: scenes still
// being imported and submitted hold it.
func (w *Window) canLeave() bool {
	for _, s := range w.shoot.Scenes() {
		if s.Phase == PhasePreparing {
			w.setStatus("Wait until " + s.Name + " is submitted before switching shoots.")
			return false
		}
	}
	return true
}

// openShoot switches to a stored or hot-folder shoot; it is read in the background.
func (w *Window) openShoot(e shootEntry) {
	if !w.canLeave() {
		w.updateSidebar()
		return
	}
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		// A shoot still working in the background is newer than its record.
		fromBackground := w.background(e.ID) != nil
		var sh *Shoot
		switch {
		case fromBackground:
		case e.Hot:
			sh = w.buildHotShoot(e)
		default:
			w.waitSaves()
			rec, err := w.shoots.Get(w.ctx, e.ID)
			if err != nil {
				w.do(func() { w.showError(fmt.Errorf("open %s: %w", e.Name, err)) })
				return
			}
			sh = LoadShoot(rec)
		}
		w.do(func() {
			if !w.canLeave() {
				return
			}
			w.bgMu.Lock()
			if bg := w.bg[e.ID]; bg != nil {
				sh = bg
				delete(w.bg, e.ID)
			}
			w.bgMu.Unlock()
			if sh == nil { // it was stored meanwhile
				w.openShoot(e)
				return
			}
			w.switchTo(sh, !e.Hot)
			if e.Hot {
				// An order that moved on between the build and now told a shoot that
				// was not this one yet, and may not speak again: build it once more.
				w.busy.Add(1)
				go func() {
					defer w.busy.Done()
					w.rebuildHot(w.ctx)
				}()
			}
		})
	}()
}

// switchTo makes sh the current shoot (UI goroutine), saving the one it replaces.
// A stored shoot is then re-attached to its orders.
func (w *Window) switchTo(sh *Shoot, stored bool) {
	w.queueSave()
	w.selectScene(0)
	w.shownVersion = map[int]int{}
	w.importMu.Lock()
	w.importQueue, w.importSeen = nil, map[string]bool{}
	w.importMu.Unlock()
	if old := w.shoot.Replace(sh); !old.ReadOnly() && old.Unsettled() {
		w.bgMu.Lock()
		w.bg[old.ID()] = old
		w.bgMu.Unlock()
	}
	if !w.shoot.ReadOnly() {
		w.defaults = w.shoot.Options()
		w.shootForm.Set(core.Options{}, w.defaults, false)
	}
	w.sceneFormKey = ""
	w.refresh()
	w.reloadShoots()
	if stored {
		id := w.shoot.ID()
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.reattach(w.ctx, id)
		}()
	}
}

// reattach lays the engine's state over every version of the stored shoot id
// (orders went on while the window was closed), writes the results that finished
// meanwhile, and checks that the drafts' imported photos are still there.
func (w *Window) reattach(ctx context.Context, id string) {
	for _, s := range w.shoot.Scenes() {
		for _, v := range s.Versions {
			if ctx.Err() != nil || w.shoot.ID() != id {
				return
			}
			sum, err := w.deps.Engine.Order(ctx, w.owner, v.OrderID)
			if err != nil {
				continue // the engine forgot it: the stored state stays
			}
			sc, found, _ := w.shoot.Attach(sum)
			if found && sum.Status == core.OrderCompleted && sc.Saved == "" && sc.Problem == "" {
				w.settled(sc)
			}
		}
		if s.Phase == PhaseSubmitted {
			continue
		}
		for _, f := range s.Files {
			if w.shoot.ID() != id {
				return
			}
			if st := w.shoot.File(f); st.AssetID != "" {
				if a, err := w.deps.Assets.Get(w.owner, st.AssetID); err == nil && a.Status != core.AssetFailed {
					w.shoot.SetFile(f, FileState{AssetID: a.ID, Status: a.Status, Reason: a.Reason})
					continue
				}
			}
			w.shoot.SetFile(f, FileState{})
			w.enqueueImport(f)
		}
	}
	w.markDirty()
}

// renameShoot renames the current shoot.
func (w *Window) renameShoot(name string) {
	name = strings.TrimSpace(name)
	if name == "" || w.shoot.ReadOnly() {
		return
	}
	w.shoot.SetName(name)
	w.queueSave()
	w.refresh()
}

func (w *Window) renameDialog() {
	if w.shoot.ReadOnly() {
		return
	}
	e := widget.NewEntry()
	e.SetText(w.shoot.Name())
	dialog.ShowForm("Rename shoot", "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Name", e)}, func(ok bool) {
		if ok {
			w.renameShoot(e.Text)
		}
	}, w.win)
}

func (w *Window) deleteDialog() {
	if w.shoot.ReadOnly() {
		return
	}
	msg := fmt.Sprintf("Delete the shoot %q? Photos already saved stay where they are.", w.shoot.Name())
	if c := w.shoot.Counts(); c.Active > 0 {
		msg += fmt.Sprintf(" %d %s still being processed and will be cancelled.", c.Active, plural(c.Active, "scene is", "scenes are"))
	}
	dialog.ShowConfirm("Delete shoot", msg, func(ok bool) {
		if ok {
			w.deleteShoot()
		}
	}, w.win)
}

// deleteShoot cancels the current shoot's work, deletes it and opens the next
// most recent shoot (or a new one).
func (w *Window) deleteShoot() {
	if w.shoot.ReadOnly() || !w.canLeave() {
		return
	}
	w.cancelAll()
	id := w.shoot.ID()
	w.deleted.Store(id)
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		w.waitSaves() // none of its saves may land after the delete
		if err := w.shoots.Delete(w.ctx, id); err != nil {
			w.do(func() { w.showError(fmt.Errorf("delete shoot: %w", err)) })
		}
		recs, _ := w.shoots.List(w.ctx, w.owner)
		w.do(func() {
			if w.shoot.ID() != id {
				return
			}
			for _, r := range recs {
				if r.ID != id {
					w.switchTo(LoadShoot(r), true)
					return
				}
			}
			sh := NewShoot()
			sh.options = cloneOptions(w.defaults)
			w.switchTo(sh, false)
		})
	}()
}

// queueSave hands the current shoot, as it is now, to the saver.
func (w *Window) queueSave() { w.queueSaveOf(w.shoot) }

// queueSaveOf hands shoot sh, as it is now, to the saver.
func (w *Window) queueSaveOf(sh *Shoot) {
	if sh.ReadOnly() {
		return
	}
	rec := sh.Record(w.owner)
	if id, _ := w.deleted.Load().(string); id == rec.ID {
		return
	}
	w.saveMu.Lock()
	w.savePending++
	w.saveMu.Unlock()
	select {
	case w.saveQ <- rec:
	default:
		// The saver is far behind: write from here rather than lose the change.
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.writeQueued(rec)
		}()
	}
}

// writeQueued writes a snapshot handed over by queueSaveOf.
func (w *Window) writeQueued(rec core.Shoot) {
	w.putShoot(rec)
	w.saveMu.Lock()
	w.savePending--
	w.saveDone.Broadcast()
	w.saveMu.Unlock()
}

// waitSaves writes what is queued and waits for writes under way, so that a read
// of the store that follows sees every change made before (not on the UI
// goroutine).
func (w *Window) waitSaves() {
	w.drainSaveQueue()
	w.saveMu.Lock()
	for w.savePending > 0 {
		w.saveDone.Wait()
	}
	w.saveMu.Unlock()
}

// drainSaveQueue writes the snapshots queued so far, without waiting for more.
func (w *Window) drainSaveQueue() {
	for {
		select {
		case rec := <-w.saveQ:
			w.writeQueued(rec)
			continue
		default:
		}
		break
	}
}

// saver writes the current shoot once its changes pause (or at least every
// saveMaxDelay while they go on), and the snapshots queued by switches, in order.
func (w *Window) saver(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastID, lastVer := w.shoot.ID(), w.shoot.Version()
	var changed, since time.Time
	dirty := false
	for {
		select {
		case <-ctx.Done():
			return
		case rec := <-w.saveQ:
			w.writeQueued(rec)
			continue
		case <-t.C:
		}
		id, ver := w.shoot.ID(), w.shoot.Version()
		now := time.Now()
		if id != lastID {
			// Switched: the switch queued the old shoot; the new one is as stored.
			lastID, lastVer, dirty = id, ver, false
			continue
		}
		if ver != lastVer {
			lastVer, changed = ver, now
			if !dirty {
				dirty, since = true, now
			}
		}
		if dirty && (now.Sub(changed) >= saveDelay || now.Sub(since) >= saveMaxDelay) {
			dirty = false
			w.queueSave()
		}
	}
}

// putShoot writes one snapshot and refreshes the sidebar when a shoot appears.
func (w *Window) putShoot(rec core.Shoot) {
	if id, _ := w.deleted.Load().(string); id == rec.ID {
		return
	}
	// Snapshots can reach here out of order (a switch's and the saver's): an
	// older one never replaces a newer.
	w.savedMu.Lock()
	stale := rec.UpdatedAt.Before(w.savedAt[rec.ID])
	if !stale {
		w.savedAt[rec.ID] = rec.UpdatedAt
	}
	w.savedMu.Unlock()
	if stale {
		return
	}
	ctx := w.ctx
	if ctx.Err() != nil {
		ctx = context.Background() // the last save on closing
	}
	if err := w.shoots.Put(ctx, rec); err != nil {
		w.do(func() { w.setStatus("The shoot was not saved: " + err.Error()) })
		return
	}
	w.savedMu.Lock()
	known := w.saved[rec.ID]
	w.saved[rec.ID] = true
	w.savedMu.Unlock()
	// A new shoot, or one in the background, changes the rows the sidebar read.
	if (!known || rec.ID != w.shoot.ID()) && w.ctx.Err() == nil {
		w.reloadShoots()
	}
}

// flushSaves writes what the saver still holds and the current shoot, after the
// background work stopped (Close).
func (w *Window) flushSaves() {
	w.drainSaveQueue()
	if !w.shoot.ReadOnly() && (w.shoot.Len() > 0 || w.isSaved(w.shoot.ID())) {
		w.putShoot(w.shoot.Record(w.owner))
	}
	for _, sh := range w.backgroundShoots() {
		w.putShoot(sh.Record(w.owner))
	}
}

func (w *Window) isSaved(id string) bool {
	w.savedMu.Lock()
	defer w.savedMu.Unlock()
	return w.saved[id]
}

// followHot follows the hot folders' order events: the sidebar's hot entries are
// listed again, and the open hot shoot takes each summary (or is built again when
// its folder started a new scene).
func (w *Window) followHot(ctx context.Context) {
	sub, _ := w.deps.Engine.Events().Subscribe(events.Filter{Owner: w.hotOwner, Types: []string{core.EventOrder}}, 0)
	defer sub.Close()
	var mu sync.Mutex
	relist, rebuild, lost := false, false, false
	go func() {
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-sub.C():
				if !ok {
					if errors.Is(sub.Err(), events.ErrSlowSubscriber) && ctx.Err() == nil {
						mu.Lock()
						lost = true
						mu.Unlock()
					}
					return
				}
				sum, ok := ev.Data.(core.OrderSummary)
				if !ok {
					continue
				}
				known := false
				if w.shoot.ReadOnly() {
					_, known, _ = w.shoot.Update(sum)
				}
				mu.Lock()
				relist = relist || !known || sum.Status.Terminal()
				rebuild = rebuild || (w.shoot.ReadOnly() && (!known || sum.Status.Terminal()))
				mu.Unlock()
				w.markDirty()
			}
		}
	}()
	t := time.NewTicker(300 * time.Millisecond)
	defer t.Stop()
	var waitOutputs time.Time // when to look again for results the folder writes
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		waiting := w.hotWaiting()
		mu.Lock()
		if waitOutputs.IsZero() && waiting {
			waitOutputs = time.Now().Add(time.Second)
		}
		if !waitOutputs.IsZero() && time.Now().After(waitOutputs) {
			waitOutputs, rebuild = time.Time{}, true
		}
		l, r, gone := relist, rebuild, lost
		relist, rebuild = false, false
		mu.Unlock()
		if gone {
			// Fell behind: follow again from now; the listing catches up.
			w.busy.Add(1)
			go func() {
				defer w.busy.Done()
				w.followHot(ctx)
			}()
			w.reloadShoots()
			w.rebuildHot(ctx)
			return
		}
		if l {
			w.reloadShoots()
		}
		if r {
			w.rebuildHot(ctx)
		}
	}
}

// hotWaiting reports whether the open hot shoot has a scene that completed lately
// without the result its folder writes: no event says when the folder wrote it,
// so the shoot is built again a while later.
func (w *Window) hotWaiting() bool {
	if !w.shoot.ReadOnly() {
		return false
	}
	w.hotDoneMu.Lock()
	defer w.hotDoneMu.Unlock()
	if w.hotDoneSeen == nil {
		w.hotDoneSeen = map[string]time.Time{}
	}
	waiting := false
	open := map[string]bool{}
	for _, s := range w.shoot.Scenes() {
		if s.Summary.Status != core.OrderCompleted || s.Saved != "" {
			continue
		}
		open[s.OrderID] = true
		// Counted from when the window saw it done, not from the order's own time:
		// a busy machine or a late look must not end the wait before it began.
		seen, ok := w.hotDoneSeen[s.OrderID]
		if !ok {
			seen = time.Now()
			w.hotDoneSeen[s.OrderID] = seen
		}
		if time.Since(seen) < 2*time.Minute {
			waiting = true
		}
	}
	for id := range w.hotDoneSeen {
		if !open[id] {
			delete(w.hotDoneSeen, id)
		}
	}
	return waiting
}

// rebuildHot builds the open hot shoot again from the engine's orders (a new
// scene came in, or one was delivered), keeping the scene shown.
func (w *Window) rebuildHot(ctx context.Context) {
	id := w.shoot.ID()
	if !strings.HasPrefix(id, hotPrefix) {
		return
	}
	for _, e := range w.hotEntries(ctx) {
		if e.ID != id {
			continue
		}
		sh := w.buildHotShoot(e)
		w.do(func() {
			if w.shoot.ID() != id {
				return
			}
			w.shoot.Replace(sh)
			w.refresh()
		})
		return
	}
}

// memShoots keeps shoots in memory, for a window built without a store.
type memShoots struct {
	mu sync.Mutex
	m  map[string]core.Shoot
}

func (m *memShoots) Put(_ context.Context, s core.Shoot) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil {
		m.m = map[string]core.Shoot{}
	}
	m.m[s.ID] = s
	return nil
}

func (m *memShoots) Get(_ context.Context, id string) (core.Shoot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.m[id]
	if !ok {
		return core.Shoot{}, core.NotFound("shoot %s not found", id)
	}
	return s, nil
}

func (m *memShoots) List(_ context.Context, owner string) ([]core.Shoot, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []core.Shoot
	for _, s := range m.m {
		if s.Owner == owner {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b core.Shoot) int { return b.UpdatedAt.Compare(a.UpdatedAt) })
	return out, nil
}

func (m *memShoots) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.m, id)
	return nil
}
