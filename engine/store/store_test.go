package store

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestOpenCreatesTreeAndVersion(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var secret []byte
	err = db.View(func(tx *bolt.Tx) error {
		if v := SchemaVersion(tx); v != Latest() {
			t.Errorf("schema version %d, want %d", v, Latest())
		}
		for _, b := range [][]byte{BucketKeys, BucketAssets, BucketOrders, BucketBatches, BucketIngest, BucketHotfolderJournal} {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		if Queue(tx, BucketQueuePending) == nil || Queue(tx, BucketQueueRunning) == nil {
			t.Error("queue buckets missing")
		}
		secret = Copy(tx.Bucket(BucketMeta).Get(keyInstallSecret))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(secret) != 32 {
		t.Fatalf("install secret has %d bytes", len(secret))
	}
	db.Close()

	// Reopening keeps the secret: signed addresses survive a restart.
	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	again, err := db.InstallSecret()
	if err != nil || !bytes.Equal(again, secret) {
		t.Fatalf("install secret changed across reopen: %v", err)
	}
}

func TestMigrationInitialFromEmpty(t *testing.T) {
	db, err := bolt.Open(t.TempDir()+"/x.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucket(BucketMeta); err != nil {
			return err
		}
		return migrateInitial(tx)
	})
	if err != nil {
		t.Fatal(err)
	}
	// Idempotent: a second run over an existing tree changes nothing and does not fail.
	if err := db.Update(migrateInitial); err != nil {
		t.Fatal(err)
	}
}

func TestMigrationsRunInOrderOnce(t *testing.T) {
	db, err := bolt.Open(t.TempDir()+"/x.db", 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ran []uint64
	ms := []migration{
		{1, "one", func(tx *bolt.Tx) error { ran = append(ran, 1); return nil }},
		{2, "two", func(tx *bolt.Tx) error { ran = append(ran, 2); return nil }},
	}
	for i := 0; i < 2; i++ {
		if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, ms) }); err != nil {
			t.Fatal(err)
		}
	}
	if len(ran) != 2 || ran[0] != 1 || ran[1] != 2 {
		t.Fatalf("ran %v, want [1 2] once", ran)
	}
	// A failing migration rolls back the whole transaction, version included.
	ms = append(ms, migration{3, "bad", func(tx *bolt.Tx) error { return errors.New("boom") }})
	err = db.Update(func(tx *bolt.Tx) error { return migrate(tx, ms) })
	if err == nil || !strings.Contains(err.Error(), "migration 3") {
		t.Fatalf("want migration 3 error, got %v", err)
	}
	db.View(func(tx *bolt.Tx) error {
		if v := SchemaVersion(tx); v != 2 {
			t.Errorf("version after failed migration %d, want 2", v)
		}
		return nil
	})
}

func TestNewerSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(BucketMeta).Put(keySchemaVersion, Itob(Latest()+1))
	})
	db.Close()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("want newer-schema error, got %v", err)
	}
}
