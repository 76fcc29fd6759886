package pipeline

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging/perspective"
)

// perspectiveSteps straighten verticals (and a tilted horizon) at the order's
// perspective_strength. A photo with too little vertical structure is left as it is
// and the order says so in its notes: that is not a failure.
func perspectiveSteps() []Step {
	return []Step{{Name: StepPerspective, Cost: 0.06, Memory: 2 * bytesPerPixel, Run: perspectiveStep}}
}

func perspectiveStep(ctx context.Context, j *Job) error {
	out, res, err := perspective.Correct(ctx, j.Image, j.Options.PerspectiveStrength)
	if err != nil {
		return Wrap(CodeStepFailed, err, "perspective correction")
	}
	if !res.Applied {
		j.Note("perspective: left unchanged (" + res.Reason + ")")
		return nil
	}
	j.Image = out
	if res.RotationDeg != 0 {
		j.Note(fmt.Sprintf("perspective: verticals straightened (%.1f° at strength %.2f)", res.RotationDeg, res.Strength))
	}
	return nil
}
