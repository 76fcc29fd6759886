package keys

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// fakeClock is a settable clock shared by the service under test.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func openDB(t *testing.T) (*store.DB, string) {
	t.Helper()
	dir := t.TempDir()
	db, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dir
}

func newService(t *testing.T) (*Service, *fakeClock, *store.DB) {
	t.Helper()
	db, _ := openDB(t)
	clk := &fakeClock{t: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
	return New(db, WithClock(clk.Now)), clk, db
}

func wantKind(t *testing.T, err error, kind core.Kind) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error of kind %d, got nil", kind)
	}
	if core.KindOf(err) != kind {
		t.Fatalf("want kind %d, got %d (%v)", kind, core.KindOf(err), err)
	}
}

func TestSecretFormat(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		s, err := newSecret()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(s, "sk-") || len(s) != 3+43 {
			t.Fatalf("secret %q: want sk- and 43 characters", s)
		}
		for _, r := range s[3:] {
			if !strings.ContainsRune(base62, r) {
				t.Fatalf("secret %q has non-base62 %q", s, r)
			}
		}
		if seen[s] {
			t.Fatalf("secret %q repeated", s)
		}
		seen[s] = true
	}
}

func TestCreateAuthenticateAndStorage(t *testing.T) {
	s, clk, db := newService(t)
	k, secret, err := s.Create("  studio laptop ", core.ScopeStandard)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "studio laptop" || k.Scope != core.ScopeStandard || k.UUID == "" {
		t.Fatalf("record %+v", k)
	}
	if k.Prefix != secret[:8] || !strings.HasPrefix(k.Prefix, "sk-") {
		t.Fatalf("prefix %q of secret %q", k.Prefix, secret)
	}
	if !k.CreatedAt.Equal(clk.Now()) || k.LastUsedAt != nil {
		t.Fatalf("times %+v", k)
	}

	// Only the hash is stored, nowhere the secret.
	hash := sha256.Sum256([]byte(secret))
	c := content(t, db)
	if got := c.Hashes[string(hash[:])]; got != k.UUID {
		t.Errorf("key_hashes maps to %q, want %q", got, k.UUID)
	}
	if got := c.Secrets[k.UUID]; string(got) != string(hash[:]) {
		t.Errorf("key_secrets holds %x", got)
	}
	for id, v := range c.Records {
		if strings.Contains(id+string(v), secret) {
			t.Errorf("keys/ stores the secret")
		}
	}
	for h, id := range c.Hashes {
		if strings.Contains(h+id, secret) {
			t.Errorf("key_hashes/ stores the secret")
		}
	}
	for id, h := range c.Secrets {
		if strings.Contains(id+string(h), secret) {
			t.Errorf("key_secrets/ stores the secret")
		}
	}

	clk.Add(time.Second)
	got, err := s.Authenticate(secret)
	if err != nil {
		t.Fatal(err)
	}
	if got.UUID != k.UUID || got.LastUsedAt == nil || !got.LastUsedAt.Equal(clk.Now()) {
		t.Fatalf("authenticated %+v", got)
	}
}

func TestAuthenticateRefusals(t *testing.T) {
	s, _, _ := newService(t)
	_, secret, err := s.Create("a", core.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	flipped := []byte(secret)
	if flipped[10] == 'a' {
		flipped[10] = 'b'
	} else {
		flipped[10] = 'a'
	}
	for _, bad := range []string{
		"", "pk-abc", strings.TrimPrefix(secret, "sk-"), string(flipped), secret + "x",
		"sk-" + strings.Repeat("z", 600), "SK-" + secret[3:],
	} {
		_, err := s.Authenticate(bad)
		wantKind(t, err, core.KindUnauthorized)
	}
}

func TestCreateValidation(t *testing.T) {
	s, _, _ := newService(t)
	for _, tc := range []struct {
		name  string
		scope core.Scope
		field string
	}{
		{"", core.ScopeStandard, "name"},
		{"   ", core.ScopeStandard, "name"},
		{strings.Repeat("n", MaxNameLen+1), core.ScopeStandard, "name"},
		{"tab\there", core.ScopeStandard, "name"},
		{"ok", "", "scope"},
		{"ok", "root", "scope"},
	} {
		_, _, err := s.Create(tc.name, tc.scope)
		wantKind(t, err, core.KindInvalid)
		if !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("Create(%q, %q): error %q does not name %s", tc.name, tc.scope, err, tc.field)
		}
	}
	if _, _, err := s.Create(strings.Repeat("ü", MaxNameLen), core.ScopeAdmin); err != nil {
		t.Fatalf("a %d-character name is allowed: %v", MaxNameLen, err)
	}
}

