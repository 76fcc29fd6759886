// Package cull sets aside the frames of a bracketed scene that should not go into
// the merge: a repeated bracket set's weaker run, blurred frames, black frames and
// test frames. It judges pixels and EXIF exposure only (no file access, pure Go);
// grouping.Cull reads a scene's files for it.
//
// API:
//
//	verdicts := cull.Judge(frames) // one Verdict per Frame, same order
//
// A Frame is a decoded image (any size; larger than AnalysisEdge is reduced, and
// about 1000 pixels wide is what the thresholds were measured at) with the EXIF
// exposure when the file has it. A Verdict says Keep, or gives the Reason in words
// for the photographer and the same as a Code. Judge never sets aside every frame,
// and a frame it sets aside can always be put back: the verdicts are advice, the
// caller decides what goes into the merge.
//
// What is set aside, and how it is told (precision matters more than recall, so
// each rule needs a clear margin before it acts):
//
//   - Black frame (CodeBlack): almost no signal, the lens cap or a misfire. Judged
//     on the frame's brightest pixels, not its mean: the darkest bracket of an
//     interior is nearly black but keeps its windows, and is kept.
//   - Test frame (CodeTest): a flat, featureless frame (a grey card) in a scene
//     whose other frames have structure.
//   - Repeated set (CodeRepeat): the scene holds the same exposures twice (the
//     photographer fired the bracket again). The run that is sharper (and, when
//     they are as sharp, better aligned frame to frame) is kept; each frame of the
//     other run whose exposure the kept run has is set aside.
//   - Blur (CodeMotion, CodeFocus): a frame clearly less sharp than its siblings.
//     Brackets differ in exposure, so sharpness is the ratio of short-range to
//     long-range differences of log luminance, compared pair by pair over the
//     regions well exposed in both frames; a frame is blurred when it falls well
//     below the median of its siblings. Blur along one direction is motion, blur
//     in every direction is focus.
package cull

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Frame is one bracket of a scene.
type Frame struct {
	// Image is the frame's pixels (linear light, as codec decodes them; narrow
	// images are fine), ideally reduced to about AnalysisEdge.
	Image *imaging.Image
	// ExposureTime (seconds), FNumber and ISO from EXIF; 0 when unknown.
	ExposureTime, FNumber, ISO float64
}

// ev is log2 of the light the frame gathered, NaN when the EXIF does not say.
func (f Frame) ev() float64 {
	if f.ExposureTime <= 0 || f.ISO <= 0 {
		return math.NaN()
	}
	fn := f.FNumber
	if fn <= 0 {
		fn = 1
	}
	return math.Log2(f.ExposureTime * f.ISO / (fn * fn))
}

// Code names why a frame was set aside.
type Code string

// The reasons.
const (
	CodeKeep   Code = ""
	CodeRepeat Code = "repeated_set"
	CodeMotion Code = "motion_blur"
	CodeFocus  Code = "out_of_focus"
	CodeBlack  Code = "black_frame"
	CodeTest   Code = "test_frame"
)

// Reason returns the words shown to the photographer for a code.
func Reason(c Code) string {
	switch c {
	case CodeRepeat:
		return "repeated set: kept the sharper one"
	case CodeMotion:
		return "motion blur"
	case CodeFocus:
		return "out of focus"
	case CodeBlack:
		return "black frame"
	case CodeTest:
		return "test frame (flat grey card)"
	}
	return ""
}

// Verdict is Judge's advice on one frame.
type Verdict struct {
	Keep   bool
	Code   Code   // CodeKeep when kept
	Reason string // Reason(Code): "" when kept
	// Twin, for CodeRepeat, is the index of the kept frame of the same exposure;
	// -1 otherwise.
	Twin int
}

func keep() Verdict { return Verdict{Keep: true, Twin: -1} }

func aside(c Code) Verdict { return Verdict{Code: c, Reason: Reason(c), Twin: -1} }

// median of xs (which it sorts).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
