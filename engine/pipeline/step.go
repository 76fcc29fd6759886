// Package pipeline runs one order's recipe: an ordered list of named steps over a
// float32 linear-light image. The base steps (decode and normalise each input,
// resolution cap, delivery encode) run on every order; feature steps (bracket
// alignment and merge, magic eraser, perspective, tone, shoot consistency, sky,
// generative edits, privacy blur) are registered by the packages that implement
// them. Shoot consistency runs only on the scenes of a batch (Request.Shoot) and
// brings them to one white balance and exposure without any scene waiting for
// another's run (see match.go). An order that
// needs a step this build has not registered fails with a clear error naming the
// feature (code feature_unavailable) instead of silently skipping it.
//
// Progress and the time left are derived from each step's measured cost: the
// pipeline keeps a moving average of seconds per megapixel per step and weighs the
// steps of an order with it, so a slow merge counts for more than a fast encode.
package pipeline

import (
	"context"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
)

// Step names, in pipeline order (DESIGN: decode -> lens -> align -> merge -> colour ->
// magic eraser -> perspective -> tone -> shoot consistency -> sliders -> sky ->
// generative edit -> privacy -> resolution cap -> encode).
const (
	StepDecode         = "decode"
	StepLens           = "lens_correction"
	StepAlign          = "align"
	StepMerge          = "merge"
	StepFlambient      = "flambient"
	StepColor          = "color_correction"
	StepMagicEraser    = "magic_eraser"
	StepPerspective    = "perspective"
	StepTone           = "tone"
	StepMatch          = "shoot_consistency"
	StepAdjust         = "adjust"
	StepSky            = "sky"
	StepIndoorStaging  = "indoor_staging"
	StepOutdoorStaging = "outdoor_staging"
	StepMessCleaner    = "mess_cleaner"
	StepDeclutter      = "declutter_local"
	StepPrivacy        = "privacy"
	StepResolutionCap  = "resolution_cap"
	StepEncode         = "encode"
)

// slot describes a position of the pipeline: the feature it belongs to (for error
// messages), the stage shown while it runs, and defaults used before a step exists.
type slot struct {
	name         string
	feature      string // as people name it: "sky replacement"
	recipe       string // the versioned recipe the step belongs to (catalog.Recipe*)
	stage        string
	needsBackend bool // generative steps run on a model backend the config names
	// optional steps are skipped, and so not recorded, while this build registers
	// none for them: the order is delivered as it would be without the option.
	optional bool
}

// slots is the pipeline order.
var slots = []slot{
	{name: StepDecode, feature: "decoding", recipe: catalog.RecipeDevelop, stage: "decoding inputs"},
	// Lens correction works on each decoded frame before alignment, so the brackets
	// are aligned and merged with straight lines.
	{name: StepLens, feature: "lens correction", recipe: catalog.RecipeDevelop, stage: "correcting the lens", optional: true},
	{name: StepAlign, feature: "auto HDR (bracket alignment)", recipe: catalog.RecipeDevelop, stage: "aligning brackets"},
	{name: StepMerge, feature: "auto HDR (bracket merge)", recipe: catalog.RecipeDevelop, stage: "merging brackets"},
	// Flambient takes the merge's place when a flash frame is among the inputs (see
	// planFlash): it merges the ambient brackets and blends the flash frame in.
	{name: StepFlambient, feature: "flash and ambient blending", recipe: catalog.RecipeDevelop, stage: "blending the flash frame", optional: true},
	// Colour runs once, on the merge (or the single input), before anything edits
	// content or applies a look.
	{name: StepColor, feature: "colour correction", recipe: catalog.RecipeDevelop, stage: "correcting colour", optional: true},
	{name: StepMagicEraser, feature: "magic eraser", recipe: catalog.RecipeMagicEraser, stage: "erasing"},
	{name: StepPerspective, feature: "perspective correction", recipe: catalog.RecipeDevelop, stage: "correcting perspective"},
	{name: StepTone, feature: "tonecraft", recipe: catalog.RecipeDevelop, stage: "applying tone"},
	// Shoot consistency brings a batch's scenes to one white balance and exposure
	// once each has its own correction and look; the sliders come after it, so the
	// photographer's own settings have the last word.
	{name: StepMatch, feature: "shoot consistency", recipe: catalog.RecipeDevelop, stage: "matching", optional: true},
	{name: StepAdjust, feature: "adjustments", recipe: catalog.RecipeDevelop, stage: "adjusting", optional: true},
	{name: StepSky, feature: "sky replacement", recipe: catalog.RecipeSky, stage: "replacing sky"},
	{name: StepIndoorStaging, feature: "indoor staging", recipe: catalog.RecipeIndoorStaging, stage: "staging", needsBackend: true},
	{name: StepOutdoorStaging, feature: "outdoor staging", recipe: catalog.RecipeOutdoorStaging, stage: "staging", needsBackend: true},
	{name: StepMessCleaner, feature: "mess cleaner", recipe: catalog.RecipeMessCleaner, stage: "cleaning", needsBackend: true},
	{name: StepDeclutter, feature: "declutter", recipe: catalog.RecipeDeclutterLocal, stage: "decluttering", needsBackend: true},
	{name: StepPrivacy, feature: "privacy blur", recipe: catalog.RecipePrivacy, stage: "blurring private details"},
	{name: StepResolutionCap, feature: "resolution cap", recipe: catalog.RecipeDevelop, stage: "resizing"},
	{name: StepEncode, feature: "delivery encode", recipe: catalog.RecipeDevelop, stage: "encoding"},
}

