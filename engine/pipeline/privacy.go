package pipeline

import (
	"context"
	"fmt"
	"strings"

	"github.com/porchlight/porchlight/engine/imaging/privacy"
)

// privacySteps find faces, licence plates and photos on walls and blur them beyond
// recovery; the last content step, so nothing later can bring a detail back.
func privacySteps() []Step {
	return []Step{{Name: StepPrivacy, Cost: 0.05, Memory: 2 * bytesPerPixel, Run: privacyStep}}
}

func privacyStep(ctx context.Context, j *Job) error {
	dets, err := privacy.Detect(ctx, j.Image, privacy.Options{Categories: j.Options.Categories, Threshold: j.Options.Threshold})
	if err != nil {
		return Wrap(CodeStepFailed, err, "privacy blur")
	}
	if len(dets) == 0 {
		j.Note("privacy: nothing to blur (" + strings.Join(j.Options.Categories, ", ") + ")")
		return nil
	}
	count := map[string]int{}
	for _, d := range dets {
		count[d.Concept]++
	}
	j.Image = privacy.Blur(j.Image, dets)
	var parts []string
	for _, c := range j.Options.Categories {
		if n := count[c]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c))
		}
	}
	j.Note("privacy: blurred " + strings.Join(parts, ", "))
	return nil
}
