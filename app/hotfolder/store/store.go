// Package store keeps the hot folders' journal in Porchlight's bbolt database: what
// each folder has seen of its input and how far each of its scenes got, so that a
// restart goes on where the last run stopped and nothing is imported twice.
//
// It owns one flat bucket, hotfolder_journal, with NUL-separated keys so that one
// folder's entries are a prefix range:
//
//	hotfolder_journal/
//	  "f" NUL folder NUL relpath -> FileEntry JSON: a file of the input that was seen whole
//	  "s" NUL folder NUL scene   -> Scene JSON: a scene (keyed by its uuid) and how far it got
//	  "h" NUL folder NUL relpath -> Hole JSON: a file that could not be used, until its
//	                                subfolder's scenes are formed
//	  "c" NUL folder             -> Counters JSON: scene numbers and totals
//	  "p" NUL folder             -> "1" while the folder is paused from the window
//
// folder is the folder's configured name and relpath a file's path relative to its
// input folder, with forward slashes.
//
// A file's identity is its path with its size, mtime and sha256: the same path with
// a new size or mtime is hashed again, and only different bytes make it a new file.
// Its device and inode (FileID) tell the file that was read from one that took its
// name since.
//
// Every method of Folder is one transaction, except PruneScenes, which finds the
// stale scenes in one and deletes them in another. Values never leave a
// transaction: everything returned is decoded (copied) inside it.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"

	enginestore "github.com/porchlight/porchlight/engine/store"
)

// bucketName is the journal's bucket; engine/store's migrations create it too, so
// databases written before this package existed read the same.
var bucketName = []byte("hotfolder_journal")

const sep = "\x00"

func fileKey(folder, rel string) []byte { return []byte("f" + sep + folder + sep + rel) }
func sceneKey(folder, id string) []byte { return []byte("s" + sep + folder + sep + id) }
func holeKey(folder, rel string) []byte { return []byte("h" + sep + folder + sep + rel) }
func countersKey(folder string) []byte  { return []byte("c" + sep + folder) }
func pausedKey(folder string) []byte    { return []byte("p" + sep + folder) }
func filePrefix(folder string) []byte   { return []byte("f" + sep + folder + sep) }
func scenePrefix(folder string) []byte  { return []byte("s" + sep + folder + sep) }
func holePrefix(folder string) []byte   { return []byte("h" + sep + folder + sep) }

// Journal is the hot-folder journal of one database.
type Journal struct {
	db *bolt.DB
}

// Open returns the journal kept in db, creating its bucket if it is missing.
func Open(db *enginestore.DB) (*Journal, error) {
	if db == nil || db.DB == nil {
		return nil, errors.New("hot folder journal: no database")
	}
	err := db.DB.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(bucketName)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("hot folder journal: create bucket: %w", err)
	}
	return &Journal{db: db.DB}, nil
}

// Folder is the journal of the folder with the given configured name.
func (j *Journal) Folder(name string) *Folder {
	return &Folder{db: j.db, name: name}
}

// Folder is one folder's view of the journal.
type Folder struct {
	db   *bolt.DB
	name string
}

// State is what a folder reads from the journal when it starts.
type State struct {
	Files    map[string]*FileEntry // by path relative to the input folder
	Holes    map[string]*Hole      // by path relative to the input folder
	Active   map[string]*Scene     // scenes not done, by id
	Counters Counters
	Paused   bool // paused from the window
}

func bucket(tx *bolt.Tx) (*bolt.Bucket, error) {
	b := tx.Bucket(bucketName)
	if b == nil {
		return nil, fmt.Errorf("bucket %s missing", bucketName)
	}
	return b, nil
}

func putJSON(b *bolt.Bucket, k []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode journal entry: %w", err)
	}
	return b.Put(k, data)
}

// getCounters decodes the folder's counters; zero when there are none yet.
func (f *Folder) getCounters(b *bolt.Bucket) (Counters, error) {
	var c Counters
	if v := b.Get(countersKey(f.name)); v != nil {
		if err := json.Unmarshal(v, &c); err != nil {
			return Counters{}, err
		}
	}
	return c, nil
}

