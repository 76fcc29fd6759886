package hotfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
)

// The scenes of one drop (journal.Scene.Drop) are submitted as one batch, so the
// engine matches them to one look (shoot consistency). No scene is submitted
// before every scene of its drop is either ready (its inputs ingested) or out of
// it (failed, or taken apart): the scene that finds the drop ready submits the
// batch for all of them and records every member's order in one journal
// transaction; the others wait (errWait) and are woken by that submission, by a
// sibling failing (fail) or being taken apart (dissolve), and by dropRecheck as a
// safety net.
//
// A restart repeats the submission safely: the members are those ready now and
// those that have their order, which is the same set before and after the one
// transaction that records the batch, and the Idempotency-Key comes from the
// members and their content, so the engine answers the same batch. A scene the
// engine refuses is failed on its own and the batch submitted without it, as a
// single order's refusal fails only its scene.

// dropRecheck is how long a scene waiting for its drop sleeps before looking again
// should no sibling wake it.
const dropRecheck = 10 * time.Second

// batchable reports whether a scene's options can go in a batch: a style clause is
// accepted on single orders only.
func batchable(o core.Options) bool {
	return o.StyleClause == nil || strings.TrimSpace(*o.StyleClause) == ""
}

// submitDrop submits s with the rest of its drop, or waits for the drop.
func (f *folder) submitDrop(ctx context.Context, it item, s *journal.Scene) error {
	f.dropMu.Lock()
	defer f.dropMu.Unlock()
	for {
		f.mu.Lock()
		cur := f.active[s.ID]
		f.mu.Unlock()
		if cur == nil {
			return errWait // taken apart meanwhile
		}
		if cur.OrderID != "" || cur.Stage != journal.StageUploaded {
			// Submitted with the drop by a sibling, or refused and failed on the way.
			*s = *cur
			return nil
		}
		members, wait, err := f.dropMembers(s.Drop)
		if err != nil {
			return err
		}
		if wait {
			f.svc.queue.pushAfter(ctx, it, dropRecheck)
			return errWait
		}
		var todo []*journal.Scene
		for _, m := range members {
			if m.OrderID == "" {
				todo = append(todo, m)
			}
		}
		if !slices.ContainsFunc(todo, func(m *journal.Scene) bool { return m.ID == s.ID }) {
			// Not ready after all (an input gone meanwhile): look again later.
			f.svc.queue.pushAfter(ctx, it, dropRecheck)
			return errWait
		}
		done, err := f.submitBatches(ctx, todo)
		if err != nil {
			return err
		}
		if done {
			f.mu.Lock()
			cur = f.active[s.ID]
			f.mu.Unlock()
			if cur != nil {
				*s = *cur
			}
			return nil
		}
		// A scene was refused and failed: gather the drop again without it.
	}
}

// dropMembers returns the scenes of drop that go in its batch, in scene order:
// those ready to submit and those already submitted with it. wait is true while a
// scene of the drop is still on its way (uploading, or its inputs being ingested).
func (f *folder) dropMembers(drop string) (members []*journal.Scene, wait bool, err error) {
	f.mu.Lock()
	var sib []*journal.Scene
	for _, a := range f.active {
		if a.Drop == drop {
			c := *a
			sib = append(sib, &c)
		}
	}
	f.mu.Unlock()
	slices.SortFunc(sib, func(a, b *journal.Scene) int { return a.Index - b.Index })
	for _, m := range sib {
		switch {
		case m.OrderID != "":
			members = append(members, m)
		case m.Stage == journal.StageGrouped:
			return nil, true, nil
		case m.Stage == journal.StageUploaded:
			ready, err := f.ingestedReady(m)
			if err != nil {
				return nil, false, err
			}
			if !ready {
				// Its own worker fails it or finds it ready; either wakes this one.
				return nil, true, nil
			}
			members = append(members, m)
		}
		// Finished without an order: failed before it was submitted; not a member.
	}
	return members, false, nil
}

// ingestedReady reports whether every input of s is ingested and ready.
func (f *folder) ingestedReady(s *journal.Scene) (bool, error) {
	for _, id := range s.Assets {
		a, err := f.svc.deps.Assets.Get(s.Owner, id)
		if err != nil {
			if core.KindOf(err) == core.KindNotFound {
				return false, nil
			}
			return false, err
		}
		if a.Status != core.AssetReady {
			return false, nil
		}
	}
	return true, nil
}

