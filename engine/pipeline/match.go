package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/match"
)

// Shoot consistency (StepMatch) brings the scenes of one batch to one white balance
// and exposure once each has its own correction and look. A scene never waits for
// its siblings' runs, which a single worker would turn into a deadlock: the first
// scene of the batch to reach the step develops every scene of the batch once more,
// cheaply (decoded at reducedEdge, merged, colour corrected and toned by the same
// steps as a full run, without lens, eraser and perspective), measures them and
// takes the shoot's look from all the measures (see engine/imaging/match). The look
// is kept in memory per batch; a scene of the batch reaching the step meanwhile
// waits for that one computation rather than starting its own, and after a restart
// it is computed again from the same inputs. Each scene then measures its own
// working image and moves it toward the look, within the clamps of package match.
//
// A scene whose photos cannot be developed is left out of the look, as are scenes
// already failed or cancelled when the look is taken; neither blocks or fails the
// others. A computation cut short (its order cancelled) is not kept: a scene waiting
// on it computes the look itself.

// reducedEdge is the longest edge of the reduced develop (about 1 MP at 3:2).
const reducedEdge = 1280

// shootMemoSize is how many batches' looks are remembered; older ones are computed
// again when a scene of theirs still needs one.
const shootMemoSize = 64

// Shoot is the batch an order belongs to, for the shoot-consistency step.
type Shoot struct {
	// ID is the batch's id: orders of one batch share the look computed for it.
	ID string
	// Scenes lists every scene of the batch, this order's included, in scene order.
	Scenes func(ctx context.Context) ([]ShootScene, error)
}

// ShootScene is one scene of a batch.
type ShootScene struct {
	OrderID string
	Inputs  []string
	Options core.Resolved
	// Skip leaves the scene out of the look: it failed, was cancelled or expired.
	Skip bool
}

func matchSteps() []Step {
	// The reduced develops are bounded by reducedEdge, not by the order's size; the
	// pass itself needs no copy of the working image.
	return []Step{{Name: StepMatch, Cost: 0.03, Memory: 0.05 * bytesPerPixel, Run: matchStep}}
}

