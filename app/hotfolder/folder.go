package hotfolder

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// folder is one hot folder: its scan loop (run) and the state the workers and the
// status share.
type folder struct {
	svc *Service
	cfg Config
	j   folderJournal
	log *slog.Logger

	kick chan struct{} // pause, resume: scan now

	mu         sync.Mutex
	files      map[string]*journal.FileEntry // journaled files, by path relative to the input
	holes      map[string]*journal.Hole      // files that failed on their own, until their domain is grouped
	active     map[string]*journal.Scene     // scenes not done yet
	counts     journal.Counters
	recent     []Activity
	userPaused bool
	missing    string             // why the input folder is unreachable; "" when it is there
	root       string             // the real input folder (see ResolveInput) as the last scan found it
	problems   map[string]problem // what is wrong now, by source ("scan", "output", "scene <id>")
	waiting    int                // files seen by the last scan that are in no scene yet

	// scanMu is held by a scan and by a worker taking a scene apart, so that a scan
	// never writes back entries of a scene dissolved meanwhile.
	scanMu sync.Mutex
	// dropMu is held while a drop's scenes are gathered and submitted as one batch,
	// so two of its scenes never submit it at once (see drop.go).
	dropMu sync.Mutex

	// Only the scan loop touches these.
	tracked    map[string]*tracked  // files not settled or not yet whole
	lastChange map[string]time.Time // domain -> last time one of its files changed
	firstWait  map[string]time.Time // domain -> when its oldest unassigned file settled
	watcher    *fsnotify.Watcher
	watched    map[string]bool
	links      map[string]bool // symbolic links in the input, logged once each
}

// tracked is a file seen by the scan that is not journaled yet.
type tracked struct {
	domain  string
	size    int64
	mtimeNs int64
	id      journal.FileID
	since   time.Time // when size, mtime and identity took these values
	busy    string    // why it was not taken at the last check
}

func newFolder(s *Service, c Config) (*folder, error) {
	f := &folder{
		svc: s, cfg: c, j: s.journal.Folder(c.Name),
		log:        s.log.With("folder", c.Name),
		kick:       make(chan struct{}, 1),
		problems:   map[string]problem{},
		tracked:    map[string]*tracked{},
		lastChange: map[string]time.Time{},
		firstWait:  map[string]time.Time{},
		watched:    map[string]bool{},
	}
	if root, err := ResolveInput(c.Input); err == nil {
		f.root = root // scenes resumed before the first scan read from here
	}
	if n, err := f.j.PruneScenes(time.Now().Add(-retention)); err != nil {
		return nil, err
	} else if n > 0 {
		f.log.Debug("pruned old scenes from the journal", "scenes", n)
	}
	l, err := f.j.Restore()
	if err != nil {
		return nil, err
	}
	f.files, f.holes, f.active, f.counts, f.userPaused = l.Files, l.Holes, l.Active, l.Counters, l.Paused
	recent, err := f.j.RecentScenes(recentMax)
	if err != nil {
		return nil, err
	}
	for i := len(recent) - 1; i >= 0; i-- {
		f.addActivity(sceneActivity(&recent[i]))
	}
	return f, nil
}

// resume queues the scenes that were in flight when the last run stopped.
func (f *folder) resume() {
	f.mu.Lock()
	ids := slices.Sorted(maps.Keys(f.active))
	f.mu.Unlock()
	for _, id := range ids {
		f.svc.queue.push(item{f: f, id: id})
	}
}

func (f *folder) setUserPaused(paused bool) error {
	if err := f.j.SetPaused(paused); err != nil {
		return err
	}
	f.mu.Lock()
	changed := f.userPaused != paused
	f.userPaused = paused
	if changed {
		kind := "resumed"
		if paused {
			kind = "paused"
		}
		f.addActivityLocked(Activity{Time: time.Now(), Kind: kind, Message: "from the window"})
	}
	f.mu.Unlock()
	select {
	case f.kick <- struct{}{}:
	default:
	}
	return nil
}

