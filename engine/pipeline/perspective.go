package pipeline

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging/perspective"
)

// perspectiveSteps straighten verticals (and a tilted horizon) at the order's
// perspective_strength. A photo with too little vertical structure is left as it is
// and the order says so in its notes: that is not a failure. A correction that would
// warp the frame too far (perspective.SafeLimits: a shot from the foot of a building)
// is made only part of the way, and the notes say how far and why.
func perspectiveSteps() []Step {
	return []Step{{Name: StepPerspective, Cost: 0.06, Memory: 2 * bytesPerPixel, Run: perspectiveStep}}
}

func perspectiveStep(ctx context.Context, j *Job) error {
	opt := perspective.Options{Limits: perspective.SafeLimits}
	out, res, err := perspective.CorrectWith(ctx, j.Image, j.Options.PerspectiveStrength, opt)
	if err != nil {
		return Wrap(CodeStepFailed, err, "perspective correction")
	}
	if !res.Applied {
		j.Note("perspective: left unchanged (" + res.Reason + ")")
		return nil
	}
	j.Image = out
	switch {
	case res.Limited:
		j.Note(fmt.Sprintf("perspective: verticals partly straightened (%.1f° of the %.1f° needed, %.0f%% of the frame kept): "+
			"a full correction would have meant %s", res.RotationDeg, res.FullRotationDeg, 100*res.Frame.KeptArea, res.Limit))
	case res.RotationDeg != 0:
		j.Note(fmt.Sprintf("perspective: verticals straightened (%.1f° at strength %.2f)", res.RotationDeg, res.Strength))
	}
	return nil
}
