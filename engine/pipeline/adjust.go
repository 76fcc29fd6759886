package pipeline

import "github.com/porchlight/porchlight/core"

// Adjusts reports whether any slider of r moves the photo.
func Adjusts(r core.Resolved) bool {
	return r.Exposure != 0 || r.Temperature != 0 || r.Tint != 0 || r.Contrast != 0 ||
		r.Highlights != 0 || r.Shadows != 0 || r.Whites != 0 || r.Blacks != 0 ||
		r.Vibrance != 0 || r.Saturation != 0
}

// adjustSteps is the sliders' step.
func adjustSteps() []Step { return nil }
