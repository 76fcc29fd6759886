package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

func TestOpenCreatesTreeAndVersion(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var secret []byte
	err = db.View(func(tx *bolt.Tx) error {
		if v := schemaVersion(tx); v != Latest() {
			t.Errorf("schema version %d, want %d", v, Latest())
		}
		for _, b := range [][]byte{bucketKeys, bucketAssets, bucketOrders, bucketBatches, bucketIngest, bucketHotfolderJournal} {
			if tx.Bucket(b) == nil {
				t.Errorf("bucket %s missing", b)
			}
		}
		if queue(tx, bucketQueuePending) == nil || queue(tx, bucketQueueRunning) == nil {
			t.Error("queue buckets missing")
		}
		secret = Copy(tx.Bucket(bucketMeta).Get(keyInstallSecret))
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
		if _, err := tx.CreateBucket(bucketMeta); err != nil {
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
		if v := schemaVersion(tx); v != 2 {
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
		return tx.Bucket(bucketMeta).Put(keySchemaVersion, Itob(Latest()+1))
	})
	db.Close()
	if _, err := Open(dir); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("want newer-schema error, got %v", err)
	}
}

// A version 1 database whose owners of hot-folder and window work were found by
// name: the oldest never-used "hotfolders" key is adopted (its secret dropped), a
// "window" key that authenticated over HTTP is not, and neither are later or admin
// keys of those names.
func TestMigrationKeyOwnersAdoptsOnlyProgramMadeKeys(t *testing.T) {
	dir := t.TempDir()
	bdb, err := bolt.Open(filepath.Join(dir, FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	used := at.Add(time.Hour)
	keys := []core.Key{
		{UUID: "k-hot-old", Name: OwnerHotfolders, Scope: core.ScopeStandard, Prefix: "sk-hot1", CreatedAt: at},
		{UUID: "k-hot-new", Name: OwnerHotfolders, Scope: core.ScopeStandard, Prefix: "sk-hot2", CreatedAt: at.Add(time.Minute)},
		{UUID: "k-win-used", Name: OwnerWindow, Scope: core.ScopeStandard, Prefix: "sk-win1", CreatedAt: at, LastUsedAt: &used},
		{UUID: "k-win-admin", Name: OwnerWindow, Scope: core.ScopeAdmin, Prefix: "sk-win2", CreatedAt: at.Add(-time.Hour)},
	}
	err = bdb.Update(func(tx *bolt.Tx) error {
		if err := migrate(tx, migrations[:1]); err != nil {
			return err
		}
		for _, k := range keys {
			v, _ := json.Marshal(k)
			hash := []byte("hash-of-" + k.UUID)
			if err := tx.Bucket(bucketKeys).Put([]byte(k.UUID), v); err != nil {
				return err
			}
			if err := tx.Bucket(bucketKeySecrets).Put([]byte(k.UUID), hash); err != nil {
				return err
			}
			if err := tx.Bucket(bucketKeyHashes).Put(hash, []byte(k.UUID)); err != nil {
				return err
			}
		}
		return nil
	})
	bdb.Close()
	if err != nil {
		t.Fatal(err)
	}

	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.View(func(tx *bolt.Tx) error {
		if v := schemaVersion(tx); v != Latest() {
			t.Errorf("schema %d, want %d", v, Latest())
		}
		owners := tx.Bucket(bucketKeyOwners)
		if got := string(owners.Get([]byte(OwnerHotfolders))); got != "k-hot-old" {
			t.Errorf("hotfolders owner %q, want the oldest never-used key", got)
		}
		if got := owners.Get([]byte(OwnerWindow)); got != nil {
			t.Errorf("window owner %q adopted, but that key was used over HTTP", got)
		}
		if tx.Bucket(bucketKeySecrets).Get([]byte("k-hot-old")) != nil || tx.Bucket(bucketKeyHashes).Get([]byte("hash-of-k-hot-old")) != nil {
			t.Error("the adopted key kept its secret")
		}
		var k core.Key
		if err := json.Unmarshal(tx.Bucket(bucketKeys).Get([]byte("k-hot-old")), &k); err != nil || k.Prefix != "" || k.Name != OwnerHotfolders {
			t.Errorf("adopted record %+v (%v)", k, err)
		}
		for _, id := range []string{"k-hot-new", "k-win-used", "k-win-admin"} {
			hash := tx.Bucket(bucketKeySecrets).Get([]byte(id))
			if string(hash) != "hash-of-"+id || string(tx.Bucket(bucketKeyHashes).Get(hash)) != id {
				t.Errorf("key %s lost its secret", id)
			}
		}
		return nil
	})
}

// A database another holder has open fails after the given wait with ErrLocked.
func TestOpenWaitReportsTheLock(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	_, err = OpenWait(dir, 100*time.Millisecond)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "locked by another running Porchlight") {
		t.Fatalf("want ErrLocked, got %v", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("waited %s for a 100 ms wait", el)
	}
}
