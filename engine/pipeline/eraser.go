package pipeline

import (
	"context"
	"errors"

	"github.com/porchlight/porchlight/engine/imaging/inpaint"
)

// eraserSteps is the built-in magic eraser: exemplar-based inpainting on this
// machine. A config that sends magic_eraser to a model backend replaces it.
func eraserSteps() []Step {
	return []Step{{Name: StepMagicEraser, Cost: 0.5, MemoryFor: eraserMemory, Run: eraseStep}}
}

// The eraser's memory: the mask, decoded and scaled to the photo, and the hole
// beside it (eraserMaskPerPixel a photo pixel), and the fill's pyramid, fields and
// blending buffers over inpaint.WorkArea (eraserWorkPerPixel a pixel of it).
// Measured on a 12 MP photo, the fill's peak heap is 14 to 138 bytes a photo pixel
// for holes of 2 to 88%, 96 to 138 a pixel of its work area.
const (
	eraserMaskPerPixel = 12
	eraserWorkPerPixel = 150
)

// eraserMemory bounds the eraser's working bytes on a w×h photo with this mask.
func eraserMemory(w, h int, mask MaskArea) int64 {
	work := inpaint.WorkArea(w, h, mask.On(w, h))
	return eraserMaskPerPixel*int64(w)*int64(h) + eraserWorkPerPixel*int64(work.Dx())*int64(work.Dy())
}

// eraserSeed is fixed: the same photo and mask give the same pixels, whatever the
// order or asset ids.
const eraserSeed = 1

func eraseStep(ctx context.Context, j *Job) error {
	if j.Image == nil {
		return Errorf(CodeInternal, "no working image before the magic eraser")
	}
	mask, err := j.LoadMask()
	if err != nil {
		return err
	}
	// The working image is the job's alone: filling it in place saves a full-size copy.
	out, err := inpaint.Erase(ctx, j.Image, mask, inpaint.Options{Seed: eraserSeed, Progress: j.Progress, InPlace: true})
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case errors.Is(err, inpaint.ErrEmptyMask), errors.Is(err, inpaint.ErrMaskAspect),
		errors.Is(err, inpaint.ErrBadMask), errors.Is(err, inpaint.ErrMaskTooLarge):
		return Wrap(CodeInvalidMask, err, "magic eraser")
	case err != nil:
		return Wrap(CodeStepFailed, err, "magic eraser")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j.Image = out
	return nil
}
