// Package cull sets aside the frames of a bracketed scene that should not go into
// the merge: a repeated bracket set's weaker run, blurred frames, black frames and
// test frames. It judges pixels and EXIF exposure only (no file access, no cgo);
// grouping.Cull reads a scene's files for it and is what the window and the hot
// folders call.
//
// API:
//
//	verdicts := cull.Judge(frames)                                // one Verdict per Frame, same order
//	verdicts := cull.JudgeWith(frames, cull.Options{Trace: logf}) // with the measures logged
//
//	kept, aside := grouping.Cull(scene.Files) // paths; aside[i] has Path, Reason, Code
//
// A Frame is a decoded image (linear light as codec decodes it, any size; larger
// than AnalysisEdge is reduced, and about 1000 pixels on the long edge is what the
// thresholds were measured at) with its EXIF exposure (time, f-number, ISO; zero
// when unknown). A Verdict says Keep, or gives the Code and the Reason in words for
// the photographer (Reason(code); the texts are "repeated set: kept the sharper
// one", "motion blur", "out of focus", "black frame", "test frame (flat grey
// card)"). For a repeated set, Twin is the index of the kept frame of the same
// exposure, for a window that shows the two side by side. Judge never sets aside
// every frame; a frame without pixels is kept and takes no part. The verdicts are
// advice: the caller shows what was set aside and why, and a put-back simply
// merges the frame with the kept ones (Judge has no state to undo).
//
// What is set aside, and how it is told (precision matters more than recall, so
// each rule needs a clear margin before it acts), in this order:
//
//   - Black frame (CodeBlack): almost no signal, the lens cap on or a misfire: the
//     brightest pixels (99.9th percentile) stay under sRGB code 24. Judged on the
//     brightest pixels, not the mean: the darkest bracket of an interior is nearly
//     black but keeps its windows, and is kept. With EXIF on every frame, a frame
//     more than 4 EV darker than its exposure says (against its siblings) whose
//     99th percentile stays under code 64 is black too.
//   - Test frame (CodeTest): a flat, featureless frame (a grey card): its well
//     exposed thumbnail spans under 0.8 stops, in a scene with a frame that has
//     structure.
//   - Repeated set (CodeRepeat): the scene holds the same exposures twice (the
//     photographer fired the bracket again): a second run starts where two frames
//     in a row repeat exposures of the first (by EXIF within 0.3 EV, else by their
//     pixels and highlights). One repeated exposure alone is not a repeated set. The
//     run sharper against its twins is kept; of runs as sharp (within 5 percent),
//     the one whose frames moved least between shots; of those, the later. Each
//     frame of another run whose exposure the kept run has is set aside.
//   - Blur (CodeMotion, CodeFocus): a frame clearly less sharp than its siblings.
//     Brackets differ in exposure, so sharpness is the ratio of 1-pixel to 4-pixel
//     differences of sRGB codes (indifferent to contrast, and so to exposure and
//     tone curve), compared pair by pair over the 16-pixel tiles well exposed in
//     both frames, with the one or two siblings nearest in brightness (within 2.5
//     stops). A frame under 0.62 of them is blurred: motion when one direction lost
//     clearly more than another, else focus. The darkest bracket, which shares
//     little that is well exposed with the others, is rarely judged.
//
// Cost: about 30 ms a frame at 1000 pixels on one core, most of it the tile sums
// (BenchmarkJudge); grouping.Cull reads a 5-frame 12 MP scene and judges it in
// about 200 ms on two cores.
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