// submitBatches submits scenes (a drop's, in scene order) as batches of at most
// engine.MaxScenes and journals each batch's orders in one transaction. done is
// false when the engine refused one scene, which is then failed on its own.
func (f *folder) submitBatches(ctx context.Context, scenes []*journal.Scene) (done bool, err error) {
	for i := 0; i < len(scenes); i += engine.MaxScenes {
		chunk := scenes[i:min(i+engine.MaxScenes, len(scenes))]
		if len(chunk) == 1 {
			// One scene has nothing to match: an order of its own, as before drops.
			s := chunk[0]
			if err := f.submitOne(ctx, s); err != nil {
				return false, err
			}
			if s.OrderID == "" {
				return false, nil // refused and failed
			}
			f.svc.queue.push(item{f: f, id: s.ID})
			continue
		}
		ok, err := f.submitBatch(ctx, chunk)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// sceneField finds the scene an engine refusal names: "scenes[3].quality".
var sceneField = regexp.MustCompile(`^scenes\[(\d+)\]`)

func (f *folder) submitBatch(ctx context.Context, chunk []*journal.Scene) (bool, error) {
	req := engine.BatchRequest{Name: batchName(f.cfg.Name, chunk[0].Label)}
	for _, s := range chunk {
		req.Scenes = append(req.Scenes, engine.Scene{Inputs: s.Assets, Options: s.Options})
	}
	owner := chunk[0].Owner
	agg, err := f.svc.deps.Engine.SubmitBatch(ctx, owner, req, batchKey(f.cfg.Name, chunk))
	if err != nil {
		var ce *core.Error
		if errors.As(err, &ce) && ce.Kind == core.KindInvalid {
			if m := sceneField.FindStringSubmatch(ce.Field); m != nil {
				if i, _ := strconv.Atoi(m[1]); i < len(chunk) {
					// That scene alone is refused, as a single order would be.
					reason := strings.TrimLeft(strings.TrimPrefix(err.Error(), m[0]), ".: ")
					return false, f.fail(chunk[i], "order_refused", reason)
				}
			}
		}
		if k := core.KindOf(err); k != core.KindInternal {
			// Refused as a whole (not for one scene): submit them one by one, so each
			// is judged on its own as before drops.
			f.log.Warn("drop refused as a batch; its scenes go as single orders", "scenes", len(chunk), "err", err)
			for _, s := range chunk {
				if err := f.submitOne(ctx, s); err != nil {
					return false, err
				}
				f.svc.queue.push(item{f: f, id: s.ID})
			}
			return true, nil
		}
		return false, err
	}
	if len(agg.Orders) != len(chunk) {
		return false, fmt.Errorf("the batch %s has %d scenes, submitted %d", agg.BatchID, len(agg.Orders), len(chunk))
	}
	now := time.Now()
	for _, o := range agg.Orders {
		if o.SceneIndex == nil || *o.SceneIndex < 0 || *o.SceneIndex >= len(chunk) {
			return false, fmt.Errorf("the batch %s answered a scene without its index", agg.BatchID)
		}
		s := chunk[*o.SceneIndex]
		s.OrderID, s.Stage, s.Submitted = o.OrderUUID, journal.StageSubmitted, now
	}
	if err := f.j.RecordScenes(chunk); err != nil {
		return false, err
	}
	f.mu.Lock()
	for _, s := range chunk {
		c := *s
		f.active[s.ID] = &c
	}
	f.mu.Unlock()
	f.log.Debug("drop submitted", "batch", agg.BatchID, "scenes", len(chunk))
	for _, s := range chunk {
		f.svc.queue.push(item{f: f, id: s.ID})
	}
	return true, nil
}

// wakeDrop queues the scenes of s's drop that wait to be submitted with it.
func (f *folder) wakeDrop(s *journal.Scene) {
	if s.Drop == "" {
		return
	}
	var wake []string
	f.mu.Lock()
	for id, a := range f.active {
		if id != s.ID && a.Drop == s.Drop && a.OrderID == "" && a.Stage == journal.StageUploaded {
			wake = append(wake, id)
		}
	}
	f.mu.Unlock()
	for _, id := range wake {
		f.svc.queue.push(item{f: f, id: id})
	}
}

// batchName names a drop's batch for people: the folder and the first scene.
func batchName(folder, label string) string {
	n := []rune(folder + ": " + label)
	if len(n) > engine.MaxBatchNameLen {
		n = n[:engine.MaxBatchNameLen]
	}
	return strings.TrimSpace(string(n))
}

// batchKey is "hotfolder-batch-" and the sha256 of the folder and every member's
// scene and content hashes: the same members always answer the same batch.
func batchKey(folder string, scenes []*journal.Scene) string {
	h := sha256.New()
	io.WriteString(h, folder)
	for _, s := range scenes {
		io.WriteString(h, "\x00"+s.ID)
		for _, ref := range s.Files {
			io.WriteString(h, "\x01"+ref.SHA256)
		}
	}
	return "hotfolder-batch-" + hex.EncodeToString(h.Sum(nil))
}