func (f *folder) status() FolderStatus {
	f.mu.Lock()
	defer f.mu.Unlock()
	st := FolderStatus{
		Name: f.cfg.Name, Input: f.cfg.Input, Output: f.cfg.Output, State: StateWatching,
		Pending: f.waiting, Done: f.counts.Done, Failed: f.counts.Failed,
		LastError: f.lastErrorLocked(), Recent: slices.Clone(f.recent),
	}
	for _, s := range f.active {
		if s.Stage == journal.StageGrouped {
			st.Pending += len(s.Files)
		} else {
			st.Processing++
		}
	}
	switch {
	case !f.cfg.Enabled:
		st.State = StateDisabled
	case f.userPaused:
		st.State, st.Reason = StatePaused, "paused from the window"
	case f.missing != "":
		st.State, st.Reason = StatePaused, f.missing
	case st.LastError != "":
		st.State = StateError
	}
	return st
}

func (f *folder) addActivity(a Activity) {
	f.mu.Lock()
	f.addActivityLocked(a)
	f.mu.Unlock()
}

func (f *folder) addActivityLocked(a Activity) {
	f.recent = slices.Insert(f.recent, 0, a)
	if len(f.recent) > recentMax {
		f.recent = f.recent[:recentMax]
	}
}

// problem is something wrong in a folder, shown as its LastError until it clears.
type problem struct {
	msg string
	at  time.Time
}

// setProblem records (err != nil) or clears (err == nil) the problem of a source.
func (f *folder) setProblem(source string, err error) {
	f.mu.Lock()
	old, had := f.problems[source]
	if err == nil {
		delete(f.problems, source)
		f.mu.Unlock()
		return
	}
	msg := err.Error()
	f.problems[source] = problem{msg: msg, at: time.Now()}
	if !had || old.msg != msg {
		f.addActivityLocked(Activity{Time: time.Now(), Kind: "error", Message: msg})
	}
	f.mu.Unlock()
	if !had || old.msg != msg {
		f.log.Warn("hot folder problem", "err", msg)
	}
}

// lastErrorLocked is the newest problem that still holds.
func (f *folder) lastErrorLocked() string {
	var last problem
	for _, p := range f.problems {
		if p.at.After(last.at) {
			last = p
		}
	}
	return last.msg
}

// pollInterval is how often an unreachable input folder is checked for.
func (f *folder) pollInterval() time.Duration {
	return min(f.cfg.Rescan, max(f.cfg.Settle, 100*time.Millisecond), 2*time.Second)
}

// debounce is the pause after a notification before scanning, so that a burst of
// notifications is one scan.
func (f *folder) debounce() time.Duration {
	return min(max(f.cfg.Settle/4, 20*time.Millisecond), 250*time.Millisecond)
}

// run is the folder's scan loop: it scans on notifications, on the timers of files
// waiting to settle and of folders waiting to go quiet, and on the rescan period.
func (f *folder) run(ctx context.Context) {
	defer f.closeWatcher()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var events <-chan fsnotify.Event
	var errs <-chan error
	next := time.Now()
	for {
		if f.watcher != nil {
			events, errs = f.watcher.Events, f.watcher.Errors
		} else {
			events, errs = nil, nil
		}
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				f.closeWatcher()
				continue
			}
			if ev.Op == fsnotify.Chmod {
				continue // atime or permission changes tell nothing about a copy
			}
			soon := time.Now().Add(f.debounce())
			if soon.Before(next) {
				next = soon
				resetTimer(timer, time.Until(next))
			}
			continue
		case err, ok := <-errs:
			if !ok {
				f.closeWatcher()
				continue
			}
			// An overflow loses events; the scan below and the rescan recover them.
			f.log.Debug("file notifications", "err", err)
		case <-f.kick:
		case <-timer.C:
		}
		next = f.tick(time.Now())
		resetTimer(timer, time.Until(next))
	}
}

func resetTimer(t *time.Timer, d time.Duration) {
	t.Stop()
	select {
	case <-t.C:
	default:
	}
	t.Reset(max(d, 0))
}

// tick scans once and forms the scenes that are ready; it returns when to scan next.
func (f *folder) tick(now time.Time) time.Time {
	f.mu.Lock()
	paused := f.userPaused
	f.mu.Unlock()
	if paused {
		f.closeWatcher()
		clear(f.tracked)
		return now.Add(f.cfg.Rescan)
	}
	list, dirs, err := f.list()
	if err != nil {
		f.setMissing(err)
		f.closeWatcher()
		return now.Add(f.pollInterval())
	}
	f.setMissing(nil)
	f.setProblem("output", f.ensureOutput())
	f.watch(dirs)
	f.scanMu.Lock()
	next := f.scan(now, list)
	if t := f.form(now); !t.IsZero() && t.Before(next) {
		next = t
	}
	f.scanMu.Unlock()
	if rescan := now.Add(f.cfg.Rescan); rescan.Before(next) {
		next = rescan
	}
	return next
}