func matchStep(ctx context.Context, j *Job) error {
	if j.shoot == nil || j.pipe == nil {
		return nil // a single order: nothing to match
	}
	look, err := j.pipe.shoots.look(ctx, j.shoot.ID, func(ctx context.Context) (match.Look, error) {
		return j.pipe.shootLook(ctx, j)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		// The batch could not be read: deliver the scene as developed rather than
		// fail it for its siblings' sake.
		j.Note(fmt.Sprintf("shoot consistency: not applied, the shoot's look could not be taken: %v", err))
		return nil
	}
	if look.Scenes < 2 {
		j.Note("shoot consistency: no other scene of the batch to match")
		return nil
	}
	img := j.Image
	if img == nil {
		return Errorf(CodeInternal, "no working image before shoot consistency")
	}
	if img.IsNarrow() {
		img = img.Widen()
		j.Image = img
	}
	own, err := match.Measure(ctx, img)
	if err != nil {
		return err
	}
	c := match.Plan(own, look)
	if c.Identity() {
		j.Note("shoot consistency: already matches the shoot's look")
		return nil
	}
	if err := match.Apply(ctx, img, c); err != nil {
		return err
	}
	j.Note(fmt.Sprintf("shoot consistency: %s toward the shoot's look (%d scenes)", c.Describe(), look.Scenes))
	return nil
}

// shootLook develops every scene of j's batch reduced and returns the look of
// those that developed. Progress goes to j, whose step is waiting for it.
func (p *Pipeline) shootLook(ctx context.Context, j *Job) (match.Look, error) {
	scenes, err := j.shoot.Scenes(ctx)
	if err != nil {
		return match.Look{}, err
	}
	var stats []match.Stats
	for i, sc := range scenes {
		if sc.Skip {
			continue
		}
		img, err := p.developReduced(ctx, j.Assets, sc)
		if ctx.Err() != nil {
			return match.Look{}, ctx.Err()
		}
		if err != nil {
			// A bad photo is its own order's failure; the others match without it.
			p.cfg.Logger.Info("shoot consistency: scene left out of the look", "batch", j.shoot.ID, "order", sc.OrderID, "err", err)
			continue
		}
		s, err := match.Measure(ctx, img)
		if err != nil {
			return match.Look{}, err
		}
		stats = append(stats, s)
		j.Progress(float64(i+1) / float64(len(scenes)))
	}
	return match.Target(stats), nil
}

// reducedSteps are the steps of a scene's own correction that the reduced develop
// runs: those that decide its colour and brightness. Lens, eraser and perspective
// change geometry, not the look.
var reducedSteps = map[string]bool{StepAlign: true, StepMerge: true, StepFlambient: true, StepColor: true, StepTone: true}

// developReduced develops one scene at reducedEdge with the registered steps.
func (p *Pipeline) developReduced(ctx context.Context, assets Assets, sc ShootScene) (*imaging.Image, error) {
	if len(sc.Inputs) == 0 {
		return nil, errors.New("the scene has no inputs")
	}
	sub := &Job{OrderID: sc.OrderID, Options: sc.Options, Inputs: sc.Inputs, Assets: assets}
	sub.Frames = make([]Frame, len(sc.Inputs))
	for i, id := range sc.Inputs {
		f, err := p.decodeReduced(assets, id)
		if err != nil {
			return nil, fmt.Errorf("inputs[%d] (%s): %w", i, id, err)
		}
		if i > 0 && !imaging.SameSize(sub.Frames[0].Image, f.Image) {
			return nil, fmt.Errorf("inputs[%d] has another size than inputs[0]", i)
		}
		sub.Frames[i] = f
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	sub.Meta = sub.Frames[len(sub.Frames)/2].Meta
	if len(sub.Frames) == 1 {
		sub.Image = sub.Frames[0].Image
	}
	steps, err := p.plan(sc.Options, len(sc.Inputs), false)
	if err != nil {
		return nil, err
	}
	p.planFlash(steps, sub)
	for _, s := range steps {
		if !reducedSteps[s.Name] {
			continue
		}
		if err := p.runStep(ctx, s, sub); err != nil {
			return nil, err
		}
	}
	if sub.Image == nil {
		return nil, errors.New("the reduced develop made no image")
	}
	if sub.Image.IsNarrow() {
		sub.Image = sub.Image.Widen()
	}
	return sub.Image, nil
}

func (p *Pipeline) decodeReduced(assets Assets, id string) (Frame, error) {
	b, err := assets.OpenAsset(id)
	if err != nil {
		return Frame{}, err
	}
	defer b.Close()
	img, meta, err := codec.Decode(b, b.Size(), codec.DecodeOptions{MaxPixels: p.cfg.MaxPixels, ScaleToMaxEdge: reducedEdge})
	if err != nil {
		return Frame{}, err
	}
	if img.W() == 0 || img.H() == 0 {
		return Frame{}, errors.New("no pixels")
	}
	return Frame{AssetID: id, Image: toRGB(img), Meta: meta}, nil
}

// shootMemo keeps the looks of recent batches, one computation per batch at a time.
type shootMemo struct {
	mu    sync.Mutex
	m     map[string]*shootEntry
	order []string // batch ids, oldest first
}

type shootEntry struct {
	done chan struct{}
	look match.Look
	err  error
}

func newShootMemo() *shootMemo { return &shootMemo{m: map[string]*shootEntry{}} }

// look returns batch id's look, computing it with compute unless another scene
// already does: then it waits for that one. A computation that failed is not kept,
// so a waiter whose own context is still live computes it again.
func (s *shootMemo) look(ctx context.Context, id string, compute func(context.Context) (match.Look, error)) (match.Look, error) {
	for {
		s.mu.Lock()
		e := s.m[id]
		if e == nil {
			e = &shootEntry{done: make(chan struct{})}
			s.m[id] = e
			s.order = append(s.order, id)
			if len(s.order) > shootMemoSize {
				delete(s.m, s.order[0])
				s.order = s.order[1:]
			}
			s.mu.Unlock()
			s.compute(ctx, id, e, compute)
			return e.look, e.err
		}
		s.mu.Unlock()
		select {
		case <-e.done:
		case <-ctx.Done():
			return match.Look{}, ctx.Err()
		}
		if e.err == nil {
			return e.look, nil
		}
		if err := ctx.Err(); err != nil {
			return match.Look{}, err
		}
		// The scene computing it stopped (cancelled, or the batch could not be read):
		// try again under this scene's own context.
	}
}

// compute fills e and closes its done channel, also when compute panics (the step
// recovers from that), so no waiter is left behind.
func (s *shootMemo) compute(ctx context.Context, id string, e *shootEntry, compute func(context.Context) (match.Look, error)) {
	finished := false
	defer func() {
		if !finished {
			e.err = errors.New("the look's computation stopped unexpectedly")
		}
		if e.err != nil {
			s.forget(id, e)
		}
		close(e.done)
	}()
	e.look, e.err = compute(ctx)
	finished = true
}

func (s *shootMemo) forget(id string, e *shootEntry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m[id] != e {
		return
	}
	delete(s.m, id)
	for i, o := range s.order {
		if o == id {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}
