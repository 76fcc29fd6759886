package hotfolder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// The journal lives in the store's hotfolder_journal bucket, one flat bucket with
// NUL-separated keys so that one folder's entries are a prefix range:
//
//	"f" NUL folder NUL relpath -> fileEntry: a file of the input that was seen whole
//	"s" NUL folder NUL scene   -> sceneRecord: a scene and how far it got
//	"h" NUL folder NUL relpath -> hole: a file that could not be used, until its
//	                              subfolder's scenes are formed
//	"c" NUL folder             -> counters: scene numbers and totals
//	"p" NUL folder             -> "1" while the folder is paused from the window
//
// A file's identity is its path with its size, mtime and sha256: the same path with
// a new size or mtime is hashed again, and only different bytes make it a new file.
// Its device and inode (see open.go) tell the file that was read from one that took
// its name since: such a file is read again, and a link is never read.

// fileEntry is a file of the input folder that settled and was hashed.
type fileEntry struct {
	Size    int64     `json:"size"`
	MtimeNs int64     `json:"mtimeNs"`
	fileID            // as listed: a name that leads to another file is not this one
	SHA256  string    `json:"sha256"`
	Scene   string    `json:"scene,omitempty"` // the scene it belongs to; "" while waiting for one
	Seen    time.Time `json:"seen"`
	// Bad says why the file can never be a photo (not one at all, cut short): it
	// fails on its own at once instead of waiting for a scene.
	Bad string `json:"bad,omitempty"`
}

// hole is a file that failed on its own (fileEntry.Bad). It is remembered until the
// files beside it are grouped, so that the scene it was shot with knows that it
// lost a bracket (see engine/grouping).
type hole struct {
	Reason   string    `json:"reason"`
	Camera   string    `json:"camera,omitempty"`
	Taken    time.Time `json:"taken,omitzero"`
	Duration float64   `json:"duration,omitempty"`
	EV       *float64  `json:"ev,omitempty"` // nil when its EXIF does not say
	Seen     time.Time `json:"seen"`
}

// Stages of a scene, in order.
const (
	stageGrouped   = "grouped"   // files chosen; nothing uploaded yet
	stageUploaded  = "uploaded"  // assets added (ids recorded); waiting for ingest, then submit
	stageSubmitted = "submitted" // order submitted; waiting for it to settle
	stageFinished  = "finished"  // outcome known; files still to be written and moved
	stageDone      = "done"      // everything written and moved
)

// Outcomes of a finished scene.
const (
	outcomeCompleted = "completed"
	outcomeFailed    = "failed"
)

// fileRef is one file of a scene as it was when the scene was formed.
type fileRef struct {
	Rel     string `json:"path"` // relative to the input folder
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtimeNs"`
	fileID         // the file read and the only one moved or deleted
	SHA256  string `json:"sha256"`
}

// sceneRecord is a scene and its progress. Everything an action needs is in it, so a
// restart continues from the stage it recorded.
type sceneRecord struct {
	ID      string       `json:"id"`
	Index   int          `json:"index"`
	Label   string       `json:"label"`
	Files   []fileRef    `json:"files"`            // inputs, in bracket order
	Extras  []fileRef    `json:"extras,omitempty"` // JPEG twins of RAW inputs: moved with them
	Owner   string       `json:"owner"`
	Options core.Options `json:"options"`
	Format  string       `json:"format"`
	Naming  string       `json:"naming"`
	Formed  time.Time    `json:"formed"`

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
	// Left are inputs that were replaced after they settled (see open.go): not read,
	// and left in the input folder.
	Left []string `json:"left,omitempty"`

	// Writing is the name chosen for the output (or error report) before it is
	// linked into place; Output is the name once it is there.
	Writing   string    `json:"writing,omitempty"`
	Output    string    `json:"output,omitempty"`
	Sidecar   string    `json:"sidecar,omitempty"`
	Submitted time.Time `json:"submitted,omitzero"`
	Finished  time.Time `json:"finished,omitzero"`
}

// counters of one folder.
type counters struct {
	Seq    int `json:"seq"` // last scene number given
	Done   int `json:"done"`
	Failed int `json:"failed"`
}

const sep = "\x00"

