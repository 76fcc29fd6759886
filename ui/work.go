package ui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/grouping"
)

// This file is the window's background work: reading dropped photos into scenes,
// importing them into the asset store, submitting batches, following the engine's
// events and delivering finished photos. None of it runs on the UI goroutine; it
// changes the Shoot and asks for a redraw.

// run is one submission: the scenes that went out together.
type run struct {
	id       int
	name     string
	scenes   []int
	batchIDs []string
	notified bool
}

// addPaths groups dropped files and folders into scenes, adds them to the shoot and
// starts importing their photos. done (may be nil) gets the new scene ids.
func (w *Window) addPaths(paths []string, done func(ids []int, err error)) {
	if len(paths) == 0 {
		return
	}
	if w.shoot.ReadOnly() {
		// A hot folder's shoot takes no photos: they start a shoot of their own.
		w.newShoot()
	}
	w.busy.Add(1)
	w.setActivity(fmt.Sprintf("Reading %s…", describePaths(paths)))
	go func() {
		defer w.busy.Done()
		res, err := grouping.Group(paths, grouping.Options{})
		if err == nil && len(res.Scenes) == 0 {
			err = fmt.Errorf("%w in %s", grouping.ErrNoPhotos, describePaths(paths))
		}
		var ids []int
		var aside []grouping.SetAside
		if err == nil {
			// Culling judges the scenes of a folder together: a set shot twice is two
			// scenes until it sees them side by side.
			res.Scenes, aside = grouping.CullScenes(res.Scenes)
			ids = w.shoot.Add(res.Scenes)
			w.shoot.AttachSetAside(ids, aside)
			for _, id := range ids {
				if s, ok := w.shoot.Get(id); ok {
					for _, f := range s.Files {
						w.enqueueImport(f)
					}
				}
			}
		}
		w.do(func() {
			w.setActivity("")
			switch {
			case err != nil:
				w.showError(fmt.Errorf("nothing to add: %w", err))
			case len(ids) == 0:
				w.setStatus("Those photos are already in the shoot.")
			default:
				msg := fmt.Sprintf("Added %d %s from %d photos.", len(ids), plural(len(ids), "scene", "scenes"), countFiles(res.Scenes))
				if n := len(aside); n > 0 {
					msg += fmt.Sprintf(" %d %s set aside (%s); the scene shows why, and Put back returns one.", n, plural(n, "photo", "photos"), asideSummary(aside))
				}
				if n := len(res.Skipped); n > 0 {
					msg += fmt.Sprintf(" %d %s skipped: %s", n, plural(n, "file", "files"), skippedSummary(res.Skipped))
				}
				if n := lostScenes(res.Scenes); n > 0 {
					msg += fmt.Sprintf(" %d %s lost brackets and cannot be made from the rest; the list says why.", n, plural(n, "scene", "scenes"))
				}
				w.setStatus(msg)
			}
			w.refresh()
			if done != nil {
				done(ids, err)
			}
		})
	}()
}

func describePaths(paths []string) string {
	if len(paths) == 1 {
		return filepath.Base(paths[0])
	}
	return fmt.Sprintf("%d items", len(paths))
}

func countFiles(sc []grouping.Scene) int {
	n := 0
	for _, s := range sc {
		n += len(s.Files)
	}
	return n
}

// lostScenes counts the scenes whose lost brackets leave too little to make them.
func lostScenes(sc []grouping.Scene) int {
	n := 0
	for _, s := range sc {
		if s.Problem != "" {
			n++
		}
	}
	return n
}

