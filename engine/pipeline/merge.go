package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
)

// mergeSteps are the auto HDR steps: alignment of the brackets to the reference
// (the median exposure). The fusion step joins them once the fuse package is part
// of the build; until then orders with several inputs fail with feature_unavailable.
func mergeSteps() []Step {
	return []Step{
		{Name: StepAlign, Cost: 0.12, Memory: 5 * bytesPerPixel, Run: alignStep},
	}
}

func frameImages(j *Job) []*imaging.Image {
	imgs := make([]*imaging.Image, len(j.Frames))
	for i, f := range j.Frames {
		imgs[i] = f.Image
	}
	return imgs
}

// alignStep registers every bracket to the reference. A bracket whose registration
// is not a usable fit (no finite residual) is merged as shot, with a note, and so is
// the whole set when it cannot be registered at all: a tripod set merges well
// without alignment, and failing the order would help nobody.
func alignStep(ctx context.Context, j *Job) error {
	if len(j.Frames) < 2 {
		return nil
	}
	imgs := frameImages(j)
	ref := reference(j, imgs)
	ts, err := align.Estimate(imgs, ref, align.Options{})
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
			j.Frames[i].Image = align.Warp(imgs[i], t)
		}
		j.Progress(float64(i+1) / float64(len(ts)))
	}
	return nil
}

// reference picks the reference bracket once (the median exposure), so alignment and
// the output's metadata agree on it.
func reference(j *Job, imgs []*imaging.Image) int {
	if j.ref == 0 {
		j.ref = align.ReferenceIndex(imgs) + 1
	}
	return j.ref - 1
}
