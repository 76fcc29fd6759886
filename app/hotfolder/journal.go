package hotfolder

import (
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
)

// folderJournal is what a folder keeps across restarts: the files it saw and how
// far each of its scenes got (*journal.Folder keeps it in the database). Each
// step is recorded in one transaction, whole or not at all, before the folder
// acts on what the step decided, so a crash at any point is resumed from the
// last step recorded.
type folderJournal interface {
	// Restore reads the folder's files, holes, scenes not done, counters and
	// pause as the last run left them.
	Restore() (journal.State, error)
	// RecordFiles records files seen whole and forgets the files gone.
	RecordFiles(seen map[string]*journal.FileEntry, gone []string) error
	// FormScenes records new scenes, numbering them, with their files'
	// membership, new holes and the holes used up.
	FormScenes(scenes []*journal.Scene, files map[string]*journal.FileEntry, addHoles map[string]*journal.Hole, dropHoles []string) (journal.Counters, error)
	// RecordProgress records a scene's new stage (uploaded, submitted, finished)
	// or the name chosen for its output.
	RecordProgress(s *journal.Scene) error
	// RecordScenes records the progress of several scenes at once (a drop's scenes
	// submitted as one batch).
	RecordScenes(scenes []*journal.Scene) error
	// FinishScene records a scene as delivered, counts it and forgets the files
	// that left the input folder.
	FinishScene(s *journal.Scene, forget []string) (journal.Counters, error)
	// DissolveScene drops a scene whose files changed before they were imported,
	// so they are seen and grouped again.
	DissolveScene(s *journal.Scene) error
	// SetPaused records a pause from the window.
	SetPaused(paused bool) error
	// PruneScenes drops done scenes finished before cutoff.
	PruneScenes(cutoff time.Time) (int, error)
	// RecentScenes returns up to n done scenes, newest first.
	RecentScenes(n int) ([]journal.Scene, error)
}

var _ folderJournal = (*journal.Folder)(nil)
