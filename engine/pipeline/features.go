package pipeline

// builtinFeatureSteps are the feature steps implemented in-process by this build.
// Steps whose algorithm package is not part of the build yet are absent, so orders
// that need them fail with feature_unavailable.
func builtinFeatureSteps() []Step {
	steps := lensSteps()
	steps = append(steps, mergeSteps()...)
	steps = append(steps, flambientSteps()...)
	steps = append(steps, colorSteps()...)
	steps = append(steps, eraserSteps()...)
	steps = append(steps, perspectiveSteps()...)
	steps = append(steps, toneSteps()...)
	steps = append(steps, matchSteps()...)
	steps = append(steps, adjustSteps()...)
	steps = append(steps, skySteps()...)
	return append(steps, privacySteps()...)
}
