package store

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	enginestore "github.com/porchlight/porchlight/engine/store"
	bolt "go.etcd.io/bbolt"
)

const owner = "4b8e2f1a-0c3d-4e5f-8a9b-1c2d3e4f5a6b"

func openStore(t *testing.T, dir string) (*enginestore.DB, *Bolt) {
	t.Helper()
	db, err := enginestore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := Open(db)
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

func put(t *testing.T, s Store, recs ...*Record) {
	t.Helper()
	err := s.Update(func(tx Tx) error {
		for _, r := range recs {
			if err := tx.Put(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, s Store, id string) *Record {
	t.Helper()
	var r *Record
	if err := s.View(func(tx Tx) error { var err error; r, err = tx.Get(id); return err }); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecordsAndOwnership(t *testing.T) {
	_, s := openStore(t, t.TempDir())
	r := &Record{Asset: core.Asset{ID: "a1", Owner: owner, Kind: core.AssetUpload, Status: core.AssetPending,
		Filename: "room.jpg"}, Rejected: "too large", UploadExpires: 1234}
	put(t, s, r)
	if got := get(t, s, "a1"); !reflect.DeepEqual(got, r) {
		t.Fatalf("read back %+v, want %+v", got, r)
	}
	if got := get(t, s, "absent"); got != nil {
		t.Fatalf("absent record: %+v", got)
	}
	s.View(func(tx Tx) error {
		if got, err := tx.Owned(owner, "a1"); err != nil || got.ID != "a1" {
			t.Errorf("owned by its owner: %+v %v", got, err)
		}
		for _, who := range []string{"another-key", ""} {
			if _, err := tx.Owned(who, "a1"); core.KindOf(err) != core.KindNotFound {
				t.Errorf("owned by %q: %v, want not found", who, err)
			}
		}
		if _, err := tx.Owned(owner, "absent"); core.KindOf(err) != core.KindNotFound {
			t.Errorf("absent: %v, want not found", err)
		}
		return nil
	})
}

// The records keep the JSON a core.Asset reads, with the store's own fields beside it.
func TestRecordEncoding(t *testing.T) {
	db, s := openStore(t, t.TempDir())
	put(t, s, &Record{Asset: core.Asset{ID: "a1", Owner: owner, Kind: core.AssetUpload}, Thumbnail: "ab", UploadExpires: 7})
	var raw string
	db.View(func(tx *bolt.Tx) error { raw = string(tx.Bucket([]byte("assets")).Get([]byte("a1"))); return nil })
	for _, want := range []string{`"assetId":"a1"`, `"kind":"upload"`, `"thumbnail":"ab"`, `"uploadExpires":7`} {
		if !strings.Contains(raw, want) {
			t.Errorf("record JSON %s lacks %s", raw, want)
		}
	}
}

// The queue hands out jobs oldest first, keyed by sequence, and Done takes them out;
// a failed transaction queues nothing.
func TestIngestQueue(t *testing.T) {
	_, s := openStore(t, t.TempDir())
	err := s.Update(func(tx Tx) error {
		for _, id := range []string{"first", "second", "third"} {
			if err := tx.Enqueue(id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	failed := errors.New("refused")
	if err := s.Update(func(tx Tx) error { tx.Enqueue("rolled back"); return failed }); !errors.Is(err, failed) {
		t.Fatal(err)
	}
	all, err := s.Next(func(Job) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range all {
		ids = append(ids, j.ID)
	}
	if strings.Join(ids, ",") != "first,second,third" {
		t.Fatalf("queue order %v", ids)
	}
	// take decides which jobs are handed out.
	some, _ := s.Next(func(j Job) bool { return j.ID != "second" })
	if len(some) != 2 || some[0].ID != "first" || some[1].ID != "third" {
		t.Fatalf("taken %+v", some)
	}
	if err := s.Update(func(tx Tx) error { return tx.Done(all[1].Key) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Update(func(tx Tx) error { return tx.Done(all[1].Key) }); err != nil {
		t.Fatalf("done twice: %v", err)
	}
	if n, err := s.Queued(); err != nil || n != 2 {
		t.Fatalf("queued %d %v, want 2", n, err)
	}
	// A job queued later goes behind the others, even after a restart.
	s.Update(func(tx Tx) error { return tx.Enqueue("fourth") })
	left, _ := s.Next(func(Job) bool { return true })
	if len(left) != 3 || left[2].ID != "fourth" || left[0].Key >= left[2].Key {
		t.Fatalf("after done and enqueue: %+v", left)
	}
}

func TestReferenceCounts(t *testing.T) {
	db, s := openStore(t, t.TempDir())
	a, b := strings.Repeat("a", 64), strings.Repeat("b", 64)
	err := s.Update(func(tx Tx) error {
		for _, sum := range []string{a, a, b} {
			if err := tx.Ref(sum); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Refs(a); n != 2 {
		t.Fatalf("refs of a: %d, want 2", n)
	}
	if set, _ := s.Referenced(); !reflect.DeepEqual(set, map[string]bool{a: true, b: true}) {
		t.Fatalf("referenced %v", set)
	}
	var left []uint64
	err = s.Update(func(tx Tx) error {
		for _, sum := range []string{a, b} {
			n, err := tx.Unref(sum)
			if err != nil {
				return err
			}
			left = append(left, n)
		}
		return nil
	})
	if err != nil || !reflect.DeepEqual(left, []uint64{1, 0}) {
		t.Fatalf("left %v %v, want [1 0]", left, err)
	}
	// At zero the count is gone, not stored as zero.
	db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket([]byte("blob_refs")).Get([]byte(b)); v != nil {
			t.Errorf("count at zero kept: %x", v)
		}
		if v := tx.Bucket([]byte("blob_refs")).Get([]byte(a)); enginestore.Btoi(v) != 1 || len(v) != 8 {
			t.Errorf("count of a stored as %x", v)
		}
		return nil
	})
	if set, _ := s.Referenced(); !reflect.DeepEqual(set, map[string]bool{a: true}) {
		t.Fatalf("referenced %v", set)
	}
}

// The export index finds an export by source and options (a PNG's quality does not
// count), and deleting either end of it drops its entries.
func TestExportIndexAndDelete(t *testing.T) {
	_, s := openStore(t, t.TempDir())
	png := core.ExportOptions{Format: "png", Quality: 92, MaxEdge: 100}
	jpeg := core.ExportOptions{Format: "jpeg", Quality: 80}
	src := &Record{Asset: core.Asset{ID: "src", Owner: owner, Kind: core.AssetUpload}}
	other := &Record{Asset: core.Asset{ID: "src2", Owner: owner, Kind: core.AssetUpload}}
	x1 := &Record{Asset: core.Asset{ID: "x1", Owner: owner, Kind: core.AssetExport, Source: "src", Export: &png}}
	x2 := &Record{Asset: core.Asset{ID: "x2", Owner: owner, Kind: core.AssetExport, Source: "src", Export: &jpeg}}
	x3 := &Record{Asset: core.Asset{ID: "x3", Owner: owner, Kind: core.AssetExport, Source: "src2", Export: &jpeg}}
	put(t, s, src, other, x1, x2, x3)
	err := s.Update(func(tx Tx) error {
		for _, x := range []*Record{x1, x2, x3} {
			if err := tx.SetExport(x.Source, *x.Export, x.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s.View(func(tx Tx) error {
		if id := tx.Export("src", core.ExportOptions{Format: "png", Quality: 10, MaxEdge: 100}); id != "x1" {
			t.Errorf("PNG export with another quality: %q, want x1", id)
		}
		if id := tx.Export("src", core.ExportOptions{Format: "jpeg", Quality: 81}); id != "" {
			t.Errorf("JPEG export with another quality: %q, want none", id)
		}
		return nil
	})
	idx, _ := s.Exports()
	if len(idx) != 3 || idx["src/png;q=0;edge=100"] != "x1" || idx["src/jpeg;q=80;edge=0"] != "x2" {
		t.Fatalf("index %v", idx)
	}
	// Deleting an export drops its own entry; deleting a source drops its exports'.
	del := func(r *Record) {
		t.Helper()
		if err := s.Update(func(tx Tx) error { return tx.Delete(r) }); err != nil {
			t.Fatal(err)
		}
	}
	del(x3)
	del(src)
	if get(t, s, "src") != nil || get(t, s, "x3") != nil || get(t, s, "x1") == nil {
		t.Fatal("delete removed the wrong records")
	}
	if idx, _ := s.Exports(); len(idx) != 0 {
		t.Fatalf("index after deletes: %v", idx)
	}
}

// An export whose index entry was taken over by a retry under another id keeps that
// entry when it is deleted.
func TestDeleteKeepsAnotherExportsEntry(t *testing.T) {
	_, s := openStore(t, t.TempDir())
	opt := core.ExportOptions{Format: "webp", Quality: 90}
	old := &Record{Asset: core.Asset{ID: "old", Kind: core.AssetExport, Source: "src", Export: &opt}}
	put(t, s, old)
	s.Update(func(tx Tx) error { return tx.SetExport("src", opt, "new") })
	s.Update(func(tx Tx) error { return tx.Delete(old) })
	if idx, _ := s.Exports(); idx["src/webp;q=90;edge=0"] != "new" {
		t.Fatalf("index %v", idx)
	}
}

func TestPendingUploads(t *testing.T) {
	_, s := openStore(t, t.TempDir())
	put(t, s,
		&Record{Asset: core.Asset{ID: "p", Kind: core.AssetUpload, Status: core.AssetPending}, UploadExpires: 5},
		&Record{Asset: core.Asset{ID: "v", Kind: core.AssetUpload, Status: core.AssetValidating}},
		&Record{Asset: core.Asset{ID: "x", Kind: core.AssetExport, Status: core.AssetPending}},
		// Names that only look like the markers.
		&Record{Asset: core.Asset{ID: "f", Kind: core.AssetUpload, Status: core.AssetFailed, Filename: `"status":"pending"`}},
	)
	got, err := s.PendingUploads()
	if err != nil || len(got) != 1 || got[0].ID != "p" || got[0].UploadExpires != 5 {
		t.Fatalf("pending uploads %+v %v", got, err)
	}
}

// Open creates the buckets a database lacks, and leaves an existing one's data be.
func TestOpenCreatesMissingBuckets(t *testing.T) {
	dir := t.TempDir()
	db, s := openStore(t, dir)
	put(t, s, &Record{Asset: core.Asset{ID: "kept"}})
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketExports, bucketIngest, bucketBlobRefs} {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err = Open(db)
	if err != nil {
		t.Fatal(err)
	}
	if get(t, s, "kept") == nil {
		t.Fatal("record lost on reopening")
	}
	if n, err := s.Queued(); err != nil || n != 0 {
		t.Fatalf("queue after reopening: %d %v", n, err)
	}
}