func skippedSummary(sk []grouping.Skipped) string {
	parts := make([]string, 0, 2)
	for i, s := range sk {
		if i == 2 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, filepath.Base(s.Path)+" ("+s.Reason+")")
	}
	return strings.Join(parts, "; ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// enqueueImport schedules a photo's import once.
func (w *Window) enqueueImport(path string) {
	w.importMu.Lock()
	defer w.importMu.Unlock()
	if w.importSeen[path] {
		return
	}
	w.importSeen[path] = true
	w.importQueue = append(w.importQueue, path)
	select {
	case w.importWake <- struct{}{}:
	default:
	}
}

// importer uploads queued photos into the asset store, one per worker, and follows
// their ingest until each is ready or failed.
func (w *Window) importer(ctx context.Context) {
	next := func() (string, bool) {
		for {
			w.importMu.Lock()
			if len(w.importQueue) > 0 {
				p := w.importQueue[0]
				w.importQueue = w.importQueue[1:]
				w.importMu.Unlock()
				return p, true
			}
			w.importMu.Unlock()
			select {
			case <-ctx.Done():
				return "", false
			case <-w.importWake:
			}
		}
	}
	for {
		path, ok := next()
		if !ok {
			return
		}
		w.shoot.SetFile(path, FileState{Status: core.AssetPending})
		a, err := w.upload(path)
		if err != nil {
			w.shoot.SetFile(path, FileState{Status: core.AssetFailed, Reason: err.Error()})
		} else {
			w.shoot.SetFile(path, FileState{AssetID: a.ID, Status: a.Status, Reason: a.Reason})
		}
		w.markDirty()
	}
}

func (w *Window) upload(path string) (core.Asset, error) {
	f, err := os.Open(path)
	if err != nil {
		return core.Asset{}, err
	}
	defer f.Close()
	// The store recognises the format from the bytes.
	return w.deps.Assets.Add(w.owner, filepath.Base(path), "application/octet-stream", f)
}

// ingestWatcher polls the ingest of imported photos until each settles.
func (w *Window) ingestWatcher(ctx context.Context) {
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		changed := false
		for _, s := range w.shoot.Scenes() {
			if s.Phase == PhaseSubmitted || s.Phase == PhaseRefused {
				continue
			}
			for _, f := range s.Files {
				st := w.shoot.File(f)
				if st.AssetID == "" || st.Status == core.AssetReady || st.Status == core.AssetFailed {
					continue
				}
				a, err := w.deps.Assets.Get(w.owner, st.AssetID)
				if err != nil {
					w.shoot.SetFile(f, FileState{AssetID: st.AssetID, Status: core.AssetFailed, Reason: err.Error()})
					changed = true
					continue
				}
				if a.Status != st.Status {
					w.shoot.SetFile(f, FileState{AssetID: a.ID, Status: a.Status, Reason: a.Reason})
					changed = true
				}
			}
		}
		if changed {
			w.markDirty()
		}
	}
}

// importProgress says how many of a scene's photos are imported and ready.
func (w *Window) importProgress(s Scene) (ready, failed int, reasons []string) {
	for _, f := range s.Files {
		st := w.shoot.File(f)
		switch st.Status {
		case core.AssetReady:
			ready++
		case core.AssetFailed:
			failed++
			reasons = append(reasons, filepath.Base(f)+": "+st.Reason)
		}
	}
	return ready, failed, reasons
}

// submitDrafts checks the draft scenes with the catalog's validator and submits
// them. Nothing is submitted when one scene is invalid: that scene says why.
func (w *Window) submitDrafts() error {
	return w.submitScenes(w.shoot.Drafts())
}

// submitScenes submits the draft scenes drafts as one run.
func (w *Window) submitScenes(drafts []Scene) error {
	if len(drafts) == 0 {
		return errors.New("there is nothing to process: add photos first")
	}
	defaults := cloneOptions(w.defaults)
	single := len(drafts) == 1
	for _, s := range drafts {
		if err := checkOptions(catalog.Merge(defaults, s.Overrides), single); err != nil {
			p := describe(err)
			w.shoot.Reopen(s.ID, p.Message)
			w.refresh()
			return fmt.Errorf("%s: %s", s.Name, p.Message)
		}
	}
	w.rememberOptions()
	w.runsMu.Lock()
	w.nextRun++
	r := &run{id: w.nextRun, name: batchName(drafts, time.Now())}
	for _, s := range drafts {
		r.scenes = append(r.scenes, s.ID)
	}
	w.runs[r.id] = r
	w.runsMu.Unlock()
	w.shoot.Prepare(r.scenes, r.id)
	w.refresh()
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		err := w.submitRun(w.ctx, r, defaults, single)
		w.do(func() {
			if err != nil {
				w.showError(err)
			}
			w.refresh()
		})
	}()
	return nil
}

