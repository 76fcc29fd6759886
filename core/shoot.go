package core

import (
	"context"
	"time"
)

// Scene phases of a stored shoot.
const (
	ScenePhaseDraft     = "draft"     // can still be edited; nothing submitted for it now
	ScenePhasePreparing = "preparing" // being imported and submitted
	ScenePhaseSubmitted = "submitted" // its newest version's order is its state
	ScenePhaseRefused   = "refused"   // could not be submitted; Problem says why
)

// Shoot is a named set of scenes as the window keeps it between runs: the scenes
// with their brackets and option overrides in list order, the shoot's options, and
// every result each scene had. A shoot exists before anything of it is submitted;
// once submitted, its scenes name their orders and batches (the engine's records of
// the work), so the shoot re-attaches to them after a restart.
type Shoot struct {
	ID      string  `json:"shootId"`
	Owner   string  `json:"owner"` // key uuid
	Name    string  `json:"name"`
	Options Options `json:"options"` // applied to every scene, under its overrides
	// Folders are the source folders of the scenes, in the order they were added.
	Folders []string     `json:"folders,omitempty"`
	Scenes  []ShootScene `json:"scenes"`
	// Assets are the imported photos: bracket path -> asset id, so drafts need not
	// be imported again after a restart.
	Assets      map[string]string `json:"assets,omitempty"`
	BatchIDs    []string          `json:"batchIds,omitempty"` // batches its scenes were submitted in
	NextSceneID int               `json:"nextSceneId"`
	CreatedAt   time.Time         `json:"createdAt"`
	UpdatedAt   time.Time         `json:"updatedAt"`
}

// ShootScene is one scene of a stored shoot.
type ShootScene struct {
	ID        int      `json:"id"` // stable within the shoot
	Name      string   `json:"name"`
	Files     []string `json:"files"` // bracket paths, in capture order
	Overrides Options  `json:"overrides"`
	Phase     string   `json:"phase"` // ScenePhase*
	Problem   string   `json:"problem,omitempty"`
	Warning   string   `json:"warning,omitempty"`
	// Versions are the results the scene had, oldest first. While the scene is
	// submitted the newest one is its current state; the others are earlier edits
	// kept until deleted.
	Versions []ShootVersion `json:"versions,omitempty"`
	// SetAside are the photos culling took out of the scene (a repeated set, a
	// blurred, black or test frame), with why; putting one back moves it to Files.
	SetAside []SetAsideFrame `json:"setAside,omitempty"`
}

// SetAsideFrame is a photo set aside from its scene, and why.
type SetAsideFrame struct {
	Path   string `json:"path"`
	Code   string `json:"code"`   // the reason as a code: motion_blur, black_frame, ...
	Reason string `json:"reason"` // as the photographer reads it
}

// ShootVersion is one processing of a scene: the order, the options it ran with and
// where its result was saved.
type ShootVersion struct {
	OrderID       string      `json:"orderUuid"`
	BatchID       string      `json:"batchId,omitempty"`
	Options       Options     `json:"options"` // the shoot's options merged with the scene's
	Status        OrderStatus `json:"status"`  // as last seen; the engine's record decides
	OutputAssetID string      `json:"outputAssetId,omitempty"`
	Saved         string      `json:"saved,omitempty"`   // where the result was written
	Problem       string      `json:"problem,omitempty"` // why it was not written
	At            time.Time   `json:"at"`                // when it was submitted
}

// Done counts the scenes whose current version completed.
func (s *Shoot) Done() int {
	n := 0
	for _, sc := range s.Scenes {
		if sc.Phase == ScenePhaseSubmitted && len(sc.Versions) > 0 && sc.Versions[len(sc.Versions)-1].Status == OrderCompleted {
			n++
		}
	}
	return n
}

// ShootStore keeps the shoots. Every shoot it returns is the caller's own copy.
type ShootStore interface {
	// Put stores s whole, replacing the record of the same id.
	Put(ctx context.Context, s Shoot) error
	// Get returns shoot id; an error of KindNotFound when there is none.
	Get(ctx context.Context, id string) (Shoot, error)
	// List returns owner's shoots, most recently changed first.
	List(ctx context.Context, owner string) ([]Shoot, error)
	// Delete removes shoot id; deleting a missing shoot is not an error.
	Delete(ctx context.Context, id string) error
}
