package pipeline

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging/color"
)

// colorSteps neutralise the illumination once, on the merge (or the single input),
// so every bracket is corrected the same way. A merge whose lens correction waits
// for it is corrected for colour as the lens is (see correctMerge).
func colorSteps() []Step {
	return []Step{{Name: StepColor, Cost: 0.01, Memory: 0.02 * bytesPerPixel, Run: colorStep}}
}

func colorStep(ctx context.Context, j *Job) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if j.colorDone {
		return nil
	}
	if _, err := color.Correct(j.Image); err != nil {
		return fmt.Errorf("colour correction: %w", err)
	}
	return nil
}
