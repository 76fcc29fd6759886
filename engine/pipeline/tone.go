package pipeline

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging/tone"
)

// toneSteps apply the order's tonecraft look: the preset's settings, with
// tonecraft_levels and tonecraft_sharpen as resolved (an explicit false wins).
func toneSteps() []Step {
	return []Step{{Name: StepTone, Cost: 0.05, Memory: 0.1 * bytesPerPixel, Run: toneStep}}
}

func toneStep(ctx context.Context, j *Job) error {
	look, ok := catalog.TonecraftLook(j.Options.TonecraftProfile)
	if !ok {
		return Errorf(CodeStepFailed, "tonecraft profile %q does not exist", j.Options.TonecraftProfile)
	}
	tl := ToneLook(look, j.Options.TonecraftLevels, j.Options.TonecraftSharpen)
	// The working image is the job's alone: rendering over it saves a full-size copy.
	if _, err := tone.ApplyInPlace(ctx, j.Image, tl); err != nil {
		return fmt.Errorf("tonecraft %s: %w", j.Options.TonecraftProfile, err)
	}
	return nil
}

// ToneLook maps a catalog look (sliders -1..1) onto the tone package's scale
// (-100..100), with the resolved auto-levels and sharpening switches.
func ToneLook(l catalog.Look, levels, sharpen bool) tone.Look {
	t := tone.Look{
		Temperature:  l.WhiteBalanceTemp * 100,
		Tint:         l.WhiteBalanceTint * 100,
		Exposure:     l.Exposure,
		Contrast:     l.Contrast * 100,
		Highlights:   l.Highlights * 100,
		Shadows:      l.Shadows * 100,
		Whites:       l.Whites * 100,
		Blacks:       l.Blacks * 100,
		Vibrance:     l.Vibrance * 100,
		Saturation:   l.Saturation * 100,
		Warmth:       l.Warmth * 100,
		Clarity:      l.Clarity * 100,
		CleanShadows: l.CleanShadows * 100,
		AutoLevels:   levels,
		Sharpen:      sharpen,
	}
	for _, p := range l.Curve {
		t.Curve = append(t.Curve, tone.Point{X: p.X, Y: p.Y})
	}
	return t
}