func (f *folder) setMissing(err error) {
	msg := ""
	var le *LinkError
	switch {
	case errors.As(err, &le):
		msg = fmt.Sprintf("the input folder %s is not reachable: %v; waiting for it to return", f.cfg.Input, le)
	case err != nil:
		msg = fmt.Sprintf("the input folder %s is not reachable (%v); waiting for it to return", f.cfg.Input, unwrapPath(err))
	}
	f.mu.Lock()
	was := f.missing
	f.missing = msg
	switch {
	case was == "" && msg != "":
		f.addActivityLocked(Activity{Time: time.Now(), Kind: "paused", Message: msg})
	case was != "" && msg == "":
		f.addActivityLocked(Activity{Time: time.Now(), Kind: "resumed", Message: "the input folder is back"})
	}
	f.mu.Unlock()
	switch {
	case was == "" && msg != "":
		f.log.Warn("hot folder paused", "reason", msg)
	case was != "" && msg == "":
		f.log.Info("hot folder resumed: the input folder is back")
	}
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// list resolves the input folder (its link may have been pointed elsewhere since
// the last scan) and walks it, skipping the done, errors and output folders.
func (f *folder) list() ([]fileInfo, []string, error) {
	root, err := ResolveInput(f.cfg.Input)
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	was := f.root
	f.root = root
	f.mu.Unlock()
	if was != root && root != f.cfg.Input {
		f.log.Info("the input folder is a link; watching the folder it leads to", "input", f.cfg.Input, "folder", root)
	}
	skip := statDirs([]string{f.cfg.Done, f.cfg.Errors, f.cfg.Output})
	files, links, err := listFiles(root, skip)
	if err != nil {
		return nil, nil, err
	}
	f.noteLinks(links)
	dirs := map[string]bool{root: true}
	for _, fi := range files {
		d := filepath.Dir(filepath.Join(root, filepath.FromSlash(fi.rel)))
		for d != root && !dirs[d] {
			dirs[d] = true
			d = filepath.Dir(d)
		}
	}
	// Empty subfolders are watched too: a copy creates the folder before its files.
	if entries, err := os.ReadDir(root); err == nil {
		for _, e := range entries {
			if e.IsDir() && e.Name()[0] != '.' && !skipped(e, skip) {
				dirs[filepath.Join(root, e.Name())] = true
			}
		}
	}
	return files, slices.Sorted(maps.Keys(dirs)), nil
}

// noteLinks logs each symbolic link in the input once: it is never followed or
// taken, and whoever put it there may expect otherwise.
func (f *folder) noteLinks(links []string) {
	seen := make(map[string]bool, len(links))
	for _, rel := range links {
		seen[rel] = true
		if !f.links[rel] {
			f.log.Warn("symbolic link not taken: links in the input folder are never followed", "file", rel)
		}
	}
	f.links = seen
}

// inputDir is the real input folder that files are read from, moved and deleted
// in: the configured one with its links resolved by the last scan.
func (f *folder) inputDir() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.root != "" {
		return f.root
	}
	return f.cfg.Input
}

// watch keeps a notification watch on every folder the scan found.
func (f *folder) watch(dirs []string) {
	if f.watcher == nil {
		w, err := fsnotify.NewBufferedWatcher(4096)
		if err != nil {
			f.log.Warn("file notifications unavailable; relying on the rescan", "err", err)
			return
		}
		f.watcher = w
		clear(f.watched)
	}
	want := map[string]bool{}
	for _, d := range dirs {
		want[d] = true
		if f.watched[d] {
			continue
		}
		if err := f.watcher.Add(d); err != nil {
			f.log.Debug("watch folder", "dir", d, "err", err)
			continue
		}
		f.watched[d] = true
	}
	for d := range f.watched {
		if !want[d] {
			f.watcher.Remove(d)
			delete(f.watched, d)
		}
	}
}