// Restore reads what the folder had when it last ran: the files it saw, its
// holes, its scenes not done yet, its counters and whether it was paused.
func (f *Folder) Restore() (State, error) {
	st := State{Files: map[string]*FileEntry{}, Holes: map[string]*Hole{}, Active: map[string]*Scene{}}
	err := f.db.View(func(tx *bolt.Tx) error {
		b, err := bucket(tx)
		if err != nil {
			return err
		}
		c := b.Cursor()
		if err := decodeEach(c, filePrefix(f.name), "file entry", func(rel string, e *FileEntry) { st.Files[rel] = e }); err != nil {
			return err
		}
		if err := decodeEach(c, holePrefix(f.name), "hole", func(rel string, h *Hole) { st.Holes[rel] = h }); err != nil {
			return err
		}
		err = decodeEach(c, scenePrefix(f.name), "scene", func(_ string, s *Scene) {
			if s.Stage != StageDone {
				st.Active[s.ID] = s
			}
		})
		if err != nil {
			return err
		}
		if st.Counters, err = f.getCounters(b); err != nil {
			return fmt.Errorf("decode journal counters: %w", err)
		}
		st.Paused = b.Get(pausedKey(f.name)) != nil
		return nil
	})
	if err != nil {
		return State{}, fmt.Errorf("hot folder %s: read journal: %w", f.name, err)
	}
	return st, nil
}

// decodeEach decodes every value under prefix as a T and hands it to put with the
// rest of its key. Each value is decoded into a new T, so nothing refers to the
// transaction's memory afterwards.
func decodeEach[T any](c *bolt.Cursor, prefix []byte, what string, put func(rest string, v *T)) error {
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		t := new(T)
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("decode journal %s %q: %w", what, k[len(prefix):], err)
		}
		put(string(k[len(prefix):]), t)
	}
	return nil
}

// update runs fn in one write transaction on the bucket.
func (f *Folder) update(fn func(b *bolt.Bucket) error) error {
	err := f.db.Update(func(tx *bolt.Tx) error {
		b, err := bucket(tx)
		if err != nil {
			return err
		}
		return fn(b)
	})
	if err != nil {
		return fmt.Errorf("hot folder %s: write journal: %w", f.name, err)
	}
	return nil
}

