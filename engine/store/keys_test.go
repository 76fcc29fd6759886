package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

func openKeys(t *testing.T) (*DB, *Keys) {
	t.Helper()
	db, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, NewKeys(db)
}

func TestKeysSecretsAndOwners(t *testing.T) {
	db, s := openKeys(t)
	ctx := context.Background()
	k := core.Key{UUID: "k1", Name: "laptop", Scope: core.ScopeStandard, Prefix: "sk-aaaaa", CreatedAt: t0}
	if err := s.Insert(ctx, k, []byte("hash-1")); err != nil {
		t.Fatal(err)
	}
	if err := s.Insert(ctx, core.Key{UUID: "k2"}, []byte("hash-1")); core.KindOf(err) != core.KindConflict {
		t.Fatalf("a second key with the same secret: %v", err)
	}
	if got, found, err := s.BySecret(ctx, []byte("hash-1")); err != nil || !found || got.UUID != "k1" {
		t.Fatalf("by secret: %+v %v %v", got, found, err)
	}

	// The key's own hash is the authority: an index entry it does not confirm
	// finds nothing.
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketKeyHashes).Put([]byte("hash-stale"), []byte("k1")) })
	if _, found, _ := s.BySecret(ctx, []byte("hash-stale")); found {
		t.Fatal("a stale index entry authenticated")
	}

	// Compare and swap: of two swaps from one secret only the first finds it.
	got, found, err := s.SwapSecret(ctx, []byte("hash-1"), []byte("hash-2"), func(k *core.Key) { k.Prefix = "sk-bbbbb" })
	if err != nil || !found || got.Prefix != "sk-bbbbb" {
		t.Fatalf("swap: %+v %v %v", got, found, err)
	}
	if _, found, err := s.SwapSecret(ctx, []byte("hash-1"), []byte("hash-3"), func(*core.Key) {}); found || err != nil {
		t.Fatalf("second swap from the old secret: %v %v", found, err)
	}
	if _, found, _ := s.BySecret(ctx, []byte("hash-1")); found {
		t.Fatal("the swapped secret still works")
	}

	// The internal owner is recorded once; its role guards it.
	id, err := s.InternalOwner(ctx, OwnerWindow, func() core.Key {
		return core.Key{UUID: "owner-1", Name: OwnerWindow, Scope: core.ScopeStandard, CreatedAt: t0}
	})
	if err != nil || id != "owner-1" {
		t.Fatalf("internal owner %q %v", id, err)
	}
	if again, _ := s.InternalOwner(ctx, OwnerWindow, func() core.Key { t.Fatal("created twice"); return core.Key{} }); again != id {
		t.Fatalf("second call %q", again)
	}
	refuse := errors.New("refused")
	var roles []string
	guard := func(_ core.Key, role string) error {
		roles = append(roles, role)
		if role != "" {
			return refuse
		}
		return nil
	}
	if err := s.Delete(ctx, "owner-1", guard); !errors.Is(err, refuse) {
		t.Fatalf("delete of the owner: %v", err)
	}
	if _, err := s.SetSecret(ctx, "owner-1", []byte("hash-x"), func(_ *core.Key, role string) error { return guard(core.Key{}, role) }); !errors.Is(err, refuse) {
		t.Fatalf("secret for the owner: %v", err)
	}
	if _, err := s.SetSecret(ctx, "k1", []byte("hash-4"), func(k *core.Key, _ string) error { k.Prefix = "sk-ccccc"; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k1", guard); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "k1", guard); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("second delete: %v", err)
	}
	if strings.Join(roles, ",") != OwnerWindow+","+OwnerWindow+"," {
		t.Fatalf("guard saw roles %q", roles)
	}

	// Nothing of k1 is left; the owner is untouched and has no secret.
	c, err := s.Content(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Records) != 1 || c.Records["owner-1"] == nil || len(c.Secrets) != 0 || c.Owners[OwnerWindow] != "owner-1" {
		t.Fatalf("content %+v", c)
	}
	if len(c.Hashes) != 1 || c.Hashes["hash-stale"] != "k1" {
		t.Fatalf("hashes %v: only the hand-made stale entry should be left", c.Hashes)
	}
}

func TestKeysRecordUses(t *testing.T) {
	_, s := openKeys(t)
	ctx := context.Background()
	later := t0.Add(time.Hour)
	s.Insert(ctx, core.Key{UUID: "k1", CreatedAt: t0, LastUsedAt: &later}, []byte("h1"))
	s.Insert(ctx, core.Key{UUID: "k2", CreatedAt: t0}, []byte("h2"))
	err := s.RecordUses(ctx, map[string]time.Time{"k1": t0.Add(time.Minute), "k2": t0.Add(time.Minute), "revoked": t0})
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := s.Get(ctx, "k1"); !k.LastUsedAt.Equal(later) {
		t.Fatalf("k1's later use was overwritten: %v", k.LastUsedAt)
	}
	if k, _ := s.Get(ctx, "k2"); k.LastUsedAt == nil || !k.LastUsedAt.Equal(t0.Add(time.Minute)) {
		t.Fatalf("k2's use: %v", k.LastUsedAt)
	}
	if list, _ := s.List(ctx); len(list) != 2 {
		t.Fatalf("a revoked key came back: %+v", list)
	}
	if _, err := s.Get(ctx, "revoked"); core.KindOf(err) != core.KindNotFound {
		t.Fatalf("get of a missing key: %v", err)
	}
}

// InspectSchema reads the version without migrating, and reports a held lock.
func TestInspectSchema(t *testing.T) {
	dir := t.TempDir()
	db, err := OpenVersion(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InspectSchema(dir, 100*time.Millisecond); !errors.Is(err, ErrLocked) {
		t.Fatalf("held database: %v", err)
	}
	db.Close()
	if v, err := InspectSchema(dir, time.Second); err != nil || v != 1 {
		t.Fatalf("version %d (%v), want 1", v, err)
	}
	if v, _ := InspectSchema(dir, time.Second); v != 1 {
		t.Fatal("inspecting migrated the file")
	}
	db, err = Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if v, err := InspectSchema(dir, time.Second); err != nil || v != Latest() {
		t.Fatalf("version %d (%v), want %d", v, err, Latest())
	}

	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, FileName), []byte(strings.Repeat("not a database ", 1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := InspectSchema(bad, time.Second); err == nil || errors.Is(err, ErrLocked) || errors.Is(err, ErrUnreadable) {
		t.Fatalf("damaged file: %v", err)
	}
	if _, err := OpenVersion(t.TempDir(), Latest()+1); err == nil {
		t.Fatal("opened at a version that does not exist")
	}
}
