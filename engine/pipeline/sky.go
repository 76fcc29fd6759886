package pipeline

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging/sky"
)

// skySteps replace the sky in the order's sky_style. A photo without sky (an
// interior, a frame filled by the building) is left as it is and the order says so in
// its notes: that is not a failure.
func skySteps() []Step {
	return []Step{{Name: StepSky, Cost: 0.08, Memory: 3 * bytesPerPixel, Run: skyStep}}
}

func skyStep(ctx context.Context, j *Job) error {
	out, res, err := sky.Replace(ctx, j.Image, j.Options.SkyStyle)
	if err != nil {
		return Wrap(CodeStepFailed, err, "sky replacement")
	}
	if !res.Found {
		j.Note("sky: no sky to replace (" + res.Reason + ")")
		return nil
	}
	j.Image = out
	j.Note(fmt.Sprintf("sky: replaced with %s (%.0f%% of the photo)", j.Options.SkyStyle, res.Fraction*100))
	return nil
}