// RecordFiles records files seen whole (new, or changed since they were last
// seen) and forgets the files that are gone from the input, in one transaction.
func (f *Folder) RecordFiles(seen map[string]*FileEntry, gone []string) error {
	if len(seen) == 0 && len(gone) == 0 {
		return nil
	}
	return f.update(func(b *bolt.Bucket) error {
		for rel, e := range seen {
			if err := putJSON(b, fileKey(f.name, rel), e); err != nil {
				return err
			}
		}
		for _, rel := range gone {
			if err := b.Delete(fileKey(f.name, rel)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecordProgress records a scene as it stands now (uploaded, submitted,
// finished, or a name chosen for its output).
func (f *Folder) RecordProgress(s *Scene) error {
	return f.update(func(b *bolt.Bucket) error { return putJSON(b, sceneKey(f.name, s.ID), s) })
}

// RecordScenes records several scenes as they stand now in one transaction: the
// scenes of one drop submitted as one batch are all submitted or none is.
func (f *Folder) RecordScenes(scenes []*Scene) error {
	return f.update(func(b *bolt.Bucket) error {
		for _, s := range scenes {
			if err := putJSON(b, sceneKey(f.name, s.ID), s); err != nil {
				return err
			}
		}
		return nil
	})
}

// FormScenes records new scenes and their files' membership in one transaction
// and numbers the scenes (setting each one's Index and its files' Scene); with
// them it records new holes and forgets the holes used up. files must hold every
// file and extra of the scenes. Nothing outside the database happened yet, so a
// crash before the commit only means the scenes are formed again. It returns the
// folder's counters after the numbering.
func (f *Folder) FormScenes(scenes []*Scene, files map[string]*FileEntry, addHoles map[string]*Hole, dropHoles []string) (Counters, error) {
	var c Counters
	err := f.update(func(b *bolt.Bucket) error {
		for rel, h := range addHoles {
			if err := putJSON(b, holeKey(f.name, rel), h); err != nil {
				return err
			}
		}
		for _, rel := range dropHoles {
			if err := b.Delete(holeKey(f.name, rel)); err != nil {
				return err
			}
		}
		var err error
		if c, err = f.getCounters(b); err != nil {
			return fmt.Errorf("decode counters: %w", err)
		}
		for _, s := range scenes {
			c.Seq++
			s.Index = c.Seq
			if err := putJSON(b, sceneKey(f.name, s.ID), s); err != nil {
				return err
			}
			for _, ref := range s.AllFiles() {
				e := files[ref.Rel]
				if e == nil {
					return fmt.Errorf("scene %s: file %s is not journaled", s.ID, ref.Rel)
				}
				e.Scene = s.ID
				if err := putJSON(b, fileKey(f.name, ref.Rel), e); err != nil {
					return err
				}
			}
		}
		return putJSON(b, countersKey(f.name), c)
	})
	return c, err
}

// FinishScene records a scene as delivered (done), counts it as done or failed by
// its Outcome, and forgets the entries of the files that left the input folder
// (moved or deleted), all in one transaction. Files left in place keep their
// entries so they are not imported again, and a path that holds a newer file by
// now keeps the newer file's entry. It returns the folder's counters after.
func (f *Folder) FinishScene(s *Scene, forget []string) (Counters, error) {
	var c Counters
	err := f.update(func(b *bolt.Bucket) error {
		var err error
		if c, err = f.getCounters(b); err != nil {
			return fmt.Errorf("decode counters: %w", err)
		}
		if s.Outcome == OutcomeCompleted {
			c.Done++
		} else {
			c.Failed++
		}
		for _, rel := range forget {
			k := fileKey(f.name, rel)
			if v := b.Get(k); v != nil {
				var e FileEntry
				if json.Unmarshal(v, &e) == nil && e.Scene != s.ID {
					continue // the path holds a newer file by now
				}
				if err := b.Delete(k); err != nil {
					return err
				}
			}
		}
		if err := putJSON(b, sceneKey(f.name, s.ID), s); err != nil {
			return err
		}
		return putJSON(b, countersKey(f.name), c)
	})
	return c, err
}

// DissolveScene drops a scene whose files changed before they were imported,
// with its files' entries, in one transaction: its files go back to being
// unseen, so they settle and are grouped again.
func (f *Folder) DissolveScene(s *Scene) error {
	return f.update(func(b *bolt.Bucket) error {
		for _, ref := range s.AllFiles() {
			if err := b.Delete(fileKey(f.name, ref.Rel)); err != nil {
				return err
			}
		}
		return b.Delete(sceneKey(f.name, s.ID))
	})
}

// SetPaused records whether the folder is paused from the window.
func (f *Folder) SetPaused(paused bool) error {
	return f.update(func(b *bolt.Bucket) error {
		if paused {
			return b.Put(pausedKey(f.name), []byte("1"))
		}
		return b.Delete(pausedKey(f.name))
	})
}

// PruneScenes deletes the done scenes finished before cutoff and returns how many
// it deleted; the counters keep their totals. The stale scenes are found in a
// read transaction and deleted in a write transaction only when there are any, so
// a start with nothing to prune writes nothing. Deleting a scene twice is
// harmless, so the gap between the two changes nothing.
func (f *Folder) PruneScenes(cutoff time.Time) (int, error) {
	var stale [][]byte
	err := f.db.View(func(tx *bolt.Tx) error {
		b, err := bucket(tx)
		if err != nil {
			return err
		}
		c := b.Cursor()
		sp := scenePrefix(f.name)
		for k, v := c.Seek(sp); k != nil && bytes.HasPrefix(k, sp); k, v = c.Next() {
			var s Scene
			if json.Unmarshal(v, &s) == nil && s.Stage == StageDone && s.Finished.Before(cutoff) {
				stale = append(stale, bytes.Clone(k)) // k is only valid inside the transaction
			}
		}
		return nil
	})
	if err != nil || len(stale) == 0 {
		return 0, err
	}
	return len(stale), f.update(func(b *bolt.Bucket) error {
		for _, k := range stale {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}

// RecentScenes returns up to n done scenes, newest (latest finished) first, for
// the status after a restart.
func (f *Folder) RecentScenes(n int) ([]Scene, error) {
	var out []Scene
	err := f.db.View(func(tx *bolt.Tx) error {
		b, err := bucket(tx)
		if err != nil {
			return err
		}
		c := b.Cursor()
		sp := scenePrefix(f.name)
		for k, v := c.Seek(sp); k != nil && bytes.HasPrefix(k, sp); k, v = c.Next() {
			var s Scene
			if json.Unmarshal(v, &s) == nil && s.Stage == StageDone {
				out = append(out, s)
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Finished.After(out[j].Finished) })
	if len(out) > n {
		out = out[:n]
	}
	return out, err
}
