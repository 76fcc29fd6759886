// Package lens corrects lens distortion, lateral chromatic aberration (TCA) and
// vignetting from lensfun's calibrated profiles.
//
// Prepare matches the camera and lens a shot names and has lensfun compute, once per
// scene, where every output pixel's red, green and blue come from and how much its
// vignetting darkened it, on a grid of nodes gridStep pixels apart. Apply then
// resamples each bracket from that map in row bands, in the bracket's own storage
// (8- or 16-bit sRGB codes, or float32), so correcting narrow brackets costs one more
// bracket of memory at a time and no float copy.
package lens

import (
	"fmt"
)

// Shot is what a photo's metadata says about its optics.
type Shot struct {
	Make, Model         string  // camera, as EXIF Make and Model
	LensMake, LensModel string  // EXIF LensMake and LensModel
	Focal               float64 // mm, as recorded (not 35 mm equivalent)
	Aperture            float64 // f-number; 0 when unknown (vignetting is then left)
	Distance            float64 // focus distance in metres; 0 when unknown
}

// NoProfileError says why no calibrated profile applies.
type NoProfileError struct{ Reason string }

func (e *NoProfileError) Error() string { return "no calibrated lens profile: " + e.Reason }

// Correction is a prepared correction for frames of W×H pixels.
type Correction struct {
	W, H            int
	Lens, Camera    string // lensfun's names of what matched
	Focal, Aperture float64
	// What the profile corrects; Distortion is always set.
	Distortion, TCA, Vignetting bool

	gw, gh   int
	score    int
	grid     []float32 // gw×gh nodes: xr, yr, xg, yg, xb, yb, gain
	maxScale float64
}

// MaxScale is the most the correction magnifies anywhere in the frame (at least 1):
// two points d pixels apart in the photo as shot are at most d·MaxScale apart once
// corrected. A motion measured on uncorrected frames bounds the same motion in
// corrected ones with it.
func (c *Correction) MaxScale() float64 { return c.maxScale }

// Prepare matches s in lensfun and computes the correction map for w×h frames.
// It returns ErrNoDatabase without lensfun's data and a *NoProfileError when no
// calibrated profile matches.
func Prepare(s Shot, w, h int) (*Correction, error) { return prepare(s, w, h, false) }

// Simulate is the inverse of Prepare: applying it distorts a straight photo, adds the
// TCA and darkens the corners as the lens would, at the lens's own scale. Tests use
// it to render what a lens makes of a scene.
func Simulate(s Shot, w, h int) (*Correction, error) { return prepare(s, w, h, true) }

// Describe is a short account for an order's notes.
func (c *Correction) Describe() string {
	what := "distortion"
	if c.TCA {
		what += ", chromatic aberration"
	}
	if c.Vignetting {
		what += ", vignetting"
	}
	cam := ""
	if c.Camera != "" {
		cam = " on " + c.Camera
	}
	ap := ""
	if c.Aperture > 0 {
		ap = fmt.Sprintf(" f/%g", c.Aperture)
	}
	return fmt.Sprintf("corrected %s with lensfun's profile of %s%s at %g mm%s", what, c.Lens, cam, c.Focal, ap)
}