func fileKey(folder, rel string) []byte { return []byte("f" + sep + folder + sep + rel) }
func sceneKey(folder, id string) []byte { return []byte("s" + sep + folder + sep + id) }
func countersKey(folder string) []byte  { return []byte("c" + sep + folder) }
func pausedKey(folder string) []byte    { return []byte("p" + sep + folder) }
func holeKey(folder, rel string) []byte { return []byte("h" + sep + folder + sep + rel) }
func holePrefix(folder string) []byte   { return []byte("h" + sep + folder + sep) }
func filePrefix(folder string) []byte   { return []byte("f" + sep + folder + sep) }
func scenePrefix(folder string) []byte  { return []byte("s" + sep + folder + sep) }
func bucket(tx *bolt.Tx) *bolt.Bucket   { return tx.Bucket(store.BucketHotfolderJournal) }
func hasPrefix(k, prefix []byte) bool   { return bytes.HasPrefix(k, prefix) }
func putJSON(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode journal entry: %w", err)
	}
	return b.Put(k, data)
}

// journal is one folder's view of the bucket.
type journal struct {
	db     *store.DB
	folder string
}

// loaded is what a folder reads from the journal at start.
type loaded struct {
	files    map[string]*fileEntry
	holes    map[string]*hole
	active   map[string]*sceneRecord // scenes not done
	counters counters
	paused   bool
}

func (j journal) load() (loaded, error) {
	l := loaded{files: map[string]*fileEntry{}, holes: map[string]*hole{}, active: map[string]*sceneRecord{}}
	err := j.db.View(func(tx *bolt.Tx) error {
		b := bucket(tx)
		if b == nil {
			return fmt.Errorf("bucket %s missing", store.BucketHotfolderJournal)
		}
		c := b.Cursor()
		fp := filePrefix(j.folder)
		for k, v := c.Seek(fp); k != nil && hasPrefix(k, fp); k, v = c.Next() {
			var e fileEntry
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("decode journal file entry %q: %w", k[len(fp):], err)
			}
			l.files[string(k[len(fp):])] = &e
		}
		hp := holePrefix(j.folder)
		for k, v := c.Seek(hp); k != nil && hasPrefix(k, hp); k, v = c.Next() {
			var h hole
			if err := json.Unmarshal(v, &h); err != nil {
				return fmt.Errorf("decode journal hole %q: %w", k[len(hp):], err)
			}
			l.holes[string(k[len(hp):])] = &h
		}
		sp := scenePrefix(j.folder)
		for k, v := c.Seek(sp); k != nil && hasPrefix(k, sp); k, v = c.Next() {
			var s sceneRecord
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("decode journal scene %q: %w", k[len(sp):], err)
			}
			if s.Stage != stageDone {
				l.active[s.ID] = &s
			}
		}
		if v := b.Get(countersKey(j.folder)); v != nil {
			if err := json.Unmarshal(v, &l.counters); err != nil {
				return fmt.Errorf("decode journal counters: %w", err)
			}
		}
		l.paused = b.Get(pausedKey(j.folder)) != nil
		return nil
	})
	if err != nil {
		return loaded{}, fmt.Errorf("hot folder %s: read journal: %w", j.folder, err)
	}
	return l, nil
}

// update runs fn in one write transaction on the bucket.
func (j journal) update(fn func(b *bolt.Bucket) error) error {
	err := j.db.Update(func(tx *bolt.Tx) error { return fn(bucket(tx)) })
	if err != nil {
		return fmt.Errorf("hot folder %s: write journal: %w", j.folder, err)
	}
	return nil
}

func (j journal) putFiles(files map[string]*fileEntry, gone []string) error {
	if len(files) == 0 && len(gone) == 0 {
		return nil
	}
	return j.update(func(b *bolt.Bucket) error {
		for rel, e := range files {
			if err := putJSON(b, fileKey(j.folder, rel), e); err != nil {
				return err
			}
		}
		for _, rel := range gone {
			if err := b.Delete(fileKey(j.folder, rel)); err != nil {
				return err
			}
		}
		return nil
	})
}

// putScene records a scene's progress.
func (j journal) putScene(s *sceneRecord) error {
	return j.update(func(b *bolt.Bucket) error { return putJSON(b, sceneKey(j.folder, s.ID), s) })
}

