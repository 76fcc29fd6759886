package backends

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Feature keys a backend can serve: the catalog keys of the generative features and
// of the magic eraser.
const (
	FeatureIndoorStaging  = "indoor_staging"
	FeatureOutdoorStaging = "outdoor_staging"
	FeatureMessCleaner    = "mess_cleaner"
	FeatureDeclutter      = "declutter"
	FeatureMagicEraser    = "magic_eraser"
)

// FeatureRoomClassifier is the `features` key of the backend that detects the room
// type for indoor staging when an order says room_type auto. It must implement
// RoomClassifier.
const FeatureRoomClassifier = "room_classifier"

// RoomClassifier tells what kind of room a photo shows: one of the room_type values
// (bathroom, bedroom, child_room, dining_room, kitchen, living_room, office,
// terrace).
type RoomClassifier interface {
	ClassifyRoom(ctx context.Context, img *imaging.Image) (string, error)
}

// Features lists the feature keys a backend can be configured for.
var Features = []string{FeatureIndoorStaging, FeatureOutdoorStaging, FeatureMessCleaner, FeatureDeclutter, FeatureMagicEraser}

// KnownFeature reports whether key is one of Features.
func KnownFeature(key string) bool {
	for _, f := range Features {
		if f == key {
			return true
		}
	}
	return false
}

// Request is one edit for a backend.
type Request struct {
	// Feature is the catalog key of the feature (FeatureIndoorStaging, ...).
	Feature string
	// Image is the photo: linear light, 3 channels, at the size the model should see.
	Image *imaging.Image
	// Mask, when not nil, has one channel of Image's size with coverage 0..1: 1 marks
	// what the model must change (the magic eraser's region). Without a mask the
	// whole frame may change.
	Mask *imaging.Image
	// Options are the order's resolved options; the remote backend forwards the
	// feature's own options instead of the prompt.
	Options core.Resolved
	// Prompt and Negative are the recipe's text.
	Prompt   string
	Negative string
	// Seed makes the run repeatable: the same request gives the same pixels.
	Seed int64
	// Steps is the sampler's step count (the gen_quality tier).
	Steps int
	// Strength is how far the result may depart from Image (denoising strength,
	// 0..1); 1 regenerates the masked region from scratch.
	Strength float64
	// Guidance is the classifier-free guidance scale.
	Guidance float64
	// Progress, when not nil, receives how far the backend is (0..1). It is called
	// from the adapter's goroutines, never concurrently.
	Progress func(frac float64)
}

// Report calls r.Progress when set, clamped to 0..1.
func (r *Request) Report(frac float64) {
	if r.Progress != nil {
		r.Progress(min(max(frac, 0), 1))
	}
}

// Validate checks what every adapter relies on.
func (r *Request) Validate() error {
	if !KnownFeature(r.Feature) {
		return fmt.Errorf("unknown feature %q", r.Feature)
	}
	if r.Image == nil || r.Image.W() == 0 || r.Image.H() == 0 {
		return errors.New("the request has no image")
	}
	if r.Image.C != 3 {
		return fmt.Errorf("the image has %d channels, want 3", r.Image.C)
	}
	if r.Mask != nil {
		if r.Mask.C != 1 {
			return fmt.Errorf("the mask has %d channels, want 1", r.Mask.C)
		}
		if !imaging.SameSize(r.Image, r.Mask) {
			return fmt.Errorf("the mask is %dx%d but the image is %dx%d",
				r.Mask.W(), r.Mask.H(), r.Image.W(), r.Image.H())
		}
	}
	return nil
}

// Backend is one configured model server.
type Backend interface {
	// Name is the backend's name in the config ("studio_gpu").
	Name() string
	// Type is its protocol: comfyui, iopaint, a1111, openai or remote.
	Type() string
	// Edit runs req and returns the image the model produced (linear light, 3
	// channels), with req.Image's aspect ratio; its size may differ. It honours ctx:
	// when ctx is done it cancels the job on the server where the protocol can, and
	// returns ctx's error. It never returns req.Image or a made-up image in place of a
	// result.
	Edit(ctx context.Context, req Request) (*imaging.Image, error)
}

// FullResolution is implemented by backends that want the photo at full size
// because they run a whole pipeline of their own (the remote backend).
type FullResolution interface {
	FullResolution() bool
}

// FeatureChecker is implemented by backends that can serve only the features their
// configuration prepares (ComfyUI needs a workflow per feature). The registry calls
// it for every feature mapped to the backend and refuses the config on an error.
type FeatureChecker interface {
	CheckFeature(feature string) error
}

// NameCheck is what a server said of the names a backend's configuration uses
// (checkpoints, samplers, node types).
type NameCheck struct {
	Found   []string // `checkpoint "sd_xl_base_1.0.safetensors"`
	Missing []string // each names what the server has instead
}

// NameChecker is implemented by backends that can ask their server whether the
// models, samplers and other names their configuration uses are there
// (`porchlight doctor`). The error says the server could not be asked.
type NameChecker interface {
	CheckNames(ctx context.Context) (NameCheck, error)
}

// NameList writes names for messages, at most 12 of them: "a, b, c and 9 more".
func NameList(names []string) string {
	if len(names) == 0 {
		return "nothing"
	}
	const most = 12
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// Error is a failure of a backend. Status is the HTTP status when the backend
// answered one.
type Error struct {
	Backend string // name (type)
	Op      string // what was being done: "upload image", "queue the workflow"
	Status  int
	Err     error
}

func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("backend %s: %s: HTTP %d: %v", e.Backend, e.Op, e.Status, e.Err)
	}
	return fmt.Sprintf("backend %s: %s: %v", e.Backend, e.Op, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error for backend b.
func Errorf(b Backend, op string, format string, args ...any) error {
	return &Error{Backend: Label(b), Op: op, Err: fmt.Errorf(format, args...)}
}

// Label names a backend in messages: "studio_gpu (comfyui)".
func Label(b Backend) string {
	return b.Name() + " (" + b.Type() + ")"
}
