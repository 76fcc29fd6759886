package store

import (
	"slices"
	"time"

	"github.com/porchlight/porchlight/core"
)

// FileID is a file's device and inode numbers, zero where unknown (an entry
// written before they were recorded, or a system without them).
type FileID struct {
	Dev uint64 `json:"dev,omitempty"`
	Ino uint64 `json:"ino,omitempty"`
}

// Known reports whether the identity was recorded.
func (id FileID) Known() bool { return id != FileID{} }

// FileEntry is a file of the input folder that settled and was hashed.
type FileEntry struct {
	Size    int64     `json:"size"`
	MtimeNs int64     `json:"mtimeNs"`
	FileID            // as listed: a name that leads to another file is not this one
	SHA256  string    `json:"sha256"`
	Scene   string    `json:"scene,omitempty"` // the scene it belongs to; "" while waiting for one
	Seen    time.Time `json:"seen"`
	// Bad says why the file can never be a photo (not one at all, cut short): it
	// fails on its own at once instead of waiting for a scene.
	Bad string `json:"bad,omitempty"`
}

// Hole is a file that failed on its own (FileEntry.Bad). It is remembered until
// the files beside it are grouped, so that the scene it was shot with knows that
// it lost a bracket (see engine/grouping).
type Hole struct {
	Reason   string    `json:"reason"`
	Camera   string    `json:"camera,omitempty"`
	Taken    time.Time `json:"taken,omitzero"`
	Duration float64   `json:"duration,omitempty"`
	EV       *float64  `json:"ev,omitempty"` // nil when its EXIF does not say
	Seen     time.Time `json:"seen"`
}

// Stages of a scene, in order.
const (
	StageGrouped   = "grouped"   // files chosen; nothing uploaded yet
	StageUploaded  = "uploaded"  // assets added (ids recorded); waiting for ingest, then submit
	StageSubmitted = "submitted" // order submitted; waiting for it to settle
	StageFinished  = "finished"  // outcome known; files still to be written and moved
	StageDone      = "done"      // everything written and moved
)

// Outcomes of a finished scene.
const (
	OutcomeCompleted = "completed"
	OutcomeFailed    = "failed"
)

// FileRef is one file of a scene as it was when the scene was formed.
type FileRef struct {
	Rel     string `json:"path"` // relative to the input folder
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtimeNs"`
	FileID         // the file read and the only one moved or deleted
	SHA256  string `json:"sha256"`
}

// Scene is a scene and its progress. Everything an action needs is in it, so a
// restart continues from the stage it recorded.
type Scene struct {
	ID      string       `json:"id"`
	Index   int          `json:"index"`
	Label   string       `json:"label"`
	Files   []FileRef    `json:"files"`            // inputs, in bracket order
	Extras  []FileRef    `json:"extras,omitempty"` // JPEG twins of RAW inputs: moved with them
	Owner   string       `json:"owner"`
	Options core.Options `json:"options"`
	Format  string       `json:"format"`
	Naming  string       `json:"naming"`
	Formed  time.Time    `json:"formed"`
	// Drop is shared by the scenes formed together from one drop (one subfolder, or
	// the loose files, in one scan): they are submitted as one batch, so the rooms
	// of one shoot are matched. Empty for a scene on its own.
	Drop string `json:"drop,omitempty"`

	Stage   string   `json:"stage"`
	Outcome string   `json:"outcome,omitempty"`
	Assets  []string `json:"assets,omitempty"`
	OrderID string   `json:"orderId,omitempty"`
	// OutputAsset, Recipes and Notes come from the completed order.
	OutputAsset string            `json:"outputAssetId,omitempty"`
	Recipes     map[string]string `json:"recipes,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
	Error       string            `json:"error,omitempty"`
	ErrorCode   string            `json:"errorCode,omitempty"`
	// Warning says the scene is made without brackets that could not be used.
	Warning string `json:"warning,omitempty"`
	// Left are inputs that were replaced after they settled: not read, and left in
	// the input folder.
	Left []string `json:"left,omitempty"`

	// Writing is the name chosen for the output (or error report) before it is
	// linked into place; Output is the name once it is there.
	Writing   string    `json:"writing,omitempty"`
	Output    string    `json:"output,omitempty"`
	Sidecar   string    `json:"sidecar,omitempty"`
	Submitted time.Time `json:"submitted,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
}

// AllFiles returns the scene's inputs followed by its extras, in a new slice.
func (s *Scene) AllFiles() []FileRef { return append(slices.Clone(s.Files), s.Extras...) }

// Counters of one folder.
type Counters struct {
	Seq    int `json:"seq"` // last scene number given
	Done   int `json:"done"`
	Failed int `json:"failed"`
}