func TestListSortedAndGet(t *testing.T) {
	s, clk, _ := newService(t)
	var ids []string
	for _, n := range []string{"first", "second", "third"} {
		k, _, err := s.Create(n, core.ScopeStandard)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, k.UUID)
		clk.Add(-time.Minute) // later keys get earlier times: List must sort, not echo insertion
	}
	list, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].Name != "third" || list[1].Name != "second" || list[2].Name != "first" {
		t.Fatalf("list order %+v", list)
	}
	k, err := s.Get(ids[1])
	if err != nil || k.Name != "second" {
		t.Fatalf("Get: %+v %v", k, err)
	}
	_, err = s.Get("00000000-0000-0000-0000-000000000000")
	wantKind(t, err, core.KindNotFound)
}

func TestRotate(t *testing.T) {
	s, clk, _ := newService(t)
	k, old, err := s.Create("rotating", core.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(time.Hour)
	r, secret, err := s.Rotate(k.UUID)
	if err != nil {
		t.Fatal(err)
	}
	if secret == old || !strings.HasPrefix(secret, "sk-") {
		t.Fatalf("new secret %q (old %q)", secret, old)
	}
	if r.UUID != k.UUID || r.Name != k.Name || r.Scope != k.Scope || !r.CreatedAt.Equal(k.CreatedAt) {
		t.Fatalf("rotation changed the record: %+v -> %+v", k, r)
	}
	if r.Prefix != secret[:8] {
		t.Fatalf("prefix %q not updated for %q", r.Prefix, secret)
	}
	_, err = s.Authenticate(old)
	wantKind(t, err, core.KindUnauthorized)
	if got, err := s.Authenticate(secret); err != nil || got.UUID != k.UUID {
		t.Fatalf("new secret: %+v %v", got, err)
	}
	_, _, err = s.Rotate("nope")
	wantKind(t, err, core.KindNotFound)
}

func TestRevoke(t *testing.T) {
	s, _, db := newService(t)
	k, secret, err := s.Create("gone", core.ScopeStandard)
	if err != nil {
		t.Fatal(err)
	}
	keep, keepSecret, _ := s.Create("kept", core.ScopeStandard)
	if _, err := s.Authenticate(secret); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke(k.UUID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Authenticate(secret)
	wantKind(t, err, core.KindUnauthorized)
	wantKind(t, s.Revoke(k.UUID), core.KindNotFound)
	_, err = s.Get(k.UUID)
	wantKind(t, err, core.KindNotFound)
	if _, err := s.Authenticate(keepSecret); err != nil {
		t.Fatalf("revoking one key broke another: %v", err)
	}
	// No index entry of the revoked key is left behind.
	c := content(t, db)
	if n := len(c.Hashes); n != 1 {
		t.Errorf("key_hashes holds %d entries, want 1", n)
	}
	if c.Secrets[k.UUID] != nil {
		t.Error("key_secrets still holds the revoked key")
	}
	// A flush after revocation does not resurrect the record.
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.List(); len(list) != 1 || list[0].UUID != keep.UUID {
		t.Fatalf("after revoke and flush: %+v", list)
	}
}

func TestEnsureBootstrap(t *testing.T) {
	s, _, _ := newService(t)
	for _, bad := range []string{"", "pk-aaaaaaaaaaaaaaaaaaaaaaaa", "sk-short", "sk-with space inside it", "sk-" + strings.Repeat("a", 600)} {
		if _, err := s.EnsureBootstrap(bad); err == nil {
			t.Errorf("EnsureBootstrap(%q) accepted", bad)
		}
	}
	secret := "sk-bootstrap-0123456789abcdef"
	created, err := s.EnsureBootstrap(secret)
	if err != nil || !created {
		t.Fatalf("first bootstrap: %v %v", created, err)
	}
	created, err = s.EnsureBootstrap(secret)
	if err != nil || created {
		t.Fatalf("second bootstrap: %v %v", created, err)
	}
	k, err := s.Authenticate(secret)
	if err != nil {
		t.Fatal(err)
	}
	if k.Name != "bootstrap" || k.Scope != core.ScopeAdmin {
		t.Fatalf("bootstrap record %+v", k)
	}
	if list, _ := s.List(); len(list) != 1 {
		t.Fatalf("%d keys after two bootstraps", len(list))
	}
}

// storedLastUsed reads lastUsedAt straight from the store, without the service's
// uses not written yet.
func storedLastUsed(t *testing.T, db *store.DB, id string) *time.Time {
	t.Helper()
	k, err := store.NewKeys(db).Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return k.LastUsedAt
}

// content reads everything the key store holds.
func content(t *testing.T, db *store.DB) store.KeysContent {
	t.Helper()
	c, err := store.NewKeys(db).Content(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pageWrites(db *store.DB) int64 {
	st := db.Stats()
	return st.TxStats.GetWrite()
}

func TestLastUsedIsBatched(t *testing.T) {
	s, clk, db := newService(t)
	k, secret, _ := s.Create("busy", core.ScopeStandard)
	before := pageWrites(db)
	for range 50 {
		clk.Add(time.Second)
		if _, err := s.Authenticate(secret); err != nil {
			t.Fatal(err)
		}
	}
	// 50 s after the last flush nothing is written yet, but reads see the use.
	if storedLastUsed(t, db, k.UUID) != nil {
		t.Fatal("lastUsedAt written before the flush interval")
	}
	if w := pageWrites(db) - before; w != 0 {
		t.Fatalf("%d page writes for 50 authentications", w)
	}
	got, _ := s.Get(k.UUID)
	if got.LastUsedAt == nil || !got.LastUsedAt.Equal(clk.Now()) {
		t.Fatalf("Get shows lastUsedAt %v, want %v", got.LastUsedAt, clk.Now())
	}
	clk.Add(10 * time.Second) // a minute since the last flush: this use writes
	if _, err := s.Authenticate(secret); err != nil {
		t.Fatal(err)
	}
	if at := storedLastUsed(t, db, k.UUID); at == nil || !at.Equal(clk.Now()) {
		t.Fatalf("stored lastUsedAt %v, want %v", at, clk.Now())
	}

	// An explicit flush (shutdown) writes what is pending.
	clk.Add(5 * time.Second)
	s.Authenticate(secret)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	if at := storedLastUsed(t, db, k.UUID); at == nil || !at.Equal(clk.Now()) {
		t.Fatalf("after Flush stored %v, want %v", at, clk.Now())
	}
}

func TestPersistsAcrossReopen(t *testing.T) {
	db, dir := openDB(t)
	s := New(db)
	k, secret, err := s.Create("durable", core.ScopeAdmin)
	if err != nil {
		t.Fatal(err)
	}
	s.Authenticate(secret)
	if err := s.Flush(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := store.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	got, err := New(db2).Authenticate(secret)
	if err != nil || got.UUID != k.UUID || got.Scope != core.ScopeAdmin {
		t.Fatalf("after reopen: %+v %v", got, err)
	}
	if storedLastUsed(t, db2, k.UUID) == nil {
		t.Fatal("lastUsedAt was not persisted by Flush")
	}
}

func TestConcurrentAuthenticate(t *testing.T) {
	db, _ := openDB(t)
	s := New(db, WithFlushInterval(time.Millisecond))
	_, secret, _ := s.Create("parallel", core.ScopeStandard)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if _, err := s.Authenticate(secret); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkAuthenticate(b *testing.B) {
	db, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := New(db)
	for range 100 {
		s.Create("filler", core.ScopeStandard)
	}
	_, secret, _ := s.Create("bench", core.ScopeStandard)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Authenticate(secret); err != nil {
			b.Fatal(err)
		}
	}
}
