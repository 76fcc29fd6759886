package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/flambient"
)

// flambientSteps blend a flash frame with the ambient brackets of its scene (see
// package flambient). The step is never planned up front: whether a scene has a
// flash frame is known only from the decoded inputs' EXIF, so planFlash puts it in
// the merge's place after the decode. Its memory beyond the frames is the blend's
// reduced planes, at a sixteenth of the pixels (about 100 MB for 12 MP; the ambient
// is blended in place); the merge of the ambient brackets inside it is counted with
// the merge's. A 12 MP blend takes about 2 s of CPU.
func flambientSteps() []Step {
	return []Step{{Name: StepFlambient, Cost: 0.2, Memory: 8, Run: flambientStep}}
}

// planFlash applies the default rule of the option flambient ("on when the scene
// has a flash frame") once the inputs are decoded: with flambient on and, among
// several inputs, at least one flash frame (EXIF Flash fired) and one ambient frame,
// the planned merge becomes the flambient step, which merges the ambient brackets
// and blends the flash frames in. Otherwise the plan stays as it is, and a flash
// frame with flambient set false is merged as a bracket, as it always was. steps is
// changed in place.
func (p *Pipeline) planFlash(steps []Step, j *Job) {
	if !j.Options.Flambient || len(j.Frames) < 2 {
		return
	}
	n := 0
	for _, f := range j.Frames {
		if f.Meta.FlashFired {
			n++
		}
	}
	if n == 0 {
		return
	}
	if n == len(j.Frames) {
		j.Note("flambient: every input is a flash frame; merged as brackets")
		return
	}
	s, ok := p.Step(StepFlambient)
	if !ok {
		return
	}
	for i := range steps {
		if steps[i].Name == StepMerge {
			steps[i] = s
			return
		}
	}
}

// flambientStep merges the ambient brackets (exposure fusion, as the merge step;
// one ambient frame is its own merge), keeps the flash frames out of that fusion,
// and blends them in. The output carries the reference ambient bracket's metadata.
func flambientStep(ctx context.Context, j *Job) error {
	var amb []Frame
	var flash []*imaging.Image
	var flashIdx []string
	for i, f := range j.Frames {
		if f.Meta.FlashFired {
			flash = append(flash, f.Image)
			flashIdx = append(flashIdx, fmt.Sprint(i))
		} else {
			amb = append(amb, f)
		}
	}
	if len(flash) == 0 || len(amb) == 0 {
		return mergeStep(ctx, j)
	}
	// A lens correction waiting for the merge (tripod brackets) is applied once,
	// to the blend, as the merge applies it (with the colour) to a fusion.
	lensFix := pendingLens(j, true)
	j.Frames = amb
	j.ref = 0 // the reference is chosen among the ambient brackets
	if len(amb) > 1 {
		report := j.progress
		j.progress = func(f float64) {
			if report != nil {
				report(0.7 * f)
			}
		}
		err := mergeStep(ctx, j)
		j.progress = report
		if err != nil {
			return err
		}
	} else {
		j.Meta = amb[0].Meta
		j.Image = amb[0].Image.Widen()
		j.Frames = nil
	}
	amb = nil
	runtime.GC()
	rep, err := flambient.Blend(ctx, j.Image, flash)
	if err != nil {
		return err
	}
	flash = nil
	if lensFix != nil {
		runtime.GC()
		out, err := correctMerge(ctx, j, lensFix, j.Image)
		if err != nil {
			return err
		}
		j.Image = out
	}
	j.Progress(1)
	what := "the ambient frame"
	if n := len(j.Inputs) - len(flashIdx); n > 1 {
		what = fmt.Sprintf("the merge of %d ambient brackets", n)
	}
	j.Note(fmt.Sprintf("flambient: flash frame inputs[%s] blended with %s: colour and detail from the flash, "+
		"the light from the ambient; windows from the flash frame (%.1f%% of the frame), "+
		"flash shadows (%.1f%%) and hot spots (%.1f%%) from the ambient",
		strings.Join(flashIdx, "], inputs["), what, 100*rep.Windows, 100*rep.Shadows, 100*rep.HotSpots))
	return nil
}
