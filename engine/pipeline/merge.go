package pipeline

import (
	"context"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
)

// mergeSteps are the auto HDR steps: alignment of the brackets to the reference
// (the median exposure) and exposure fusion into one image.
func mergeSteps() []Step {
	return []Step{
		{Name: StepAlign, Cost: 0.12, Memory: 5 * bytesPerPixel, Run: alignStep},
		{Name: StepMerge, Cost: 0.15, Memory: 4 * bytesPerPixel, Run: mergeStep},
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

// mergeStep fuses the brackets into the working image and takes the reference
// bracket's metadata for the output.
func mergeStep(ctx context.Context, j *Job) error {
	if len(j.Frames) < 2 {
		if len(j.Frames) == 1 {
			j.Image = j.Frames[0].Image
		}
		return nil
	}
	imgs := frameImages(j)
	ref := reference(j, imgs)
	out, err := fuse.Fuse(imgs, fuse.DefaultOptions())
	if err != nil {
		return err
	}
	j.Image = out
	j.Meta = j.Frames[ref].Meta
	j.Frames = nil // the brackets' memory can go now
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