func (f *folder) closeWatcher() {
	if f.watcher != nil {
		f.watcher.Close()
		f.watcher = nil
		clear(f.watched)
	}
}

// ensureOutput creates the output folder when its parent exists: a missing parent
// is more likely an unmounted drive than a folder to create.
func (f *folder) ensureOutput() error {
	if _, err := os.Stat(f.cfg.Output); err == nil {
		return nil
	}
	if _, err := os.Stat(filepath.Dir(f.cfg.Output)); err != nil {
		return fmt.Errorf("the output folder %s does not exist, nor its parent", f.cfg.Output)
	}
	if err := os.MkdirAll(f.cfg.Output, 0o755); err != nil {
		return fmt.Errorf("create the output folder: %w", err)
	}
	return nil
}

// scan compares what is in the folder with the journal: new and changed files are
// tracked until they settle, settled whole files are hashed and journaled, and
// entries of files that left the folder are dropped. It returns when a tracked file
// is due for its next check.
func (f *folder) scan(now time.Time, list []fileInfo) time.Time {
	next := now.Add(f.cfg.Rescan)
	present := make(map[string]bool, len(list))
	var due []fileInfo

	f.mu.Lock()
	for _, fi := range list {
		present[fi.rel] = true
		if e := f.files[fi.rel]; e != nil {
			if e.Size == fi.size && e.MtimeNs == fi.mtimeNs && (!e.Known() || e.FileID == fi.id) {
				delete(f.tracked, fi.rel)
				continue // known, as it was
			}
			if e.Scene != "" && f.active[e.Scene] != nil {
				continue // changed under a scene in flight: looked at once the scene is done
			}
		}
		t := f.tracked[fi.rel]
		if t == nil || t.size != fi.size || t.mtimeNs != fi.mtimeNs || t.id != fi.id {
			f.tracked[fi.rel] = &tracked{domain: fi.domain, size: fi.size, mtimeNs: fi.mtimeNs, id: fi.id, since: now}
			f.lastChange[fi.domain] = now
			next = earliest(next, now.Add(f.cfg.Settle))
			continue
		}
		if ready := t.since.Add(f.cfg.Settle); now.Before(ready) {
			next = earliest(next, ready)
			continue
		}
		due = append(due, fi)
	}
	for rel, t := range f.tracked {
		if !present[rel] {
			delete(f.tracked, rel)
			f.lastChange[t.domain] = now
		}
	}
	var gone []string
	for rel, e := range f.files {
		if !present[rel] && (e.Scene == "" || f.active[e.Scene] == nil) {
			gone = append(gone, rel)
		}
	}
	f.mu.Unlock()

	changed := f.take(now, due)
	if len(changed) > 0 || len(gone) > 0 {
		f.mu.Lock()
		for _, rel := range gone {
			delete(f.files, rel)
		}
		f.mu.Unlock()
		err := f.j.RecordFiles(changed, gone)
		f.setProblem("scan", err)
		if err != nil {
			// The in-memory view stays as the journal has it; the files are hashed again.
			f.mu.Lock()
			for rel := range changed {
				delete(f.files, rel)
			}
			f.mu.Unlock()
		} else {
			f.mu.Lock()
			maps.Copy(f.files, changed)
			f.mu.Unlock()
		}
	}
	for _, t := range f.tracked {
		if t.busy != "" {
			next = earliest(next, now.Add(f.cfg.Settle))
		}
	}

	f.mu.Lock()
	f.waiting = len(f.tracked)
	for _, e := range f.files {
		if e.Scene == "" {
			f.waiting++
		}
	}
	f.mu.Unlock()
	return next
}

// cutShortAfter is how long a file that nobody writes to may stay without its end
// marker before it is taken as cut short. Some copy tools close and reopen a file
// between pieces, so it is a few settle times, not one; but far from MaxWait, since
// the files beside it wait for it to be judged.
func (f *folder) cutShortAfter() time.Duration {
	return min(f.cfg.MaxWait, 5*f.cfg.Settle)
}