func slotOf(name string) (slot, int, bool) {
	for i, s := range slots {
		if s.name == name {
			return s, i, true
		}
	}
	return slot{}, -1, false
}

// Step is one registered step.
type Step struct {
	// Name is one of the Step constants; it fixes the step's place in the pipeline.
	Name string
	// Stage is shown as progressStage while the step runs; empty takes the slot's.
	Stage string
	// Cost is the expected seconds per megapixel before any run was measured; it
	// weighs the step in progress and ETA until measurements replace it.
	Cost float64
	// Memory is the step's peak working memory in bytes per pixel of the working
	// image, beyond the images the job already holds (used for admission).
	Memory float64
	// MemoryFor, when set, replaces Memory for a step whose memory follows the
	// order's mask rather than the photo's size: its peak working bytes for a w×h
	// working image and what admission knows of the mask.
	MemoryFor func(w, h int, mask MaskArea) int64
	// Run does the work. It reads and replaces Job.Image (or Job.Frames before the
	// merge), reports progress through Job.Progress and should return soon after ctx
	// is done. Errors of bad input are *Error with a code; anything else counts as
	// the step failing.
	Run func(ctx context.Context, j *Job) error
}

// Frame is one decoded input.
type Frame struct {
	AssetID string
	Image   *imaging.Image
	Meta    codec.Meta
}

// Job is the state one order's steps share.
type Job struct {
	OrderID string
	Owner   string
	Options core.Resolved
	Inputs  []string // input asset ids, in order

	// Frames are the decoded inputs. With more than one, align and merge turn them
	// into Image; with one, Image is Frames[0].Image from the start.
	Frames []Frame
	// Image is the working image (linear light, 3 channels).
	Image *imaging.Image
	// Meta is the metadata the output carries: the reference input's.
	Meta codec.Meta

	// Assets opens other assets the order names (the magic eraser's mask).
	Assets Assets

	// Output is the asset the encode step wrote.
	Output core.Asset

	notes    []string
	progress func(frac float64)
	ref      int // 1 + index of the reference bracket once chosen, 0 before

	// lensPending is the lens correction deferred until the merge (a tripod set is
	// corrected once, merged) or until alignment finds the brackets must be
	// corrected one by one; nil once applied.
	lensPending *lens.Correction
	// colorDone: the merge applied the colour correction in the lens pass.
	colorDone bool

	// shoot is the order's batch, nil for a single order; pipe runs the reduced
	// develops of its scenes (see match.go).
	shoot *Shoot
	pipe  *Pipeline
}

// Note records something a step decided not to do or did differently, shown to
// people with the order (e.g. "perspective: too little vertical structure").
func (j *Job) Note(s string) { j.notes = append(j.notes, s) }

// Notes returns the notes recorded so far.
func (j *Job) Notes() []string { return append([]string(nil), j.notes...) }

// Progress reports how far (0..1) the running step is.
func (j *Job) Progress(frac float64) {
	if j.progress != nil {
		j.progress(frac)
	}
}
