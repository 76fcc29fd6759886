package hotfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// retryAfter is the wait before a scene whose step failed for a passing reason (a
// full disk, an unplugged output drive) is tried again.
const retryAfter = 2 * time.Second

// errWait says a scene is waiting on something the follower watches.
var errWait = errors.New("waiting")

// advance moves one scene as far as it can go now. Each stage's action can be
// repeated safely, so a crash anywhere only repeats the last action.
func (f *folder) advance(ctx context.Context, it item) {
	f.mu.Lock()
	cur := f.active[it.id]
	var s *journal.Scene
	if cur != nil {
		c := *cur
		s = &c
	}
	f.mu.Unlock()
	if s == nil {
		return
	}
	for ctx.Err() == nil && s.Stage != journal.StageDone {
		var err error
		switch s.Stage {
		case journal.StageGrouped:
			err = f.upload(it, s)
		case journal.StageUploaded:
			err = f.submit(ctx, it, s)
		case journal.StageSubmitted:
			err = f.await(ctx, it, s)
		case journal.StageFinished:
			err = f.deliver(s)
		default:
			err = fmt.Errorf("unknown stage %q", s.Stage)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, errWait):
			return
		case ctx.Err() != nil:
			return // stopping: the stage is repeated at the next start
		case errors.Is(err, errDissolved):
			f.svc.follow.releaseUpload(it)
			return
		default:
			f.setProblem("scene "+s.ID, fmt.Errorf("scene %s: %w", s.Label, err))
			f.svc.queue.pushAfter(ctx, it, retryAfter)
			return
		}
	}
}

// save journals s and makes it the scene's current state.
func (f *folder) save(s *journal.Scene) error {
	if err := f.j.RecordProgress(s); err != nil {
		return err
	}
	c := *s
	f.mu.Lock()
	f.active[s.ID] = &c
	f.mu.Unlock()
	return nil
}

// fail settles s as failed with a reason, to be delivered to the errors folder.
// Scenes of its drop waiting for it to be submitted go on without it.
func (f *folder) fail(s *journal.Scene, code, reason string) error {
	s.Stage, s.Outcome, s.ErrorCode, s.Error, s.Finished = journal.StageFinished, journal.OutcomeFailed, code, reason, time.Now()
	if err := f.save(s); err != nil {
		return err
	}
	f.wakeDrop(s)
	return nil
}

// errDissolved says a scene was taken apart because its files changed.
var errDissolved = errors.New("scene dissolved")

// upload adds the scene's files to the asset store. A file whose bytes are no
// longer those hashed when it settled dissolves the scene: its files go back to the
// scan, which takes them again once they settle.
func (f *folder) upload(it item, s *journal.Scene) error {
	if !f.svc.follow.acquireUpload(it) {
		return errWait
	}
	ids := make([]string, 0, len(s.Files))
	cleanup := func() {
		for _, id := range ids {
			f.svc.deps.Assets.Delete(s.Owner, id)
		}
	}
	for _, ref := range s.Files {
		id, err := f.addFile(s.Owner, ref)
		switch {
		case errors.Is(err, errChanged):
			cleanup()
			return f.dissolve(s, fmt.Sprintf("%s changed after it settled", ref.Rel))
		case errors.Is(err, os.ErrNotExist):
			cleanup()
			f.svc.follow.releaseUpload(it)
			return f.fail(s, "input_missing", fmt.Sprintf("%s was removed from the input folder before it was imported", ref.Rel))
		case isReplaced(err):
			// The photo is lost to the studio: fail the scene, saying so, rather
			// than quietly make it without that bracket.
			cleanup()
			f.svc.follow.releaseUpload(it)
			s.Left = append(s.Left, ref.Rel)
			return f.fail(s, "input_replaced", fmt.Sprintf("%s: %v", ref.Rel, err))
		case core.KindOf(err) == core.KindInvalid:
			cleanup()
			f.svc.follow.releaseUpload(it)
			return f.fail(s, "input_refused", fmt.Sprintf("%s: %v", ref.Rel, err))
		case err != nil:
			cleanup()
			return err
		}
		ids = append(ids, id)
	}
	s.Assets, s.Stage = ids, journal.StageUploaded
	if err := f.save(s); err != nil {
		cleanup()
		return err
	}
	return nil
}

// addFile uploads one file, checking on the way that its bytes are the hashed ones.
// It reads only the file that settled (see openInput): another file under its name
// is errChanged, and a link or other non-file a *replacedError.
func (f *folder) addFile(owner string, ref journal.FileRef) (string, error) {
	p := f.abs(ref.Rel)
	fh, _, err := openInput(p, ref.FileID)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	a, err := f.svc.deps.Assets.Add(owner, filepath.Base(p), "application/octet-stream", io.TeeReader(fh, h))
	if err != nil {
		return "", fmt.Errorf("import %s: %w", ref.Rel, err)
	}
	if hex.EncodeToString(h.Sum(nil)) != ref.SHA256 {
		f.svc.deps.Assets.Delete(owner, a.ID)
		return "", errChanged
	}
	return a.ID, nil
}

