package pipeline

import (
	"context"
	"fmt"
	"math"
	"runtime"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/color"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/engine/imaging/lens"
)

// mergeSteps are the auto HDR steps: alignment of the brackets to the reference
// (the median exposure) and exposure fusion into one image. Alignment needs one
// warped frame at a time beyond the frames. The merge holds the brackets narrow (see
// narrowFrames), at most half of the decoded frames counted as held, so its own
// memory is what that leaves uncovered: a 16-bit copy being made, and the fusion's
// output and reduced working set beyond what narrowing two brackets frees.
func mergeSteps() []Step {
	return []Step{
		{Name: StepAlign, Cost: 0.12, Memory: bytesPerPixel, Run: alignStep},
		{Name: StepMerge, Cost: 0.15, Memory: 0.5 * bytesPerPixel, Run: mergeStep},
	}
}

func frameImages(j *Job) []*imaging.Image {
	imgs := make([]*imaging.Image, len(j.Frames))
	for i, f := range j.Frames {
		imgs[i] = f.Image
	}
	return imgs
}

// mergeAlignOptions resample a bracket only for motion bilinear resampling cannot
// blur more than it corrects. Resampling at a fractional shift s blurs with variance
// s(1-s) px², more than a misalignment d left in a blend (at most d²/4) for any d
// under 0.8 px; so shifts under 0.75 px stay as shot, and a homography must explain
// a translation residual of half a pixel or more: below that it fits the estimator's
// own error and extrapolates it into pixels at the corners (a tripod set measured
// 0.43 px RMS after translation, yet its homography moved a corner 5 px).
var mergeAlignOptions = align.Options{IdentityTolerance: 0.75, ResidualThreshold: 0.5}

// alignStep registers every bracket to the reference. A bracket whose registration
// is not a usable fit (no finite residual) is merged as shot, with a note, and so is
// the whole set when it cannot be registered at all: a tripod set merges well
// without alignment, and failing the order would help nobody.
//
// Brackets whose lens correction waits for the merge (see lensSteps) are first
// registered as shot, with the identity tolerance divided by the most the
// correction magnifies a motion: a set every bracket of which stays within it would
// stay within the tolerance corrected too, so it merges as shot and the merge
// corrects it. Otherwise the brackets are corrected now and registered corrected, as
// always, so alignment only ever estimates and warps corrected frames.
func alignStep(ctx context.Context, j *Job) error {
	if len(j.Frames) < 2 {
		return nil
	}
	// Narrow before warping, so the warped copies are 16-bit codes too.
	narrowFrames(j)
	imgs := frameImages(j)
	ref := reference(j, imgs)
	if c := pendingLens(j, false); c != nil {
		opt := mergeAlignOptions
		opt.IdentityTolerance /= c.MaxScale()
		ts, err := align.Estimate(ctx, imgs, ref, opt)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil || asShot(ts) {
			return registered(ctx, j, imgs, ts, err)
		}
		pendingLens(j, true)
		idx := make([]int, len(j.Frames))
		for i := range idx {
			idx[i] = i
		}
		if err := correctFrames(ctx, j, c, idx, func(int) {}); err != nil {
			return err
		}
		runtime.GC()
		imgs = frameImages(j)
	}
	ts, err := align.Estimate(ctx, imgs, ref, mergeAlignOptions)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return registered(ctx, j, imgs, ts, err)
}

// asShot reports whether every bracket is merged as shot: left by the estimate as
// identity, or not registered reliably.
func asShot(ts []align.Transform) bool {
	for _, t := range ts {
		if t.Model != align.ModelIdentity && !math.IsNaN(t.Residual) && !math.IsInf(t.Residual, 0) {
			return false
		}
	}
	return true
}

// registered warps the brackets by the transforms the estimate found (err is the
// estimate's), noting those merged as shot.
func registered(ctx context.Context, j *Job, imgs []*imaging.Image, ts []align.Transform, err error) error {
	if err != nil {
		j.Note(fmt.Sprintf("align: the brackets could not be registered (%v); merged as shot", err))
		return nil
	}
	for i, t := range ts {
		if err := ctx.Err(); err != nil {
			return err
		}
		switch {
		case t.Model == align.ModelIdentity:
		case math.IsNaN(t.Residual) || math.IsInf(t.Residual, 0):
			j.Note(fmt.Sprintf("align: inputs[%d] could not be registered reliably; merged as shot", i))
		default:
			out, err := align.Warp(ctx, imgs[i], t)
			if err != nil {
				return err
			}
			j.Frames[i].Image = out
		}
		j.Progress(float64(i+1) / float64(len(ts)))
	}
	return nil
}

// mergeStep fuses the brackets into the working image and takes the reference
// bracket's metadata for the output. A lens correction still pending (brackets merged
// as shot) is applied to the merge, after the brackets are dropped.
func mergeStep(ctx context.Context, j *Job) error {
	if len(j.Frames) < 2 {
		if len(j.Frames) == 1 {
			j.Image = j.Frames[0].Image
		}
		return nil
	}
	narrowFrames(j)
	imgs := frameImages(j)
	ref := reference(j, imgs)
	opt := fuse.DefaultOptions()
	opt.Progress = j.Progress
	out, err := fuse.Fuse(ctx, imgs, opt)
	if err != nil {
		return err
	}
	j.Meta = j.Frames[ref].Meta
	j.Frames = nil // the brackets' memory can go now
	if c := pendingLens(j, true); c != nil {
		// The brackets were merged as shot: the merge is corrected once, in their
		// place (see lensSteps).
		imgs = nil
		runtime.GC()
		if out, err = correctMerge(ctx, j, c, out); err != nil {
			return err
		}
	}
	j.Image = out
	return nil
}

// correctMerge corrects the lens of a merge, and its colour with it when the order
// asks for colour correction: the colour is estimated on the merge's coarse copy
// taken through the lens map, which is the corrected photo's coarse copy but for
// the sampling, and applied to each row as the lens correction writes it, saving a
// pass over the image. The colour step then has nothing left to do.
func correctMerge(ctx context.Context, j *Job, c *lens.Correction, img *imaging.Image) (*imaging.Image, error) {
	if !j.Options.ColorCorrection {
		return c.Apply(ctx, img)
	}
	fd, _, err := color.EstimateRemapped(img, c.Map)
	if err != nil {
		return nil, fmt.Errorf("colour correction: %w", err)
	}
	var row func(y int, px []float32)
	if fd != nil {
		row = func(y int, px []float32) { fd.ApplyRow(y, px, 3) }
	}
	out, err := c.ApplyRows(ctx, img, row)
	if err != nil {
		return nil, err
	}
	j.colorDone = true
	return out, nil
}

// narrowFrames holds the brackets as sRGB codes from alignment (or the merge, when
// alignment is off) to the merge, which reads them only encoded: 8 bits for a JPEG
// (exactly), else 16, a quarter or half of the decoded float32 frames, which are
// dropped one by one.
func narrowFrames(j *Job) {
	for i := range j.Frames {
		if j.Frames[i].Image.IsNarrow() {
			continue
		}
		// Collect before each copy, so the decoder's garbage and the float32 frame just
		// dropped are reused instead of growing the heap: the frames are the job's peak.
		runtime.GC()
		j.Frames[i].Image = j.Frames[i].Image.Narrow()
	}
	runtime.GC()
}

// reference picks the reference bracket once (the median exposure), so alignment and
// the output's metadata agree on it.
func reference(j *Job, imgs []*imaging.Image) int {
	if j.ref == 0 {
		j.ref = align.ReferenceIndex(imgs) + 1
	}
	return j.ref - 1
}
