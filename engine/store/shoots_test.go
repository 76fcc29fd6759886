package store

import (
	"context"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

// A shoot is stored whole and read back as it was after a reopen; List keeps to
// the owner, newest change first; Delete removes it and Get then says not found.
func TestShootsPutGetListDelete(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st := NewShoots(db)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	q, look := 70, "bright_airy"
	a := core.Shoot{
		ID: "s-a", Owner: "win", Name: "Elm St", Options: core.Options{Quality: &q},
		Folders: []string{"/shoots/elm"},
		Scenes: []core.ShootScene{
			{ID: 2, Name: "kitchen", Files: []string{"/shoots/elm/1.jpg", "/shoots/elm/2.jpg"}, Phase: core.ScenePhaseDraft,
				Overrides: core.Options{TonecraftProfile: &look}},
			{ID: 1, Name: "hall", Files: []string{"/shoots/elm/3.jpg"}, Phase: core.ScenePhaseSubmitted,
				Versions: []core.ShootVersion{
					{OrderID: "o1", Status: core.OrderCompleted, Saved: "/out/hall.jpg", At: at},
					{OrderID: "o2", BatchID: "b1", Status: core.OrderRunning, Options: core.Options{Quality: &q}, At: at.Add(time.Hour)},
				}},
		},
		Assets:      map[string]string{"/shoots/elm/1.jpg": "as1"},
		BatchIDs:    []string{"b1"},
		NextSceneID: 3, CreatedAt: at, UpdatedAt: at.Add(2 * time.Hour),
	}
	b := core.Shoot{ID: "s-b", Owner: "win", Name: "Oak Ave", CreatedAt: at, UpdatedAt: at.Add(3 * time.Hour)}
	other := core.Shoot{ID: "s-c", Owner: "someone", Name: "Other", UpdatedAt: at.Add(4 * time.Hour)}
	for _, s := range []core.Shoot{a, b, other} {
		if err := st.Put(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Put(ctx, core.Shoot{ID: "x"}); err == nil {
		t.Fatal("a shoot without an owner was stored")
	}
	db.Close()

	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	st = NewShoots(db)
	got, err := st.Get(ctx, "s-a")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, a)
	}
	if got.Done() != 0 {
		t.Errorf("done %d: the hall's newest version is still running", got.Done())
	}
	list, err := st.List(ctx, "win")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "s-b" || list[1].ID != "s-a" {
		t.Fatalf("list %v", list)
	}
	if err := st.Delete(ctx, "s-a"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Get(ctx, "s-a"); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("after delete: %v", err)
	}
	if err := st.Delete(ctx, "s-a"); err != nil {
		t.Fatalf("deleting twice: %v", err)
	}
	if list, _ := st.List(ctx, "win"); len(list) != 1 {
		t.Fatalf("%d shoots after delete", len(list))
	}
}

// A version 2 file gains the shoots bucket (and version 3) on open, keeping what it
// held; the store works on it at once.
func TestMigrationShootsFromVersion2(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenVersion(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(bucketShoots) != nil {
			t.Error("version 2 already has shoots/")
		}
		return nil
	})
	secret, _ := db.InstallSecret()
	db.Close()

	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v := schemaVersion(tx); v != 3 || Latest() < 3 {
			t.Errorf("schema %d after open", v)
		}
		if tx.Bucket(bucketShoots) == nil {
			t.Error("shoots/ missing after the migration")
		}
		return nil
	})
	if again, _ := db.InstallSecret(); string(again) != string(secret) {
		t.Error("the migration changed the install secret")
	}
	if err := NewShoots(db).Put(context.Background(), core.Shoot{ID: "s", Owner: "w"}); err != nil {
		t.Fatal(err)
	}
	// Running it again over the bucket changes nothing.
	if err := db.Update(migrateShoots); err != nil {
		t.Fatal(err)
	}
	if _, err := NewShoots(db).Get(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
}
