package keys

import (
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// The internal owners are found by their recorded uuid, have no secret and cannot
// be given one, and their names are reserved for every issued key.
func TestInternalOwnersAreRecordedAndHaveNoSecret(t *testing.T) {
	s, _, db := newService(t)
	hot, err := s.InternalOwner(OwnerHotfolders)
	if err != nil {
		t.Fatal(err)
	}
	win, err := s.InternalOwner(OwnerWindow)
	if err != nil || win == hot {
		t.Fatalf("window owner %q (%v), hot folders %q", win, err, hot)
	}
	if again, _ := s.InternalOwner(OwnerHotfolders); again != hot {
		t.Fatalf("second call answered %s, first %s", again, hot)
	}
	if _, err := s.InternalOwner("bootstrap"); err == nil {
		t.Fatal("an unknown role was accepted")
	}

	for _, name := range []string{"hotfolders", "window", " Window ", "HOTFOLDERS"} {
		_, _, err := s.Create(name, core.ScopeStandard)
		wantKind(t, err, core.KindInvalid)
		if !strings.Contains(err.Error(), strings.ToLower(strings.TrimSpace(name))) || !strings.Contains(err.Error(), "reserved") {
			t.Errorf("Create(%q): %v", name, err)
		}
	}
	for _, id := range []string{hot, win} {
		_, _, err := s.Rotate(id)
		wantKind(t, err, core.KindInvalid)
		wantKind(t, s.Revoke(id), core.KindInvalid)
		k, err := s.Get(id)
		if err != nil || k.Prefix != "" || k.Scope != core.ScopeStandard {
			t.Fatalf("owner record %+v (%v)", k, err)
		}
	}
	c := content(t, db)
	for _, id := range []string{hot, win} {
		if c.Secrets[id] != nil {
			t.Errorf("owner %s has a secret", id)
		}
	}
	if n := len(c.Hashes); n != 0 {
		t.Errorf("%d secrets stored, want none", n)
	}
	if c.Owners[OwnerHotfolders] != hot || c.Owners[OwnerWindow] != win {
		t.Errorf("key_owners holds %v", c.Owners)
	}
}

// After the upgrade of a database whose "window" key had been used over HTTP, that
// key stays an ordinary key and the window gets a new owner of its own.
func TestInternalOwnerIsNotAUsedKeyOfThatName(t *testing.T) {
	// A database as version 1 left it: the key is written the way Create wrote it.
	dir := t.TempDir()
	db, err := store.OpenVersion(dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	s := New(db)
	secret, err := newSecret()
	if err != nil {
		t.Fatal(err)
	}
	used, err := s.insert(OwnerWindow, core.ScopeStandard, secret)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(secret); err != nil {
		t.Fatal(err)
	}
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db2, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	s2 := New(db2)
	owner, err := s2.InternalOwner(OwnerWindow)
	if err != nil {
		t.Fatal(err)
	}
	if owner == used.UUID {
		t.Fatal("the window adopted a key whose secret was used over HTTP")
	}
	if k, err := s2.Authenticate(secret); err != nil || k.UUID != used.UUID {
		t.Fatalf("the used key stopped working: %+v %v", k, err)
	}
}
