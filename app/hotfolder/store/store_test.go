package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	enginestore "github.com/porchlight/porchlight/engine/store"
)

// openDB opens a database in dir and closes it when the test ends.
func openDB(t *testing.T, dir string) *enginestore.DB {
	t.Helper()
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func openFolder(t *testing.T, db *enginestore.DB, name string) *Folder {
	t.Helper()
	j, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	return j.Folder(name)
}

func restore(t *testing.T, f *Folder) State {
	t.Helper()
	st, err := f.Restore()
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// rawKeys lists the bucket's keys as stored.
func rawKeys(t *testing.T, db *enginestore.DB) []string {
	t.Helper()
	var out []string
	err := db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketName).ForEach(func(k, _ []byte) error {
			out = append(out, string(k))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func rawGet(t *testing.T, db *enginestore.DB, key string) []byte {
	t.Helper()
	var out []byte
	db.View(func(tx *bolt.Tx) error {
		out = bytes.Clone(tx.Bucket(bucketName).Get([]byte(key)))
		return nil
	})
	return out
}

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC)

func entry(sha string) *FileEntry {
	return &FileEntry{Size: 1234, MtimeNs: t0.UnixNano(), FileID: FileID{Dev: 7, Ino: 42}, SHA256: sha, Seen: t0}
}

func scene(id string, rels ...string) *Scene {
	s := &Scene{ID: id, Label: id, Owner: "owner", Format: "jpeg", Naming: "{stem}", Formed: t0, Stage: StageGrouped}
	for _, rel := range rels {
		s.Files = append(s.Files, FileRef{Rel: rel, Size: 1234, MtimeNs: t0.UnixNano(), FileID: FileID{Dev: 7, Ino: 42}, SHA256: "sum-" + rel})
	}
	return s
}

func TestOpenCreatesTheBucket(t *testing.T) {
	db := openDB(t, t.TempDir())
	if err := db.Update(func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketName) }); err != nil {
		t.Fatal(err)
	}
	f := openFolder(t, db, "studio")
	if st := restore(t, f); len(st.Files) != 0 || len(st.Active) != 0 || st.Paused {
		t.Fatalf("a new journal has %+v", st)
	}
	if _, err := Open(nil); err == nil {
		t.Fatal("Open(nil) succeeded")
	}
}

func TestRecordFiles(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := openFolder(t, db, "studio")
	if err := f.RecordFiles(nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.RecordFiles(map[string]*FileEntry{"a.jpg": entry("aa"), "sub/b.jpg": entry("bb")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.RecordFiles(map[string]*FileEntry{"c.jpg": entry("cc")}, []string{"a.jpg", "never.jpg"}); err != nil {
		t.Fatal(err)
	}
	st := restore(t, f)
	if len(st.Files) != 2 || st.Files["a.jpg"] != nil || !reflect.DeepEqual(st.Files["sub/b.jpg"], entry("bb")) || st.Files["c.jpg"].SHA256 != "cc" {
		t.Fatalf("files: %+v", st.Files)
	}
	if !st.Files["c.jpg"].Known() || (FileID{}).Known() {
		t.Fatal("Known is wrong")
	}
}

func TestFormScenes(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := openFolder(t, db, "studio")
	ev := 1.5
	if _, err := f.FormScenes(nil, nil, map[string]*Hole{"old.jpg": {Reason: "cut short", Seen: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	files := map[string]*FileEntry{"a.jpg": entry("a"), "b.jpg": entry("b"), "b.raw": entry("braw"), "c.jpg": entry("c")}
	if err := f.RecordFiles(files, nil); err != nil {
		t.Fatal(err)
	}
	s1, s2 := scene("s1", "a.jpg"), scene("s2", "b.raw")
	s2.Extras = []FileRef{{Rel: "b.jpg"}}
	c, err := f.FormScenes([]*Scene{s1, s2}, files,
		map[string]*Hole{"bad.jpg": {Reason: "not a photo", Camera: "X100", Taken: t0, EV: &ev, Seen: t0}}, []string{"old.jpg"})
	if err != nil {
		t.Fatal(err)
	}
	if c != (Counters{Seq: 2}) || s1.Index != 1 || s2.Index != 2 {
		t.Fatalf("counters %+v, indexes %d %d", c, s1.Index, s2.Index)
	}
	st := restore(t, f)
	if st.Counters != c || len(st.Active) != 2 || st.Active["s2"].Index != 2 || !reflect.DeepEqual(st.Active["s2"], s2) {
		t.Fatalf("after forming: %+v %+v", st.Counters, st.Active)
	}
	if st.Files["a.jpg"].Scene != "s1" || st.Files["b.raw"].Scene != "s2" || st.Files["b.jpg"].Scene != "s2" || st.Files["c.jpg"].Scene != "" {
		t.Fatalf("membership: a %q b.raw %q b.jpg %q c %q", st.Files["a.jpg"].Scene, st.Files["b.raw"].Scene, st.Files["b.jpg"].Scene, st.Files["c.jpg"].Scene)
	}
	if len(st.Holes) != 1 || st.Holes["bad.jpg"] == nil || *st.Holes["bad.jpg"].EV != ev || !st.Holes["bad.jpg"].Taken.Equal(t0) {
		t.Fatalf("holes: %+v", st.Holes)
	}

	// The numbering goes on from the counters.
	s3 := scene("s3", "c.jpg")
	if c, err := f.FormScenes([]*Scene{s3}, files, nil, []string{"bad.jpg"}); err != nil || c.Seq != 3 || s3.Index != 3 {
		t.Fatalf("third scene: %+v %d %v", c, s3.Index, err)
	}
	if st := restore(t, f); len(st.Holes) != 0 {
		t.Fatalf("the used hole is still there: %+v", st.Holes)
	}

	// A scene of a file that is not journaled writes nothing at all.
	before := rawKeys(t, db)
	if _, err := f.FormScenes([]*Scene{scene("s4", "c.jpg"), scene("s5", "missing.jpg")}, files,
		map[string]*Hole{"h.jpg": {Reason: "r"}}, nil); err == nil || !strings.Contains(err.Error(), "missing.jpg") {
		t.Fatalf("a scene of an unknown file: %v", err)
	}
	if after := rawKeys(t, db); !reflect.DeepEqual(before, after) {
		t.Fatalf("a failed FormScenes wrote: %q, was %q", after, before)
	}
	if st := restore(t, f); st.Counters.Seq != 3 || st.Files["c.jpg"].Scene != "s3" {
		t.Fatalf("a failed FormScenes changed %+v", st)
	}
}

func TestRecordProgressAndDissolveScene(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := openFolder(t, db, "studio")
	files := map[string]*FileEntry{"a.jpg": entry("a"), "a.raw": entry("araw"), "z.jpg": entry("z")}
	if err := f.RecordFiles(files, nil); err != nil {
		t.Fatal(err)
	}
	s := scene("s1", "a.raw")
	s.Extras = []FileRef{{Rel: "a.jpg"}}
	if _, err := f.FormScenes([]*Scene{s}, files, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Stage, s.Assets, s.OrderID, s.Submitted = StageSubmitted, []string{"asset-1"}, "order-1", t0
	if err := f.RecordProgress(s); err != nil {
		t.Fatal(err)
	}
	if got := restore(t, f).Active["s1"]; !reflect.DeepEqual(got, s) {
		t.Fatalf("progress: %+v, want %+v", got, s)
	}
	if err := f.DissolveScene(s); err != nil {
		t.Fatal(err)
	}
	st := restore(t, f)
	if len(st.Active) != 0 || len(st.Files) != 1 || st.Files["z.jpg"] == nil {
		t.Fatalf("after dissolving: active %+v, files %+v", st.Active, st.Files)
	}
}

func TestFinishScene(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := openFolder(t, db, "studio")
	files := map[string]*FileEntry{"a.jpg": entry("a"), "b.jpg": entry("b"), "kept.jpg": entry("k"), "c.jpg": entry("c")}
	if err := f.RecordFiles(files, nil); err != nil {
		t.Fatal(err)
	}
	s1, s2 := scene("s1", "a.jpg", "b.jpg", "kept.jpg"), scene("s2", "c.jpg")
	if _, err := f.FormScenes([]*Scene{s1, s2}, files, nil, nil); err != nil {
		t.Fatal(err)
	}
	// b.jpg was replaced by a new file since, in no scene yet.
	if err := f.RecordFiles(map[string]*FileEntry{"b.jpg": entry("new")}, nil); err != nil {
		t.Fatal(err)
	}
	s1.Stage, s1.Outcome, s1.Output, s1.Finished = StageDone, OutcomeCompleted, "a.jpg", t0
	c, err := f.FinishScene(s1, []string{"a.jpg", "b.jpg", "gone.jpg"})
	if err != nil || c != (Counters{Seq: 2, Done: 1}) {
		t.Fatalf("finish: %+v %v", c, err)
	}
	s2.Stage, s2.Outcome, s2.Error, s2.Finished = StageDone, OutcomeFailed, "the order failed", t0.Add(time.Minute)
	if c, err = f.FinishScene(s2, []string{"c.jpg"}); err != nil || c != (Counters{Seq: 2, Done: 1, Failed: 1}) {
		t.Fatalf("finish failed: %+v %v", c, err)
	}
	st := restore(t, f)
	if len(st.Active) != 0 || st.Counters != c {
		t.Fatalf("after finishing: %+v %+v", st.Active, st.Counters)
	}
	if len(st.Files) != 2 || st.Files["b.jpg"].SHA256 != "new" || st.Files["kept.jpg"].Scene != "s1" {
		t.Fatalf("files after finishing: %+v", st.Files)
	}
	recent, err := f.RecentScenes(10)
	if err != nil || len(recent) != 2 || recent[0].ID != "s2" || !reflect.DeepEqual(recent[1], *s1) {
		t.Fatalf("recent: %+v %v", recent, err)
	}
}

func TestSetPaused(t *testing.T) {
	db := openDB(t, t.TempDir())
	f, other := openFolder(t, db, "studio"), openFolder(t, db, "studio2")
	for _, p := range []bool{true, true, false, false, true} {
		if err := f.SetPaused(p); err != nil {
			t.Fatal(err)
		}
		if got := restore(t, f).Paused; got != p {
			t.Fatalf("paused %v, want %v", got, p)
		}
	}
	if restore(t, other).Paused {
		t.Fatal("another folder is paused too")
	}
}

// finished journals a done scene finished at when.
func finished(t *testing.T, f *Folder, id string, when time.Time) *Scene {
	t.Helper()
	files := map[string]*FileEntry{id + ".jpg": entry(id)}
	s := scene(id, id+".jpg")
	if _, err := f.FormScenes([]*Scene{s}, files, nil, nil); err != nil {
		t.Fatal(err)
	}
	s.Stage, s.Outcome, s.Finished = StageDone, OutcomeCompleted, when
	if _, err := f.FinishScene(s, []string{id + ".jpg"}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPruneScenes(t *testing.T) {
	db := openDB(t, t.TempDir())
	f, other := openFolder(t, db, "studio"), openFolder(t, db, "studio2")
	for i, id := range []string{"old1", "old2", "new1"} {
		finished(t, f, id, t0.Add(time.Duration(i)*time.Hour))
	}
	finished(t, other, "old-other", t0)
	files := map[string]*FileEntry{"busy.jpg": entry("busy")}
	if _, err := f.FormScenes([]*Scene{scene("busy", "busy.jpg")}, files, nil, nil); err != nil {
		t.Fatal(err) // not done: never pruned, however old
	}
	n, err := f.PruneScenes(t0.Add(90 * time.Minute))
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want 2", n, err)
	}
	if n, err := f.PruneScenes(t0.Add(90 * time.Minute)); err != nil || n != 0 {
		t.Fatalf("pruned again %d, %v", n, err)
	}
	recent, _ := f.RecentScenes(10)
	if len(recent) != 1 || recent[0].ID != "new1" {
		t.Fatalf("left: %+v", recent)
	}
	st := restore(t, f)
	if st.Active["busy"] == nil || st.Counters != (Counters{Seq: 4, Done: 3}) {
		t.Fatalf("after pruning: %+v %+v", st.Active, st.Counters)
	}
	if recent, _ := other.RecentScenes(10); len(recent) != 1 {
		t.Fatalf("another folder's scenes pruned: %+v", recent)
	}
}

func TestRecentScenes(t *testing.T) {
	db := openDB(t, t.TempDir())
	f := openFolder(t, db, "studio")
	if recent, err := f.RecentScenes(5); err != nil || len(recent) != 0 {
		t.Fatalf("recent of nothing: %+v %v", recent, err)
	}
	for i, id := range []string{"c", "a", "e", "b", "d"} {
		finished(t, f, id, t0.Add(time.Duration([]int{3, 1, 5, 2, 4}[i])*time.Minute))
	}
	if _, err := f.FormScenes([]*Scene{scene("z", "z.jpg")}, map[string]*FileEntry{"z.jpg": entry("z")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	recent, err := f.RecentScenes(3)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range recent {
		ids = append(ids, s.ID)
	}
	if strings.Join(ids, "") != "edc" {
		t.Fatalf("recent: %v, want e d c", ids)
	}
}

// Folders whose names share a prefix keep apart: the NUL after the name ends it.
func TestFoldersKeepApart(t *testing.T) {
	db := openDB(t, t.TempDir())
	a, ab := openFolder(t, db, "a"), openFolder(t, db, "ab")
	if err := a.RecordFiles(map[string]*FileEntry{"x.jpg": entry("x")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ab.RecordFiles(map[string]*FileEntry{"y.jpg": entry("y")}, nil); err != nil {
		t.Fatal(err)
	}
	if err := ab.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	sa, sab := restore(t, a), restore(t, ab)
	if len(sa.Files) != 1 || sa.Files["x.jpg"] == nil || sa.Paused || len(sab.Files) != 1 || sab.Files["y.jpg"] == nil || !sab.Paused {
		t.Fatalf("a: %+v; ab: %+v", sa, sab)
	}
}

// The journal outlives the process: everything reads back the same after the
// database is closed and opened again.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := openFolder(t, db, "studio")
	files := map[string]*FileEntry{"a.jpg": entry("a"), "w.jpg": entry("w")}
	if err := f.RecordFiles(files, nil); err != nil {
		t.Fatal(err)
	}
	s := scene("s1", "a.jpg")
	if _, err := f.FormScenes([]*Scene{s}, files, map[string]*Hole{"bad.jpg": {Reason: "cut short", Seen: t0}}, nil); err != nil {
		t.Fatal(err)
	}
	s.Stage, s.Writing = StageFinished, "a.jpg"
	if err := f.RecordProgress(s); err != nil {
		t.Fatal(err)
	}
	done := finished(t, f, "d1", t0)
	if err := f.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	want := restore(t, f)
	wantRecent, _ := f.RecentScenes(10)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	g := openFolder(t, openDB(t, dir), "studio")
	got := restore(t, g)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("after reopening:\n%+v\nwant\n%+v", got, want)
	}
	if got.Active["s1"].Stage != StageFinished || got.Active["s1"].Writing != "a.jpg" || !got.Paused || got.Counters.Seq != 2 {
		t.Fatalf("after reopening: %+v", got)
	}
	recent, err := g.RecentScenes(10)
	if err != nil || !reflect.DeepEqual(recent, wantRecent) || len(recent) != 1 || !reflect.DeepEqual(recent[0], *done) {
		t.Fatalf("recent after reopening: %+v %v", recent, err)
	}
}

// The keys and encodings are the ones databases already hold: entries written by
// earlier versions read back, and new ones are written the same way.
func TestOnDiskFormat(t *testing.T) {
	db := openDB(t, t.TempDir())
	old := map[string]string{
		"f\x00studio\x00sub/a.jpg": `{"size":10,"mtimeNs":5,"dev":1,"ino":2,"sha256":"ab","scene":"s1","seen":"2026-03-14T09:26:53Z"}`,
		"f\x00studio\x00old.jpg":   `{"size":11,"mtimeNs":6,"sha256":"cd","seen":"2026-03-14T09:26:53Z","bad":"not a photo"}`,
		"s\x00studio\x00s1": `{"id":"s1","index":7,"label":"a","files":[{"path":"sub/a.jpg","size":10,"mtimeNs":5,"dev":1,"ino":2,"sha256":"ab"}],` +
			`"owner":"o","options":{},"format":"jpeg","naming":"{stem}","formed":"2026-03-14T09:26:53Z","stage":"submitted","assets":["x"],"orderId":"ord"}`,
		"h\x00studio\x00old.jpg": `{"reason":"not a photo","seen":"2026-03-14T09:26:53Z"}`,
		"c\x00studio":            `{"seq":7,"done":3,"failed":1}`,
		"p\x00studio":            `1`,
	}
	err := db.Update(func(tx *bolt.Tx) error {
		for k, v := range old {
			if err := tx.Bucket(bucketName).Put([]byte(k), []byte(v)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	f := openFolder(t, db, "studio")
	st := restore(t, f)
	a := st.Files["sub/a.jpg"]
	if a == nil || a.Size != 10 || a.FileID != (FileID{Dev: 1, Ino: 2}) || a.Scene != "s1" || st.Files["old.jpg"].Bad != "not a photo" {
		t.Fatalf("files: %+v", st.Files)
	}
	s := st.Active["s1"]
	if s == nil || s.Index != 7 || s.Stage != StageSubmitted || s.OrderID != "ord" || s.Files[0].Rel != "sub/a.jpg" || s.Files[0].Ino != 2 {
		t.Fatalf("scene: %+v", s)
	}
	if st.Counters != (Counters{Seq: 7, Done: 3, Failed: 1}) || !st.Paused || st.Holes["old.jpg"].Reason != "not a photo" {
		t.Fatalf("state: %+v", st)
	}

	// Written back, the entries are the same JSON.
	if err := f.RecordFiles(map[string]*FileEntry{"sub/a.jpg": a}, nil); err != nil {
		t.Fatal(err)
	}
	if err := f.RecordProgress(s); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"f\x00studio\x00sub/a.jpg", "s\x00studio\x00s1"} {
		if !jsonEqual(t, rawGet(t, db, k), []byte(old[k])) {
			t.Errorf("%q is written as\n%s\nwas\n%s", k, rawGet(t, db, k), old[k])
		}
	}
	if err := f.SetPaused(false); err != nil {
		t.Fatal(err)
	}
	if err := f.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	if got := string(rawGet(t, db, "p\x00studio")); got != "1" {
		t.Errorf("paused is %q", got)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := errors.Join(json.Unmarshal(a, &va), json.Unmarshal(b, &vb)); err != nil {
		t.Fatal(err)
	}
	return reflect.DeepEqual(va, vb)
}