// take checks settled files and hashes those that are whole. A file that a program
// is still writing stays tracked; after MaxWait it is taken anyway, so that a
// broken file fails visibly (in the errors folder) instead of waiting forever. A
// file that nobody writes to and that is not a photo is taken at once, and one cut
// short after cutShortAfter, marked bad: it fails on its own (see form).
func (f *folder) take(now time.Time, due []fileInfo) map[string]*journal.FileEntry {
	if len(due) == 0 {
		return nil
	}
	root := f.inputDir()
	paths := make([]string, len(due))
	for i, fi := range due {
		paths[i] = filepath.Join(root, filepath.FromSlash(fi.rel))
	}
	busy := busyFiles(paths)
	out := map[string]*journal.FileEntry{}
	for i, fi := range due {
		t := f.tracked[fi.rel]
		waited := now.Sub(t.since)
		fh, _, err := openInput(paths[i], fi.id)
		if err != nil {
			switch {
			case isReplaced(err):
				f.log.Warn("file not taken", "file", fi.rel, "reason", err)
				delete(f.tracked, fi.rel)
			case errors.Is(err, errChanged), errors.Is(err, os.ErrNotExist), waited >= f.cfg.MaxWait:
				delete(f.tracked, fi.rel) // replaced or gone since the listing: tracked afresh
			default:
				t.busy = fmt.Sprintf("cannot be opened: %v", unwrapPath(err))
			}
			continue
		}
		e := f.takeOpen(now, t, fi, fh, busy[paths[i]])
		fh.Close()
		if e == nil {
			continue
		}
		out[fi.rel] = e
		if e.Bad != "" && e.Scene == "" {
			f.log.Warn("not a usable photo: it goes to the errors folder on its own", "file", fi.rel, "reason", e.Bad)
			continue
		}
		if e.Scene == "" {
			if _, ok := f.firstWait[fi.domain]; !ok {
				f.firstWait[fi.domain] = now
			}
		}
	}
	return out
}

// takeOpen judges and hashes one settled file, opened as listed (see openInput):
// nil while it is not taken yet or after it changed as it was read.
func (f *folder) takeOpen(now time.Time, t *tracked, fi fileInfo, fh *os.File, busy string) *journal.FileEntry {
	waited := now.Sub(t.since)
	reason := busy
	bad := ""
	if reason == "" {
		if bad = notPhoto(fh, fi.size); bad == "" {
			if fi.size < minHead {
				reason = "too short to tell what it is yet"
			} else {
				reason = incomplete(fh, fi.size)
			}
			if reason != "" && waited >= f.cutShortAfter() {
				if fi.size >= minHead && decodes(fh, fi.size) {
					reason = "" // whole, with data after its end marker
				} else {
					bad, reason = cutShort(fh, fi.size), ""
				}
			}
		}
	}
	if reason != "" && waited < f.cfg.MaxWait {
		if t.busy != reason {
			f.log.Debug("file not taken yet", "file", fi.rel, "reason", reason)
		}
		t.busy = reason
		return nil
	}
	if reason != "" {
		// Still written to after MaxWait: taken as it is now.
		if bad = notPhoto(fh, fi.size); bad == "" && (fi.size < minHead || (incomplete(fh, fi.size) != "" && !decodes(fh, fi.size))) {
			bad = cutShort(fh, fi.size)
		}
	}
	sum, err := hashFile(fh, fi.size)
	delete(f.tracked, fi.rel) // taken, or changed while read: tracked afresh
	if err != nil {
		return nil
	}
	f.mu.Lock()
	old := f.files[fi.rel]
	f.mu.Unlock()
	e := &journal.FileEntry{Size: fi.size, MtimeNs: fi.mtimeNs, FileID: fi.id, SHA256: sum, Seen: now, Bad: bad}
	if old != nil && old.SHA256 == sum {
		e.Scene, e.Seen = old.Scene, old.Seen // touched, not changed: still the same file
	}
	return e
}