func (f *folder) dissolve(s *journal.Scene, why string) error {
	f.scanMu.Lock()
	defer f.scanMu.Unlock()
	if err := f.j.DissolveScene(s); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.active, s.ID)
	delete(f.problems, "scene "+s.ID)
	for _, ref := range append(slices.Clone(s.Files), s.Extras...) {
		delete(f.files, ref.Rel)
	}
	f.mu.Unlock()
	f.log.Info("scene taken apart; its files are read again once they settle", "scene", s.Label, "reason", why)
	f.wakeDrop(s)
	select {
	case f.kick <- struct{}{}:
	default:
	}
	return errDissolved
}

// submit waits for the scene's assets to be ingested and submits its order. The
// Idempotency-Key comes from the scene and its files' content, and the assets are
// journaled, so a submission repeated after a crash answers the same order.
func (f *folder) submit(ctx context.Context, it item, s *journal.Scene) error {
	var failed []string
	code := "input_unreadable"
	for i, id := range s.Assets {
		a, err := f.svc.deps.Assets.Get(s.Owner, id)
		if err != nil {
			if core.KindOf(err) == core.KindNotFound {
				failed = append(failed, fmt.Sprintf("%s: its imported copy was deleted", s.Files[i].Rel))
				continue
			}
			return err
		}
		switch a.Status {
		case core.AssetReady:
		case core.AssetFailed:
			failed = append(failed, fmt.Sprintf("%s: %s (%s)", s.Files[i].Rel, a.Reason, a.Code))
			if a.Code == core.CodeUnsupportedFormat {
				code = core.CodeUnsupportedFormat // the real problem, not a damaged photo
			}
		default:
			f.svc.follow.waitAssets(it, s.Owner, s.Assets)
			return errWait
		}
	}
	f.svc.follow.releaseUpload(it)
	if len(failed) > 0 {
		return f.fail(s, code, strings.Join(failed, "; "))
	}
	if s.Drop != "" && batchable(s.Options) {
		return f.submitDrop(ctx, it, s)
	}
	return f.submitOne(ctx, s)
}

// submitOne submits the scene as an order of its own.
func (f *folder) submitOne(ctx context.Context, s *journal.Scene) error {
	o, err := f.svc.deps.Engine.Submit(ctx, s.Owner, s.Assets, s.Options, idempotencyKey(f.cfg.Name, s))
	if err != nil {
		if k := core.KindOf(err); k != core.KindInternal {
			return f.fail(s, "order_refused", err.Error())
		}
		return err
	}
	s.OrderID, s.Stage, s.Submitted = o.OrderUUID, journal.StageSubmitted, time.Now()
	if err := f.save(s); err != nil {
		return err
	}
	f.log.Debug("scene submitted", "scene", s.Label, "order", s.OrderID, "inputs", len(s.Files))
	return nil
}

// idempotencyKey is "hotfolder-" and the sha256 of the folder, the scene and its
// inputs' content hashes.
func idempotencyKey(folder string, s *journal.Scene) string {
	h := sha256.New()
	io.WriteString(h, folder+"\x00"+s.ID)
	for _, ref := range s.Files {
		io.WriteString(h, "\x00"+ref.SHA256)
	}
	return "hotfolder-" + hex.EncodeToString(h.Sum(nil))
}

// await checks the scene's order and records its outcome once it settled.
func (f *folder) await(ctx context.Context, it item, s *journal.Scene) error {
	o, err := f.svc.deps.Engine.Order(ctx, s.Owner, s.OrderID)
	if err != nil {
		if core.KindOf(err) == core.KindNotFound {
			return f.fail(s, "order_missing", fmt.Sprintf("order %s no longer exists", s.OrderID))
		}
		return err
	}
	if !o.Status.Terminal() {
		f.svc.follow.trackOrder(s.OrderID, s.Owner, it)
		return errWait
	}
	s.Stage, s.Finished, s.Recipes, s.Notes = journal.StageFinished, time.Now(), o.Recipes, o.Notes
	if o.Status == core.OrderCompleted {
		s.Outcome, s.OutputAsset = journal.OutcomeCompleted, o.OutputAssetID
	} else {
		s.Outcome, s.ErrorCode = journal.OutcomeFailed, o.ErrorCode
		s.Error = o.Error
		if s.Error == "" {
			s.Error = "the order was " + string(o.Status)
		}
		if s.ErrorCode == "" {
			s.ErrorCode = string(o.Status)
		}
	}
	return f.save(s)
}

