package pipeline

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"strconv"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
)

// RegisterBackends registers the generative step of every feature reg has a backend
// for: indoor and outdoor staging, mess cleaner, declutter, and the magic eraser
// when the config sends it to a backend (replacing the built-in inpainter). Features
// without a backend keep no step, so their orders fail with feature_unavailable and
// the catalog shows them unavailable. A nil registry registers nothing.
func RegisterBackends(p *Pipeline, reg *backends.Registry) error {
	for _, f := range reg.Features() {
		if _, ok := genRecipes[f]; !ok {
			return fmt.Errorf("pipeline: no recipe for the backend feature %q", f)
		}
		b, err := reg.For(f)
		if err != nil {
			return err
		}
		if err := p.Register(generativeStep(genRecipes[f], b, reg.RoomClassifier())); err != nil {
			return err
		}
	}
	return nil
}

// GenerativeStep returns the step of a generative feature (a backends.Feature* key)
// running on b; rooms (may be nil) detects the room type of indoor staging orders
// that leave it to auto.
func GenerativeStep(feature string, b backends.Backend, rooms backends.RoomClassifier) Step {
	rc, ok := genRecipes[feature]
	if !ok {
		panic("pipeline: no generative recipe for " + feature)
	}
	return generativeStep(rc, b, rooms)
}

func generativeStep(rc genRecipe, b backends.Backend, rooms backends.RoomClassifier) Step {
	if rc.feature != backends.FeatureIndoorStaging {
		rooms = nil
	}
	return Step{
		Name: rc.step,
		Cost: rc.cost,
		// The photo, a working copy, the answer brought back to full size and masks.
		Memory: 3*bytesPerPixel + 8,
		Run:    func(ctx context.Context, j *Job) error { return runGenerative(ctx, j, rc, b, rooms) },
	}
}

// runGenerative sends the working image (fitted to the tier's longest edge unless
// the backend wants it whole) with the recipe's prompt, checks the answer, brings it
// back to the photo's size and, for the erasing features, keeps the photo's own
// pixels wherever the model changed nothing.
func runGenerative(ctx context.Context, j *Job, rc genRecipe, b backends.Backend, rooms backends.RoomClassifier) error {
	src := j.Image
	if src == nil {
		return Errorf(CodeInternal, "no working image before %s", rc.feature)
	}
	var mask *imaging.Image
	if rc.userMask {
		m, err := j.LoadMask()
		if err != nil {
			return err
		}
		mask = m
	}
	detected := ""
	if rooms != nil {
		// A classifier that cannot tell leaves the room to the model (room_type auto's
		// meaning without one); the order says so.
		room, err := rooms.ClassifyRoom(ctx, src)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			j.Note(fmt.Sprintf("%s: the room type could not be detected (%v); the model chose", featureName(rc), err))
		default:
			detected = room
			j.Note(fmt.Sprintf("%s: room detected as %s", featureName(rc), room))
		}
	}
	p := rc.params(j.Options, detected)
	work, wmask := src, mask
	if fr, ok := b.(backends.FullResolution); !ok || !fr.FullResolution() {
		if w, h := imaging.FitWithin(src.W(), src.H(), p.MaxEdge); w != src.W() || h != src.H() {
			work = imaging.Resize(src, w, h)
			if mask != nil {
				wmask = imaging.Resize(mask, w, h)
			}
		}
	}
	req := backends.Request{
		Feature: rc.feature, Image: work, Mask: wmask, Options: j.Options,
		Prompt: p.Prompt, Negative: p.Negative, Steps: p.Steps, Strength: p.Strength, Guidance: p.Guidance,
		Progress: func(f float64) { j.Progress(f * 0.9) },
	}
	req.Seed = seedOf(rc, p, work, wmask)
	label := backends.Label(b)
	out, err := b.Edit(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return &Error{Code: CodeBackendError, Err: err,
				Reason: fmt.Sprintf("%s: backend %s did not finish within its timeout: %v", featureName(rc), label, err)}
		}
		return &Error{Code: CodeBackendError, Err: err, Reason: fmt.Sprintf("%s: %v", featureName(rc), err)}
	}
	if out == nil || out.C != 3 {
		return Errorf(CodeBackendError, "%s: backend %s answered no usable image", featureName(rc), label)
	}
	if err := checkAnswer(work, wmask, out); err != nil {
		return &Error{Code: CodeBackendError, Err: err, Reason: fmt.Sprintf("%s: backend %s: %v", featureName(rc), label, err)}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	gen := out
	if !imaging.SameSize(gen, src) {
		gen = imaging.Resize(out, src.W(), src.H())
	}
	switch {
	case !rc.erase:
		j.Image = gen
	case mask != nil:
		// The user's mask, as drawn (its soft edge included): outside it the photo stays.
		j.Image = composite(src, gen, mask)
	default:
		if !imaging.SameSize(out, work) {
			out = imaging.Resize(out, work.W(), work.H())
		}
		change, share := changeMask(work, out)
		// Cover the removed things' soft rims, then fade the edge.
		r := max(2, (work.W()+work.H())/800)
		change = soften(dilate(change, r), r)
		if !imaging.SameSize(change, src) {
			change = imaging.Resize(change, src.W(), src.H())
		}
		j.Image = composite(src, gen, change)
		if share < 0.001 {
			j.Note(fmt.Sprintf("%s: the model found next to nothing to remove", featureName(rc)))
		}
	}
	j.Progress(1)
	return nil
}

func featureName(rc genRecipe) string {
	sl, _, _ := slotOf(rc.step)
	return sl.feature
}

// seedOf makes the run repeatable: the same photo, mask, prompt and settings on the
// same recipe version give the same seed.
func seedOf(rc genRecipe, p genParams, img, mask *imaging.Image) int64 {
	h := fnv.New64a()
	v, _ := catalog.RecipeVersion(rc.recipe)
	io.WriteString(h, rc.recipe+"@"+v+"\x00"+p.Prompt+"\x00"+p.Negative+"\x00")
	io.WriteString(h, strconv.Itoa(p.Steps)+"/"+strconv.FormatFloat(p.Strength, 'g', -1, 64)+"/"+strconv.FormatFloat(p.Guidance, 'g', -1, 64))
	hashPixels(h, img)
	if mask != nil {
		hashPixels(h, mask)
	}
	return int64(h.Sum64()%(math.MaxInt32-1)) + 1
}

// hashPixels feeds the image's 8-bit codes (with its size) to h, row by row.
func hashPixels(h io.Writer, m *imaging.Image) {
	io.WriteString(h, strconv.Itoa(m.W())+"x"+strconv.Itoa(m.H())+"x"+strconv.Itoa(m.C))
	buf := make([]byte, m.W()*m.C)
	for y := 0; y < m.H(); y++ {
		for i, v := range m.Row(y) {
			buf[i] = imaging.Encode8(v)
		}
		h.Write(buf)
	}
}
