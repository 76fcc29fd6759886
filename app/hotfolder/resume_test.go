package hotfolder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
)

// journalScene records a scene of one dropped file as the scan would, and returns it.
func journalScene(t *testing.T, e *env, c Config, owner, name string) (*journal.Scene, *journal.Folder) {
	t.Helper()
	data := readPhoto(t, photoBedroom...)
	drop(t, c.Input, name, data)
	st, _ := os.Stat(filepath.Join(c.Input, name))
	sum := sha256.Sum256(data)
	entry := &journal.FileEntry{Size: st.Size(), MtimeNs: st.ModTime().UnixNano(), FileID: identity(st), SHA256: hex.EncodeToString(sum[:]), Seen: time.Now()}
	s := &journal.Scene{
		ID: uuid.NewString(), Owner: owner, Format: "jpeg", Naming: DefaultNaming, Formed: time.Now(),
		Stage: journal.StageGrouped, Label: stemOf(name),
		Files: []journal.FileRef{{Rel: name, Size: entry.Size, MtimeNs: entry.MtimeNs, FileID: entry.FileID, SHA256: entry.SHA256}},
	}
	j := e.journalOf(c.Name)
	if _, err := j.FormScenes([]*journal.Scene{s}, map[string]*journal.FileEntry{name: entry}, nil, nil); err != nil {
		t.Fatal(err)
	}
	return s, j
}

// ownedScene is journalScene for the owner key's owner, returned with the scene.
func ownedScene(t *testing.T, e *env, c Config, name string) (string, *journal.Scene, *journal.Folder) {
	t.Helper()
	owner, err := ownerKey(e.keys)
	if err != nil {
		t.Fatal(err)
	}
	s, j := journalScene(t, e, c, owner, name)
	return owner, s, j
}

// failedScene is ownedScene with the scene journaled as finished and failed.
func failedScene(t *testing.T, e *env, c Config, name string) *journal.Scene {
	t.Helper()
	_, s, j := ownedScene(t, e, c, name)
	s.Stage, s.Outcome, s.ErrorCode, s.Error, s.Finished = journal.StageFinished, journal.OutcomeFailed, "failed", "the order failed", time.Now()
	if err := j.RecordProgress(s); err != nil {
		t.Fatal(err)
	}
	return s
}

// A run that submitted a scene's order and died before journaling it: the next run
// submits again with the same Idempotency-Key and gets the same order, not a second.
func TestResubmissionAfterLostJournalWriteGetsSameOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	owner, s, j := ownedScene(t, e, c, "room.jpg")
	f, _ := os.Open(filepath.Join(c.Input, "room.jpg"))
	a, err := e.assets.Add(owner, "room.jpg", "application/octet-stream", f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "ingest", func() bool {
		got, _ := e.assets.Get(owner, a.ID)
		return got.Status == core.AssetReady
	})
	s.Assets, s.Stage = []string{a.ID}, journal.StageUploaded
	if err := j.RecordProgress(s); err != nil {
		t.Fatal(err)
	}
	lost, err := e.engine.Submit(context.Background(), owner, s.Assets, s.Options, idempotencyKey(c.Name, s))
	if err != nil {
		t.Fatal(err)
	}

	e.start(c)
	waitFor(t, 60*time.Second, "the scene", func() bool { return e.settledCount("studio") == 1 })
	orders, _ := e.engine.Orders(context.Background(), owner, 0)
	if len(orders) != 1 || orders[0].OrderUUID != lost.OrderUUID {
		t.Fatalf("orders after the resubmission: %+v (the lost one was %s)", orders, lost.OrderUUID)
	}
	if sc := readSidecar(t, filepath.Join(c.Output, "room.jpg.json")); sc.OrderID != lost.OrderUUID {
		t.Fatalf("sidecar order %s, want %s", sc.OrderID, lost.OrderUUID)
	}
}

// Scenes whose orders finished while the program was down get their results
// written at the next start; files journaled as seen but in no scene yet are formed
// into scenes.
func TestResumeWritesResultsOfOrdersFinishedWhileDown(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	owner, s, j := ownedScene(t, e, c, "room.jpg")
	f, _ := os.Open(filepath.Join(c.Input, "room.jpg"))
	a, _ := e.assets.Add(owner, "room.jpg", "application/octet-stream", f)
	f.Close()
	waitFor(t, 30*time.Second, "ingest", func() bool {
		got, _ := e.assets.Get(owner, a.ID)
		return got.Status == core.AssetReady
	})
	o, err := e.engine.Submit(context.Background(), owner, []string{a.ID}, s.Options, idempotencyKey(c.Name, s))
	if err != nil {
		t.Fatal(err)
	}
	s.Assets, s.Stage, s.OrderID = []string{a.ID}, journal.StageSubmitted, o.OrderUUID
	j.RecordProgress(s)
	waitFor(t, 30*time.Second, "the order", func() bool {
		got, _ := e.engine.Order(context.Background(), owner, o.OrderUUID)
		return got.Status == core.OrderCompleted
	})
	// A second file was seen whole (journaled) but not grouped before the stop.
	data := readPhoto(t, photoKitchen...)
	drop(t, c.Input, "kitchen.jpg", data)
	st, _ := os.Stat(filepath.Join(c.Input, "kitchen.jpg"))
	sum := sha256.Sum256(data)
	j.RecordFiles(map[string]*journal.FileEntry{"kitchen.jpg": {Size: st.Size(), MtimeNs: st.ModTime().UnixNano(), SHA256: hex.EncodeToString(sum[:]), Seen: time.Now()}}, nil)

	e.start(c)
	waitFor(t, 60*time.Second, "both scenes", func() bool { return e.settledCount("studio") == 2 })
	if sc := readSidecar(t, filepath.Join(c.Output, "room.jpg.json")); sc.OrderID != o.OrderUUID || sc.Status != "completed" {
		t.Fatalf("resumed scene: %+v", sc)
	}
	if sc := readSidecar(t, filepath.Join(c.Output, "kitchen.jpg.json")); sc.Status != "completed" {
		t.Fatalf("seen file: %+v", sc)
	}
}

// With originals left in place, a restart does not import them again, and neither
// does touching a file without changing its bytes; new bytes under the same name are
// a new photo.
func TestLeftOriginalsAreNotImportedTwice(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	e := newEnv(t, dataDir)
	c := folderConfig(t, "studio")
	c.Originals = OriginalsLeave
	e.start(c)
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, 60*time.Second, "the scene", func() bool { return e.settledCount("studio") == 1 })
	e.close()

	e = newEnv(t, dataDir)
	e.start(c)
	p := filepath.Join(c.Input, "room.jpg")
	later := time.Now().Add(time.Hour)
	os.Chtimes(p, later, later)
	time.Sleep(8 * c.Settle)
	if st := e.status("studio"); st.Done != 1 || st.Processing+st.Pending != 0 {
		t.Fatalf("a left original was imported again: %+v", st)
	}
	drop(t, c.Input, "room.jpg", readPhoto(t, photoKitchen...))
	waitFor(t, 60*time.Second, "the new bytes", func() bool { return e.settledCount("studio") == 2 })
	if got := outputs(t, c.Output); len(got) != 2 {
		t.Fatalf("outputs: %v", got)
	}
}