// deliver writes a completed scene's output and sidecar and handles its originals,
// or moves a failed scene's inputs to the errors folder with its report; then the
// scene is done.
func (f *folder) deliver(s *journal.Scene) error {
	var err error
	if s.Outcome == journal.OutcomeCompleted {
		err = f.deliverOutput(s)
	} else {
		err = f.deliverFailure(s)
	}
	if err != nil {
		return err
	}
	return f.complete(s)
}

func (f *folder) deliverOutput(s *journal.Scene) error {
	dir := f.cfg.Output
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("the output folder %s is not reachable; the result waits", dir)
	}
	temp := tempName(s.ID, "output")
	if s.Output == "" {
		if placed(dir, temp, s.Writing) {
			s.Output = s.Writing
		} else if err := f.writeOutput(s, dir, temp); err != nil {
			if errors.Is(err, errOutputGone) {
				return f.deliverFailure(s)
			}
			return err
		}
		if err := f.save(s); err != nil {
			return err
		}
	}
	if f.cfg.Sidecar {
		s.Sidecar = s.Output + ".json"
		if err := writeOwned(filepath.Join(dir, s.Sidecar), writeJSON(sidecarOf(f.cfg.Name, s))); err != nil {
			return err
		}
	}
	return f.handleOriginals(s)
}

// errOutputGone says a completed order's output vanished before it was written.
var errOutputGone = errors.New("output gone")

func (f *folder) writeOutput(s *journal.Scene, dir, temp string) error {
	file, _, err := f.svc.deps.Assets.Open(s.OutputAsset)
	if err != nil {
		if k := core.KindOf(err); k == core.KindNotFound || k == core.KindConflict {
			// The output is gone (deleted from the window): report it as a failure.
			s.Outcome, s.ErrorCode, s.Writing = journal.OutcomeFailed, "output_missing", ""
			s.Error = fmt.Sprintf("the order completed but its output %s is no longer available: %v", s.OutputAsset, err)
			if err := f.save(s); err != nil {
				return err
			}
			return errOutputGone
		}
		return err
	}
	defer file.Close()
	stem := outputStem(s.Naming, nameFields{Name: stemOf(s.Files[0].Rel), Scene: s.Label, Date: s.Formed, Index: s.Index})
	name, err := place(dir, stem, catalog.FormatExt(s.Format), temp,
		func(name string) error { s.Writing = name; return f.save(s) },
		func(w io.Writer) error { _, err := io.Copy(w, file); return err })
	if err != nil {
		return err
	}
	s.Output = name
	return nil
}

// handleOriginals leaves, moves or deletes a completed scene's input files.
func (f *folder) handleOriginals(s *journal.Scene) error {
	if f.cfg.Originals == OriginalsLeave {
		return nil
	}
	if err := f.inputReachable(); err != nil {
		return err
	}
	switch f.cfg.Originals {
	case OriginalsMove:
		return f.moveInputs(s, f.cfg.Done)
	case OriginalsDelete:
		for _, ref := range s.AllFiles() {
			p := f.abs(ref.Rel)
			if _, ok := f.stillOurs(p, ref); !ok {
				continue
			}
			// Remove unlinks the name, a link itself were one swapped in since.
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("delete %s: %w", ref.Rel, err)
			}
		}
		f.removeEmptyDirs(s)
	}
	return nil
}

// stillOurs reports whether the file at p is the one the scene took, looking at the
// name itself, and returns its identity: a file dropped since under the same name
// is not touched, nor is a link put there (logged, as it may be an attempt to have
// another file moved). A regular file with the size and time of the one read but
// another identity (a drive mounted again can number its files anew) is ours when
// its bytes are those that were read: moving it moves nothing else.
func (f *folder) stillOurs(p string, ref journal.FileRef) (journal.FileID, bool) {
	st, err := os.Lstat(p)
	if err != nil {
		return journal.FileID{}, false
	}
	if err := replaced(st); err != nil {
		f.log.Warn("input left in the input folder", "file", ref.Rel, "reason", err)
		return journal.FileID{}, false
	}
	if st.Size() != ref.Size || st.ModTime().UnixNano() != ref.MtimeNs {
		return journal.FileID{}, false
	}
	id := identity(st)
	if !ref.Known() || id == ref.FileID {
		return id, true
	}
	fh, _, err := openInput(p, id)
	if err != nil {
		return journal.FileID{}, false
	}
	defer fh.Close()
	sum, err := hashFile(fh, ref.Size)
	return id, err == nil && sum == ref.SHA256
}

// inputReachable fails while the input folder is away: its files cannot be moved
// then, and forgetting them would import them again when it returns.
func (f *folder) inputReachable() error {
	if st, err := os.Stat(f.cfg.Input); err != nil || !st.IsDir() {
		return fmt.Errorf("the input folder %s is not reachable; the originals wait", f.cfg.Input)
	}
	return nil
}

