package pipeline

import (
	"context"
	"fmt"

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

// alignStep registers every bracket to the reference. Brackets that cannot be
// registered (too little structure) are merged as shot, with a note: a tripod set
// merges well without alignment, and failing the order would help nobody.
func alignStep(ctx context.Context, j *Job) error {
	if len(j.Frames) < 2 {
		return nil
	}
	imgs := frameImages(j)
	ref := reference(j, imgs)
	aligned, _, err := align.Align(imgs, ref, align.Options{})
	if err != nil {
		j.Note(fmt.Sprintf("align: the brackets could not be registered (%v); merged as shot", err))
		return nil
	}
	for i := range j.Frames {
		j.Frames[i].Image = aligned[i]
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