func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// form turns the waiting files of every quiet domain into scenes. A domain (the
// loose files, or one subfolder) is quiet when none of its files is still settling
// and nothing in it changed for Quiet; one that never goes quiet has its settled
// files formed after MaxWait. A bad file does not wait: it becomes a failed scene
// of its own at once and a hole in its domain, so that the scene it was shot with
// is judged without it (see group). It returns when a domain will be ready, zero if
// none is waiting.
func (f *folder) form(now time.Time) time.Time {
	byDomain := map[string][]string{}
	var bad []string
	f.mu.Lock()
	for rel, e := range f.files {
		switch {
		case e.Scene != "":
		case e.Bad != "":
			bad = append(bad, rel)
		default:
			byDomain[domainOf(rel)] = append(byDomain[domainOf(rel)], rel)
		}
	}
	holes := maps.Clone(f.holes)
	f.mu.Unlock()
	unsettled := map[string]bool{}
	for _, t := range f.tracked {
		unsettled[t.domain] = true
	}
	var next time.Time
	var scenes []*journal.Scene
	addHoles := map[string]*journal.Hole{}
	slices.SortFunc(bad, compareNatural)
	for _, rel := range bad {
		s, h := f.badScene(rel, now)
		scenes = append(scenes, s)
		holes[rel], addHoles[rel] = h, h
	}
	holesOf := func(domain string) map[string]*journal.Hole {
		out := map[string]*journal.Hole{}
		for rel, h := range holes {
			if domainOf(rel) == domain {
				out[rel] = h
			}
		}
		return out
	}
	var dropHoles []string
	for _, domain := range slices.Sorted(maps.Keys(byDomain)) {
		quietAt := f.lastChange[domain].Add(f.cfg.Quiet)
		waited := now.Sub(f.firstWait[domain])
		if _, ok := f.firstWait[domain]; !ok {
			f.firstWait[domain] = now
			waited = 0
		}
		if (unsettled[domain] || now.Before(quietAt)) && waited < f.cfg.MaxWait {
			at := f.firstWait[domain].Add(f.cfg.MaxWait)
			if !unsettled[domain] {
				at = earliest(at, quietAt)
			}
			if next.IsZero() || at.Before(next) {
				next = at
			}
			continue
		}
		rels := byDomain[domain]
		sort.Slice(rels, func(i, j int) bool { return naturalLess(rels[i], rels[j]) })
		hs := holesOf(domain)
		scenes = append(scenes, f.group(domain, rels, hs, now)...)
		dropHoles = append(dropHoles, slices.Collect(maps.Keys(hs))...)
		delete(f.firstWait, domain)
	}
	// A hole whose domain has had nothing waiting or settling for MaxWait has no
	// scene left to tell (a copy may pause between files, so not at once).
	for rel, h := range holes {
		if d := domainOf(rel); byDomain[d] == nil && !unsettled[d] && now.Sub(h.Seen) >= f.cfg.MaxWait {
			dropHoles = append(dropHoles, rel)
		}
	}
	for _, rel := range dropHoles {
		delete(addHoles, rel)
	}
	if len(scenes) == 0 && len(dropHoles) == 0 {
		return next
	}
	f.mu.Lock()
	files := make(map[string]*journal.FileEntry, len(f.files))
	for rel, e := range f.files {
		c := *e
		files[rel] = &c
	}
	f.mu.Unlock()
	_, err := f.j.FormScenes(scenes, files, addHoles, dropHoles)
	f.setProblem("scan", err)
	if err != nil {
		return now.Add(f.pollInterval())
	}
	f.mu.Lock()
	maps.Copy(f.holes, addHoles)
	for _, rel := range dropHoles {
		delete(f.holes, rel)
	}
	if len(scenes) == 0 {
		f.mu.Unlock()
		return next
	}
	formed := Activity{Time: now, Kind: "formed", Message: fmt.Sprintf("%d scenes", len(scenes))}
	for _, s := range scenes {
		for _, ref := range append(slices.Clone(s.Files), s.Extras...) {
			if e := f.files[ref.Rel]; e != nil {
				e.Scene = s.ID
			}
		}
		f.active[s.ID] = s
		f.waiting -= len(s.Files) + len(s.Extras)
		formed.Files += len(s.Files)
	}
	if len(scenes) == 1 {
		formed.Scene, formed.Index, formed.Message = scenes[0].Label, scenes[0].Index, ""
	}
	f.addActivityLocked(formed) // one entry per drop, so a burst does not push out the results
	f.waiting = max(f.waiting, 0)
	f.counts.Seq = max(f.counts.Seq, scenes[len(scenes)-1].Index)
	f.mu.Unlock()
	f.log.Info("scenes formed", "scenes", len(scenes))
	for _, s := range scenes {
		f.svc.queue.push(item{f: f, id: s.ID})
	}
	return next
}

func domainOf(rel string) string {
	if d, _, ok := cutSlash(rel); ok {
		return d
	}
	return ""
}

func cutSlash(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '/' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