// ensureDir creates a done or errors folder, but only in a folder that exists: a
// missing parent is more likely an unmounted drive than something to create.
func ensureDir(dir string) error {
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return nil
	}
	if _, err := os.Stat(filepath.Dir(dir)); err != nil {
		return fmt.Errorf("%s is not reachable: %w", filepath.Dir(dir), unwrapPath(err))
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	return nil
}

func (f *folder) moveInputs(s *journal.Scene, dst string) error {
	if err := ensureDir(dst); err != nil {
		return err
	}
	for _, ref := range s.AllFiles() {
		p := f.abs(ref.Rel)
		id, ok := f.stillOurs(p, ref)
		if !ok {
			continue // moved already, or replaced by a newer file
		}
		if _, err := moveFile(p, dst, ref.Rel, id); err != nil {
			return fmt.Errorf("move %s to %s: %w", ref.Rel, dst, err)
		}
	}
	f.removeEmptyDirs(s)
	return nil
}

// removeEmptyDirs removes the subfolders of the input that the scene emptied.
func (f *folder) removeEmptyDirs(s *journal.Scene) {
	root := f.inputDir()
	dirs := map[string]bool{}
	for _, ref := range s.AllFiles() {
		for d := filepath.Dir(filepath.Join(root, filepath.FromSlash(ref.Rel))); d != root && within(root, d); d = filepath.Dir(d) {
			dirs[d] = true
		}
	}
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	sort.Slice(list, func(i, j int) bool { return len(list[i]) > len(list[j]) }) // deepest first
	for _, d := range list {
		os.Remove(d) // fails, as it should, while anything is left in it
	}
}

// deliverFailure moves the inputs to the errors folder and writes the report
// beside them: <scene>.error.txt for people and <scene>.error.json for tools.
func (f *folder) deliverFailure(s *journal.Scene) error {
	dir := f.cfg.Errors
	if err := f.inputReachable(); err != nil {
		return err
	}
	if err := ensureDir(dir); err != nil {
		return err
	}
	if s.Output == "" {
		temp := tempName(s.ID, "error")
		if placed(dir, temp, s.Writing) {
			s.Output = s.Writing
		} else {
			name, err := place(dir, safeName(s.Label, "scene")+".error", ".txt", temp,
				func(name string) error { s.Writing = name; return f.save(s) },
				func(w io.Writer) error { _, err := io.WriteString(w, errorText(f.cfg.Name, s)); return err })
			if err != nil {
				return err
			}
			s.Output = name
		}
		if err := f.save(s); err != nil {
			return err
		}
	}
	s.Sidecar = strings.TrimSuffix(s.Output, ".txt") + ".json"
	if err := writeOwned(filepath.Join(dir, s.Sidecar), writeJSON(sidecarOf(f.cfg.Name, s))); err != nil {
		return err
	}
	return f.moveInputs(s, dir)
}

// complete journals the scene as done and forgets the files that left the input.
func (f *folder) complete(s *journal.Scene) error {
	var forget []string
	if s.Outcome == journal.OutcomeFailed || f.cfg.Originals != OriginalsLeave {
		for _, ref := range s.AllFiles() {
			forget = append(forget, ref.Rel)
		}
	}
	s.Stage = journal.StageDone
	c, err := f.j.FinishScene(s, forget)
	if err != nil {
		s.Stage = journal.StageFinished
		return err
	}
	f.mu.Lock()
	delete(f.active, s.ID)
	for _, rel := range forget {
		if e := f.files[rel]; e != nil && e.Scene == s.ID {
			delete(f.files, rel)
		}
	}
	f.counts.Done, f.counts.Failed = c.Done, c.Failed
	f.addActivityLocked(sceneActivity(s))
	delete(f.problems, "scene "+s.ID)
	f.mu.Unlock()
	switch {
	case s.Outcome == journal.OutcomeCompleted && s.Warning != "":
		f.log.Warn("scene delivered without some of its brackets", "scene", s.Label, "output", s.Output, "order", s.OrderID, "warning", s.Warning)
	case s.Outcome == journal.OutcomeCompleted:
		f.log.Info("scene delivered", "scene", s.Label, "output", s.Output, "order", s.OrderID)
	default:
		f.log.Warn("scene failed", "scene", s.Label, "reason", s.Error, "report", s.Output)
	}
	return nil
}

func sceneActivity(s *journal.Scene) Activity {
	a := Activity{Time: s.Finished, Kind: s.Outcome, Scene: s.Label, Index: s.Index, Files: len(s.Files), OrderID: s.OrderID, Output: s.Output}
	if s.Outcome == journal.OutcomeFailed {
		a.Message = s.Error
	} else {
		a.Message = s.Warning
	}
	return a
}