// formScenes records new scenes and their files' membership in one transaction and
// numbers the scenes; with them it records new holes and forgets the holes used up.
// Nothing outside the database happened yet, so a crash before the commit only
// means the scenes are formed again.
func (j journal) formScenes(scenes []*sceneRecord, files map[string]*fileEntry, addHoles map[string]*hole, dropHoles []string) (counters, error) {
	var c counters
	err := j.update(func(b *bolt.Bucket) error {
		for rel, h := range addHoles {
			if err := putJSON(b, holeKey(j.folder, rel), h); err != nil {
				return err
			}
		}
		for _, rel := range dropHoles {
			if err := b.Delete(holeKey(j.folder, rel)); err != nil {
				return err
			}
		}
		if v := b.Get(countersKey(j.folder)); v != nil {
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode counters: %w", err)
			}
		}
		for _, s := range scenes {
			c.Seq++
			s.Index = c.Seq
			if err := putJSON(b, sceneKey(j.folder, s.ID), s); err != nil {
				return err
			}
			for _, f := range append(append([]fileRef(nil), s.Files...), s.Extras...) {
				e := files[f.Rel]
				if e == nil {
					return fmt.Errorf("scene %s: file %s is not journaled", s.ID, f.Rel)
				}
				e.Scene = s.ID
				if err := putJSON(b, fileKey(j.folder, f.Rel), e); err != nil {
					return err
				}
			}
		}
		return putJSON(b, countersKey(j.folder), c)
	})
	return c, err
}

// finishScene records a scene as done, counts it and forgets the entries of the
// files that left the input folder (moved or deleted); files left in place keep
// their entries so they are not imported again.
func (j journal) finishScene(s *sceneRecord, forget []string) (counters, error) {
	var c counters
	err := j.update(func(b *bolt.Bucket) error {
		if v := b.Get(countersKey(j.folder)); v != nil {
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("decode counters: %w", err)
			}
		}
		if s.Outcome == outcomeCompleted {
			c.Done++
		} else {
			c.Failed++
		}
		for _, rel := range forget {
			k := fileKey(j.folder, rel)
			if v := b.Get(k); v != nil {
				var e fileEntry
				if json.Unmarshal(v, &e) == nil && e.Scene != s.ID {
					continue // the path holds a newer file by now
				}
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		if err := putJSON(b, sceneKey(j.folder, s.ID), s); err != nil {
			return err
		}
		return putJSON(b, countersKey(j.folder), c)
	})
	return c, err
}

// dissolveScene drops a scene whose files changed before they were imported: its
// files go back to being unseen, so they settle and are grouped again.
func (j journal) dissolveScene(s *sceneRecord) error {
	return j.update(func(b *bolt.Bucket) error {
		for _, f := range append(append([]fileRef(nil), s.Files...), s.Extras...) {
			if err := b.Delete(fileKey(j.folder, f.Rel)); err != nil {
				return err
			}
		}
		return b.Delete(sceneKey(j.folder, s.ID))
	})
}

func (j journal) setPaused(paused bool) error {
	return j.update(func(b *bolt.Bucket) error {
		if paused {
			return b.Put(pausedKey(j.folder), []byte("1"))
		}
		return b.Delete(pausedKey(j.folder))
	})
}

// pruneScenes deletes done scenes finished before cutoff; the counters keep their
// totals.
func (j journal) pruneScenes(cutoff time.Time) (int, error) {
	var stale [][]byte
	err := j.db.View(func(tx *bolt.Tx) error {
		c := bucket(tx).Cursor()
		sp := scenePrefix(j.folder)
		for k, v := c.Seek(sp); k != nil && hasPrefix(k, sp); k, v = c.Next() {
			var s sceneRecord
			if json.Unmarshal(v, &s) == nil && s.Stage == stageDone && s.Finished.Before(cutoff) {
				stale = append(stale, bytes.Clone(k))
			}
		}
		return nil
	})
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	return len(stale), j.update(func(b *bolt.Bucket) error {
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// recentScenes returns up to n done scenes, newest first, for the status after a
// restart.
func (j journal) recentScenes(n int) ([]sceneRecord, error) {
	var out []sceneRecord
	err := j.db.View(func(tx *bolt.Tx) error {
		c := bucket(tx).Cursor()
		sp := scenePrefix(j.folder)
		for k, v := c.Seek(sp); k != nil && hasPrefix(k, sp); k, v = c.Next() {
			var s sceneRecord
			if json.Unmarshal(v, &s) == nil && s.Stage == stageDone {
				out = append(out, s)
			}
		}
		return nil
	})
	sortScenesNewestFirst(out)
	if len(out) > n {
		out = out[:n]
	}
	return out, err
}