// batchName names a batch after the folders of its scenes and the time.
func batchName(scenes []Scene, now time.Time) string {
	seen := map[string]bool{}
	var dirs []string
	for _, s := range scenes {
		if len(s.Files) == 0 {
			continue
		}
		d := filepath.Base(filepath.Dir(s.Files[0]))
		if !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	name := strings.Join(dirs, ", ")
	if len(dirs) > 2 {
		name = fmt.Sprintf("%s, %s and %d more", dirs[0], dirs[1], len(dirs)-2)
	}
	if name == "" {
		name = "Shoot"
	}
	return name + " · " + now.Format("2006-01-02 15:04")
}

// submitRun waits for the run's photos to be imported, then submits one order (a
// single scene, which may carry style text) or batches of at most engine.MaxScenes.
func (w *Window) submitRun(ctx context.Context, r *run, defaults core.Options, single bool) error {
	// Wait for every photo of the run to be ready or failed.
	for {
		waiting := false
		for _, id := range r.scenes {
			s, ok := w.shoot.Get(id)
			if !ok || s.Phase != PhasePreparing {
				continue
			}
			ready, failed, _ := w.importProgress(s)
			if ready+failed < len(s.Files) {
				waiting = true
			}
		}
		if !waiting {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	var ready []Scene
	for _, id := range r.scenes {
		s, ok := w.shoot.Get(id)
		if !ok || s.Phase != PhasePreparing {
			continue // removed or cancelled meanwhile
		}
		if _, failed, reasons := w.importProgress(s); failed > 0 {
			w.shoot.Refuse(id, "could not import: "+strings.Join(reasons, "; "))
			continue
		}
		ready = append(ready, s)
	}
	w.markDirty()
	if len(ready) == 0 {
		return nil
	}
	inputs := func(s Scene) []string {
		ids := make([]string, len(s.Files))
		for i, f := range s.Files {
			ids[i] = w.shoot.File(f).AssetID
		}
		return ids
	}
	if single && len(ready) == 1 {
		s := ready[0]
		opts := catalog.Merge(defaults, s.Overrides)
		sum, err := w.deps.Engine.Submit(w.ctx, w.owner, inputs(s), opts, "")
		if err != nil {
			w.shoot.Reopen(s.ID, describe(err).Message)
			return fmt.Errorf("%s was not submitted: %s", s.Name, describe(err).Message)
		}
		w.recordSubmitted(s.ID, sum, opts)
		return nil
	}
	for start := 0; start < len(ready); start += engine.MaxScenes {
		chunk := ready[start:min(start+engine.MaxScenes, len(ready))]
		req := engine.BatchRequest{Name: r.name, Defaults: defaults}
		if len(ready) > engine.MaxScenes {
			req.Name = fmt.Sprintf("%s (%d of %d)", r.name, start/engine.MaxScenes+1, (len(ready)+engine.MaxScenes-1)/engine.MaxScenes)
		}
		for _, s := range chunk {
			req.Scenes = append(req.Scenes, engine.Scene{Inputs: inputs(s), Options: cloneOptions(s.Overrides)})
		}
		agg, err := w.deps.Engine.SubmitBatch(w.ctx, w.owner, req, "")
		if err != nil {
			// The batch was refused as a whole: everything not yet sent goes back to
			// draft, and the scene the error names says why.
			bad := sceneOfField(err)
			for i, s := range ready[start:] {
				msg := ""
				if i == bad {
					msg = describe(err).Message
				}
				w.shoot.Reopen(s.ID, msg)
			}
			return fmt.Errorf("the batch was refused: %s", describe(err).Message)
		}
		w.runsMu.Lock()
		r.batchIDs = append(r.batchIDs, agg.BatchID)
		w.runsMu.Unlock()
		for i, sum := range agg.Orders {
			idx := i
			if sum.SceneIndex != nil {
				idx = *sum.SceneIndex
			}
			if idx >= 0 && idx < len(chunk) {
				w.recordSubmitted(chunk[idx].ID, sum, catalog.Merge(defaults, chunk[idx].Overrides))
			}
		}
	}
	return nil
}

// sceneOfField reads the scene index out of an error field "scenes[4].quality",
// -1 when there is none.
func sceneOfField(err error) int {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return -1
	}
	var i int
	if _, scanErr := fmt.Sscanf(ce.Field, "scenes[%d]", &i); scanErr != nil {
		return -1
	}
	return i
}

// recordSubmitted stores a scene's order, submitted with opts, as its newest version
// and cancels it at once when the user asked to cancel while it was being
// submitted.
func (w *Window) recordSubmitted(id int, sum core.OrderSummary, opts core.Options) {
	w.shoot.SubmittedWith(id, sum, opts)
	w.cancelMu.Lock()
	wanted := w.cancelWanted[id]
	delete(w.cancelWanted, id)
	w.cancelMu.Unlock()
	if wanted {
		if s, err := w.deps.Engine.Cancel(w.ctx, w.owner, sum.OrderUUID); err == nil {
			w.shoot.Update(s)
		}
	}
	w.markDirty()
}

// tracker follows the engine's events for the window's key and applies them to the
// shoot. Events are collected and applied together every tick, so a burst of
// progress from many scenes costs one redraw.
func (w *Window) tracker(ctx context.Context) {
	var mu sync.Mutex
	latest := map[string]core.OrderSummary{}
	subscribe := func() *events.Subscription {
		sub, _ := w.deps.Engine.Events().Subscribe(events.Filter{Owner: w.owner, Types: []string{core.EventOrder}}, 0)
		return sub
	}
	sub := subscribe()
	if w.hotOwner != "" {
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.followHot(ctx)
		}()
	}
	go func() {
		for {
			select {
			case <-ctx.Done():
				sub.Close()
				return
			case ev, ok := <-sub.C():
				if !ok {
					if errors.Is(sub.Err(), events.ErrSlowSubscriber) {
						// Fell behind: subscribe again and read every active order.
						sub = subscribe()
						w.resync()
						continue
					}
					return
				}
				if s, ok := ev.Data.(core.OrderSummary); ok {
					mu.Lock()
					latest[s.OrderUUID] = s
					mu.Unlock()
				}
			}
		}
	}()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	// Each tick applies the newest summary of every order heard from. Events can
	// beat SubmitBatch's answer, so a summary of an order the shoot does not know
	// yet stays pending for a while.
	type waiting struct {
		sum   core.OrderSummary
		since time.Time
	}
	pending := map[string]waiting{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		mu.Lock()
		batch := latest
		latest = map[string]core.OrderSummary{}
		mu.Unlock()
		now := time.Now()
		for id, s := range batch {
			since := now
			if u, ok := pending[id]; ok {
				since = u.since
			}
			pending[id] = waiting{sum: s, since: since}
		}
		for id, u := range pending {
			if w.apply(u.sum) || now.Sub(u.since) > 30*time.Second {
				delete(pending, id)
			}
		}
		w.flushRedraw()
	}
}

// apply lays one summary over its scene, in the current shoot or one switched away
// from while it had work under way; false when no scene has that order.
func (w *Window) apply(sum core.OrderSummary) bool {
	s, found, settled := w.shoot.Update(sum)
	if found {
		if settled {
			w.settled(s)
		}
		return true
	}
	for _, bg := range w.backgroundShoots() {
		s, found, settled := bg.Update(sum)
		if !found {
			continue
		}
		if settled {
			w.settledIn(bg, s)
		}
		w.backgroundChanged(bg)
		return true
	}
	return false
}

// resync reads every unsettled order again (after the event feed was lost).
func (w *Window) resync() {
	for _, s := range w.shoot.Scenes() {
		if s.Phase != PhaseSubmitted || s.Summary.Status.Terminal() {
			continue
		}
		if sum, err := w.deps.Engine.Order(w.ctx, w.owner, s.OrderID); err == nil {
			w.apply(sum)
		}
	}
	w.markDirty()
}

// settled runs once when a version of a scene reaches a final state (s shows that
// version): a completed version's photo is written to the output folder; a
// finished run sends a notification. A hot folder writes its own results.
func (w *Window) settled(s Scene) { w.settledIn(w.shoot, s) }

// settledIn is settled for a scene of sh (the current shoot or a background one).
func (w *Window) settledIn(sh *Shoot, s Scene) {
	if sh.ReadOnly() {
		return
	}
	if s.Summary.Status == core.OrderCompleted && s.Summary.OutputAssetID != "" && w.claimDelivery(s.OrderID) {
		name := sh.Name()
		w.busy.Add(1)
		go func() {
			defer w.busy.Done()
			w.deliver(s, name)
		}()
	}
	if sh == w.shoot {
		w.checkRunDone(s.RunID)
	}
}

// recordSaved records a version's saved photo in whichever shoot holds its order
// now (the user may have switched shoots meanwhile).
func (w *Window) recordSaved(s Scene, path, problem string) {
	if w.shoot.HasOrder(s.OrderID) {
		w.shoot.SetVersionSaved(s.ID, s.OrderID, path, problem)
		w.markDirty()
		return
	}
	for _, bg := range w.backgroundShoots() {
		if bg.HasOrder(s.OrderID) {
			bg.SetVersionSaved(s.ID, s.OrderID, path, problem)
			w.backgroundChanged(bg)
			return
		}
	}
}

// claimDelivery reports whether the photo of order id is still to be written, and
// claims it: events and the re-attachment after a restart can both report an order
// done.
func (w *Window) claimDelivery(id string) bool {
	w.deliverMu.Lock()
	defer w.deliverMu.Unlock()
	if w.delivered[id] {
		return false
	}
	w.delivered[id] = true
	return true
}

// deliver writes a completed scene's photo into the output folder; shoot names
// the batch when its run is not of this start.
func (w *Window) deliver(s Scene, shoot string) {
	dir := w.cfg.String(KeyOutputDir, defaultOutputDir())
	tmpl := w.cfg.String(KeyNaming, DefaultNaming)
	if checkTemplate(tmpl) != nil {
		tmpl = DefaultNaming
	}
	f, a, err := w.deps.Assets.Open(s.Summary.OutputAssetID)
	if err != nil {
		w.recordSaved(s, "", "finished, but the result could not be read: "+err.Error())
		return
	}
	defer f.Close()
	index := 1
	if s.Summary.SceneIndex != nil {
		index = *s.Summary.SceneIndex + 1
	}
	name := outputName(tmpl, nameFields{
		Scene: s.Name, Name: stem(s.Files[0]), Batch: w.runName(s.RunID, shoot), Index: index, Date: time.Now(),
	}, catalog.FormatExt(a.Format))
	path, err := writeNew(dir, name, f)
	if err != nil {
		w.recordSaved(s, "", "finished, but not saved: "+err.Error())
	} else {
		w.recordSaved(s, path, "")
	}
}

func (w *Window) runName(id int, shoot string) string {
	w.runsMu.Lock()
	defer w.runsMu.Unlock()
	if r, ok := w.runs[id]; ok {
		return strings.SplitN(r.name, " · ", 2)[0]
	}
	// A run of an earlier start: the shoot names it.
	if shoot != "" && shoot != newShootName {
		return shoot
	}
	return "shoot"
}

// checkRunDone sends the notification when every scene of a run has settled.
func (w *Window) checkRunDone(runID int) {
	w.runsMu.Lock()
	r, ok := w.runs[runID]
	if !ok || r.notified {
		w.runsMu.Unlock()
		return
	}
	var completed, failed int
	for _, id := range r.scenes {
		s, ok := w.shoot.Get(id)
		if !ok {
			continue
		}
		if !s.Terminal() {
			w.runsMu.Unlock()
			return
		}
		if s.Phase == PhaseSubmitted && s.Summary.Status == core.OrderCompleted {
			completed++
		} else {
			failed++
		}
	}
	r.notified = true
	name := r.name
	w.runsMu.Unlock()
	msg := fmt.Sprintf("%s: %d %s finished", name, completed, plural(completed, "photo", "photos"))
	if failed > 0 {
		msg += fmt.Sprintf(", %d did not", failed)
	}
	w.do(func() { w.notify("Batch done", msg) })
}

// reeditScene makes a processed scene a draft again, to be processed with other
// options; its results so far stay as versions.
func (w *Window) reeditScene(id int) {
	if !w.reedit(id) {
		return
	}
	if s, ok := w.shoot.Get(id); ok {
		w.setStatus(s.Name + ": change its settings, then process it again; the earlier result is kept.")
		w.sideTabs.SelectIndex(1)
	}
	w.refresh()
}

// reprocessWith processes scene id again with the scene options o, as a new version
// (the sliders' full-size render).
func (w *Window) reprocessWith(id int, o core.Options) {
	if s, ok := w.shoot.Get(id); ok && s.Phase != PhaseDraft && !w.reedit(id) {
		return
	}
	if err := w.shoot.SetOverrides(id, o); err != nil {
		w.setStatus(err.Error())
		return
	}
	s, ok := w.shoot.Get(id)
	if !ok {
		return
	}
	if err := w.submitScenes([]Scene{s}); err != nil {
		w.showError(err)
		return
	}
	w.setStatus(s.Name + ": rendering the new version at full size; the earlier result is kept.")
}

// reedit makes scene id a draft again, its photos queued for import where this run
// of the window has not imported them; it reports whether it could.
func (w *Window) reedit(id int) bool {
	if err := w.shoot.Reedit(id); err != nil {
		w.setStatus(err.Error())
		return false
	}
	if s, ok := w.shoot.Get(id); ok {
		// Its photos may not be imported in this run of the window.
		for _, f := range s.Files {
			if st := w.shoot.File(f); st.AssetID == "" || st.Status == core.AssetFailed {
				w.shoot.SetFile(f, FileState{})
				w.importMu.Lock()
				delete(w.importSeen, f)
				w.importMu.Unlock()
				w.enqueueImport(f)
			}
		}
	}
	return true
}

// retryScene makes a failed scene a draft again; photos whose import failed are
// imported anew.
func (w *Window) retryScene(id int) {
	if err := w.shoot.Retry(id); err != nil {
		w.setStatus(err.Error())
		return
	}
	if s, ok := w.shoot.Get(id); ok {
		for _, f := range s.Files {
			if w.shoot.File(f).Status == core.AssetFailed {
				w.shoot.SetFile(f, FileState{})
				w.importMu.Lock()
				delete(w.importSeen, f)
				w.importMu.Unlock()
				w.enqueueImport(f)
			}
		}
		w.setStatus(s.Name + " is ready to process again.")
	}
	w.refresh()
}

// cancelScene cancels one scene: its order when submitted, else its submission.
func (w *Window) cancelScene(id int) {
	s, ok := w.shoot.Get(id)
	if !ok || !s.Active() {
		return
	}
	if s.Phase == PhasePreparing {
		w.cancelMu.Lock()
		w.cancelWanted[id] = true
		w.cancelMu.Unlock()
		w.shoot.Refuse(id, "cancelled before it was submitted")
		w.checkRunDone(s.RunID)
		w.refresh()
		return
	}
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		sum, err := w.deps.Engine.Cancel(w.ctx, w.owner, s.OrderID)
		if err != nil {
			w.do(func() {
				if core.KindOf(err) == core.KindConflict {
					w.setStatus(s.Name + " had already finished.")
					return
				}
				w.showError(fmt.Errorf("cancel %s: %w", s.Name, err))
			})
			return
		}
		w.apply(sum)
		w.markDirty()
	}()
}

// cancelAll cancels every scene under way: each batch at once, then single orders
// and submissions still being prepared.
func (w *Window) cancelAll() {
	var batches []string
	var singles []string
	seen := map[string]bool{}
	for _, s := range w.shoot.Scenes() {
		if !s.Active() {
			continue
		}
		switch {
		case s.Phase == PhasePreparing:
			w.cancelMu.Lock()
			w.cancelWanted[s.ID] = true
			w.cancelMu.Unlock()
			w.shoot.Refuse(s.ID, "cancelled before it was submitted")
		case s.BatchID != "":
			if !seen[s.BatchID] {
				seen[s.BatchID] = true
				batches = append(batches, s.BatchID)
			}
		default:
			singles = append(singles, s.OrderID)
		}
	}
	sort.Strings(batches)
	w.busy.Add(1)
	go func() {
		defer w.busy.Done()
		var errs []error
		for _, b := range batches {
			agg, err := w.deps.Engine.CancelBatch(w.ctx, w.owner, b)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			for _, o := range agg.Orders {
				w.apply(o)
			}
		}
		for _, id := range singles {
			sum, err := w.deps.Engine.Cancel(w.ctx, w.owner, id)
			if err != nil && core.KindOf(err) != core.KindConflict {
				errs = append(errs, err)
				continue
			}
			if err == nil {
				w.apply(sum)
			}
		}
		for _, s := range w.shoot.Scenes() {
			if s.Phase == PhaseRefused {
				w.checkRunDone(s.RunID)
			}
		}
		w.markDirty()
		if err := errors.Join(errs...); err != nil {
			w.do(func() { w.showError(fmt.Errorf("cancel: %w", err)) })
		}
	}()
}
