// Package keys issues, checks, rotates and revokes API keys, kept through a Store
// (engine/store's on the database). Secrets are never stored: the store keeps their
// SHA-256 only (key_hashes maps hash -> uuid, key_secrets maps uuid -> hash), so a
// copied database file grants no access.
// Authentication records when a key was last used in memory and writes those
// times in batches, so a busy key costs no database write per request.
//
// The hot folders and the window own their work through internal owners: key
// records without a secret, found by the uuid recorded under their role in
// key_owners, never by name. They cannot authenticate, rotate or be revoked, and
// their names are reserved, so no key issued to a person can take their work over.
package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

const (
	// SecretPrefix starts every secret.
	SecretPrefix = "sk-"
	// secretChars is the length of the base62 body: 62^43 > 2^256, so 32 random bytes fit.
	secretChars = 43
	// prefixLen is how much of a secret the record keeps for people to tell keys apart.
	prefixLen = 8
	// MinBootstrapLen is the shortest secret EnsureBootstrap accepts.
	MinBootstrapLen = 20
	// maxSecretLen bounds what Authenticate hashes; longer headers are refused outright.
	maxSecretLen = 512
	// MaxNameLen bounds a key's label.
	MaxNameLen = 100
	// DefaultFlushInterval is how often lastUsedAt reaches the database at most.
	DefaultFlushInterval = time.Minute
)

// Roles of the internal owners (see InternalOwner); their names are reserved.
const (
	OwnerHotfolders = store.OwnerHotfolders
	OwnerWindow     = store.OwnerWindow
)

// ownerWork says what each internal owner owns, for error messages.
var ownerWork = map[string]string{
	OwnerHotfolders: "hot-folder orders",
	OwnerWindow:     "the window's work",
}

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// Store keeps the key records, the hashes of their secrets and the internal
// owners; engine/store implements it on the database. It is declared here, by its
// one user, rather than in core: each method is one transaction shaped by this
// service's rules (passed in as callbacks), which no other package shares. Typed
// errors (core.NotFound, core.Conflict) pass through unchanged.
type Store interface {
	// Insert stores a new key with the hash of its secret; core.Conflict when that
	// hash already belongs to a key.
	Insert(ctx context.Context, k core.Key, hash []byte) error
	// Get returns key id's record, core.NotFound when there is none.
	Get(ctx context.Context, id string) (core.Key, error)
	// List returns every key record, in no particular order.
	List(ctx context.Context) ([]core.Key, error)
	// BySecret returns the key whose current secret has hash; found is false when
	// there is none.
	BySecret(ctx context.Context, hash []byte) (k core.Key, found bool, err error)
	// Delete removes key id and its secret once guard, given the record and the
	// internal owner role of the key ("" for none), returns nil.
	Delete(ctx context.Context, id string, guard func(k core.Key, role string) error) error
	// SetSecret replaces key id's secret by the one of hash once edit, given the
	// record and the key's role, changed the record; it returns the record stored.
	SetSecret(ctx context.Context, id string, hash []byte, edit func(k *core.Key, role string) error) (core.Key, error)
	// SwapSecret replaces the secret of hash old by the one of hash fresh, as a
	// compare and swap, after edit changed the record; found is false when old is
	// no key's current secret.
	SwapSecret(ctx context.Context, old, fresh []byte, edit func(k *core.Key)) (k core.Key, found bool, err error)
	// InternalOwner returns the uuid recorded for role, recording create's record
	// (without a secret) the first time.
	InternalOwner(ctx context.Context, role string, create func() core.Key) (string, error)
	// RecordUses writes when keys were last used, keeping later stored times and
	// skipping keys revoked since, in one transaction.
	RecordUses(ctx context.Context, uses map[string]time.Time) error
}

var _ Store = (*store.Keys)(nil)

// Service manages the keys of one database. It is safe for concurrent use.
type Service struct {
	store         Store
	now           func() time.Time
	flushInterval time.Duration

	mu        sync.Mutex
	used      map[string]time.Time // uuid -> last use not yet written
	lastFlush time.Time
	// ends holds, per key, a channel closed when its current secret stops working
	// (rotation or revocation); endings counts those, so AuthenticateWatch can tell
	// that one committed while it looked the secret up.
	ends    map[string]chan struct{}
	endings uint64

	flushMu sync.Mutex // one flush at a time; requests never queue behind it
}

// Option configures a Service.
type Option func(*Service)

// WithClock replaces time.Now (tests use a fake clock).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithFlushInterval sets how often recorded uses are written at most.
func WithFlushInterval(d time.Duration) Option {
	return func(s *Service) {
		if d > 0 {
			s.flushInterval = d
		}
	}
}

// WithStore keeps the keys in st instead of New's database.
func WithStore(st Store) Option { return func(s *Service) { s.store = st } }

// New returns the key service of db.
func New(db *store.DB, opts ...Option) *Service {
	s := &Service{store: store.NewKeys(db), now: time.Now, flushInterval: DefaultFlushInterval, used: map[string]time.Time{},
		ends: map[string]chan struct{}{}}
	for _, o := range opts {
		o(s)
	}
	s.lastFlush = s.now()
	return s
}

// Create issues a new key and returns its record and its secret; the secret is
// shown this once and cannot be recovered.
func (s *Service) Create(name string, scope core.Scope) (core.Key, string, error) {
	name, err := checkName(name)
	if err != nil {
		return core.Key{}, "", err
	}
	if err := checkReserved(name); err != nil {
		return core.Key{}, "", err
	}
	if err := checkScope(scope); err != nil {
		return core.Key{}, "", err
	}
	secret, err := newSecret()
	if err != nil {
		return core.Key{}, "", err
	}
	k, err := s.insert(name, scope, secret)
	return k, secret, err
}

// insert stores a new record with the given secret in one transaction.
func (s *Service) insert(name string, scope core.Scope, secret string) (core.Key, error) {
	k := core.Key{
		UUID:      uuid.NewString(),
		Name:      name,
		Scope:     scope,
		Prefix:    secretPrefix(secret),
		CreatedAt: s.now().UTC(),
	}
	hash := hashSecret(secret)
	err := s.store.Insert(context.Background(), k, hash[:])
	if err != nil {
		return core.Key{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}

// List returns every key record, oldest first. Secrets are not part of records.
func (s *Service) List() ([]core.Key, error) {
	out, err := s.store.List(context.Background())
	if err != nil {
		return nil, fmt.Errorf("list keys: %w", err)
	}
	for i := range out {
		s.withRecentUse(&out[i])
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].UUID < out[j].UUID
	})
	return out, nil
}

// Get returns one key record, core.NotFound when there is none.
func (s *Service) Get(id string) (core.Key, error) {
	k, err := s.store.Get(context.Background(), id)
	if err != nil {
		return core.Key{}, err
	}
	s.withRecentUse(&k)
	return k, nil
}

// Revoke deletes a key; its secret stops working at once.
func (s *Service) Revoke(id string) error {
	err := s.store.Delete(context.Background(), id, func(_ core.Key, role string) error {
		if role != "" {
			return core.Invalid("uuid", "key %s is Porchlight's own owner of %s; it has no secret and cannot be revoked", id, ownerWork[role])
		}
		return nil
	})
	if err != nil {
		return wrapUnlessTyped("revoke key", err)
	}
	s.mu.Lock()
	delete(s.used, id)
	s.mu.Unlock()
	s.ended(id)
	return nil
}

// Rotate gives a key a new secret. The old secret stops working at once; the
// record keeps its uuid, name, scope and creation time.
func (s *Service) Rotate(id string) (core.Key, string, error) {
	secret, err := newSecret()
	if err != nil {
		return core.Key{}, "", err
	}
	hash := hashSecret(secret)
	k, err := s.store.SetSecret(context.Background(), id, hash[:], func(k *core.Key, role string) error {
		if role != "" {
			// A secret would let someone outside act as the owner of that work.
			return core.Invalid("uuid", "key %s is Porchlight's own owner of %s; it never gets a secret", id, ownerWork[role])
		}
		k.Prefix = secretPrefix(secret)
		return nil
	})
	if err != nil {
		return core.Key{}, "", wrapUnlessTyped("rotate key", err)
	}
	s.ended(id)
	s.withRecentUse(&k)
	return k, secret, nil
}

// RotateSecret gives the key that secret belongs to a new secret, as a key
// rotating itself does. The presented secret is checked and replaced in the same
// transaction (compare and swap on its hash), so of concurrent rotations with one
// secret exactly one succeeds; the others get core.Unauthorized, as that secret no
// longer works.
func (s *Service) RotateSecret(secret string) (core.Key, string, error) {
	if err := checkPresented(secret); err != nil {
		return core.Key{}, "", err
	}
	fresh, err := newSecret()
	if err != nil {
		return core.Key{}, "", err
	}
	oldHash, newHash := hashSecret(secret), hashSecret(fresh)
	k, found, err := s.store.SwapSecret(context.Background(), oldHash[:], newHash[:], func(k *core.Key) {
		k.Prefix = secretPrefix(fresh)
	})
	if err == nil && !found {
		err = core.Unauthorized("invalid API key: it was rotated or revoked")
	}
	if err != nil {
		return core.Key{}, "", wrapUnlessTyped("rotate key", err)
	}
	s.ended(k.UUID)
	s.withRecentUse(&k)
	return k, fresh, nil
}

// checkPresented refuses what cannot be a secret before any hashing.
func checkPresented(secret string) error {
	switch {
	case secret == "":
		return core.Unauthorized("missing API key")
	case !strings.HasPrefix(secret, SecretPrefix):
		return core.Unauthorized("invalid API key: it must start with %s", SecretPrefix)
	case len(secret) > maxSecretLen:
		return core.Unauthorized("invalid API key")
	}
	return nil
}

// Authenticate returns the key a secret belongs to, core.Unauthorized when it is
// missing, malformed, unknown, revoked or rotated away.
func (s *Service) Authenticate(secret string) (core.Key, error) {
	k, err := s.lookup(secret)
	if err != nil {
		return core.Key{}, err
	}
	s.recordUse(&k, nil)
	return k, nil
}

// AuthenticateWatch is Authenticate for requests that outlive their start (event
// streams, WebSocket tickets): it also returns a channel that is closed once this
// secret stops working, when its key is rotated or revoked, so they can end at once.
func (s *Service) AuthenticateWatch(secret string) (core.Key, <-chan struct{}, error) {
	for {
		s.mu.Lock()
		seen := s.endings
		s.mu.Unlock()
		k, err := s.lookup(secret)
		if err != nil {
			return core.Key{}, nil, err
		}
		var end chan struct{}
		if s.recordUse(&k, func() bool {
			if s.endings != seen {
				return false // a rotation or revocation committed meanwhile: look again
			}
			// Taken before any later ending closes it: that one closes this channel.
			if end = s.ends[k.UUID]; end == nil {
				end = make(chan struct{})
				s.ends[k.UUID] = end
			}
			return true
		}) {
			return k, end, nil
		}
	}
}

// lookup finds the key of a secret.
func (s *Service) lookup(secret string) (core.Key, error) {
	if err := checkPresented(secret); err != nil {
		return core.Key{}, err
	}
	hash := hashSecret(secret)
	k, found, err := s.store.BySecret(context.Background(), hash[:])
	if err != nil {
		return core.Key{}, wrapUnlessTyped("authenticate", err)
	}
	if !found {
		return core.Key{}, core.Unauthorized("invalid API key")
	}
	return k, nil
}

// recordUse notes that k was used now, unless also (run under the same lock)
// answers false; it flushes the uses when they are due.
func (s *Service) recordUse(k *core.Key, also func() bool) bool {
	now := s.now().UTC()
	s.mu.Lock()
	if also != nil && !also() {
		s.mu.Unlock()
		return false
	}
	s.used[k.UUID] = now
	due := now.Sub(s.lastFlush) >= s.flushInterval
	s.mu.Unlock()
	k.LastUsedAt = &now
	if due {
		// A failed flush keeps the times in memory for the next attempt; the
		// request itself is authenticated either way.
		_ = s.tryFlush()
	}
	return true
}

// ended closes the channel of key id's secret; called after a rotation or
// revocation committed.
func (s *Service) ended(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.endings++
	if end := s.ends[id]; end != nil {
		close(end)
		delete(s.ends, id)
	}
}

// EnsureBootstrap makes sure an admin key with this secret exists, creating one
// named "bootstrap" when none does. It reports whether it created one.
func (s *Service) EnsureBootstrap(secret string) (bool, error) {
	if !strings.HasPrefix(secret, SecretPrefix) {
		return false, core.Invalid("PORCHLIGHT_ADMIN_KEY", "must start with %s", SecretPrefix)
	}
	if len(secret) < MinBootstrapLen {
		return false, core.Invalid("PORCHLIGHT_ADMIN_KEY", "must be at least %d characters", MinBootstrapLen)
	}
	if len(secret) > maxSecretLen {
		return false, core.Invalid("PORCHLIGHT_ADMIN_KEY", "must be at most %d characters", maxSecretLen)
	}
	for _, r := range secret {
		if r <= ' ' || r > '~' {
			return false, core.Invalid("PORCHLIGHT_ADMIN_KEY", "must be printable ASCII without spaces")
		}
	}
	hash := hashSecret(secret)
	if _, exists, err := s.store.BySecret(context.Background(), hash[:]); err != nil {
		return false, fmt.Errorf("bootstrap key: %w", err)
	} else if exists {
		return false, nil
	}
	if _, err := s.insert("bootstrap", core.ScopeAdmin, secret); err != nil {
		if core.KindOf(err) == core.KindConflict { // created meanwhile by another caller
			return false, nil
		}
		return false, fmt.Errorf("bootstrap key: %w", err)
	}
	return true, nil
}

// InternalOwner returns the uuid of the internal owner of role (OwnerHotfolders or
// OwnerWindow), creating it the first time in one transaction: a standard key
// record named after the role with no secret, so it owns work but can never
// authenticate. It is found by the uuid recorded for the role, never by name.
func (s *Service) InternalOwner(role string) (string, error) {
	if _, ok := ownerWork[role]; !ok {
		return "", fmt.Errorf("internal owner: unknown role %q", role)
	}
	id, err := s.store.InternalOwner(context.Background(), role, func() core.Key {
		return core.Key{UUID: uuid.NewString(), Name: role, Scope: core.ScopeStandard, CreatedAt: s.now().UTC()}
	})
	if err != nil {
		return "", fmt.Errorf("internal owner %s: %w", role, err)
	}
	return id, nil
}

// Flush writes the recorded uses to the database now, in one transaction.
func (s *Service) Flush() error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	return s.flushLocked()
}

// tryFlush flushes unless another flush is running (that one writes our use too).
func (s *Service) tryFlush() error {
	if !s.flushMu.TryLock() {
		return nil
	}
	defer s.flushMu.Unlock()
	return s.flushLocked()
}

func (s *Service) flushLocked() error {
	s.mu.Lock()
	batch := s.used
	s.used = map[string]time.Time{}
	s.lastFlush = s.now()
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := s.store.RecordUses(context.Background(), batch)
	if err != nil {
		// Put the times back (unless newer ones arrived) so the next flush retries.
		s.mu.Lock()
		for id, at := range batch {
			if cur, ok := s.used[id]; !ok || at.After(cur) {
				s.used[id] = at
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("record key use: %w", err)
	}
	return nil
}

// Serve writes recorded uses every flush interval and once more when ctx ends.
func (s *Service) Serve(ctx context.Context) error {
	t := time.NewTicker(s.flushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return s.Flush()
		case <-t.C:
			if err := s.Flush(); err != nil {
				return err
			}
		}
	}
}

// withRecentUse overlays a use that is not written yet.
func (s *Service) withRecentUse(k *core.Key) {
	s.mu.Lock()
	at, ok := s.used[k.UUID]
	s.mu.Unlock()
	if ok && (k.LastUsedAt == nil || at.After(*k.LastUsedAt)) {
		k.LastUsedAt = &at
	}
}

func hashSecret(secret string) [sha256.Size]byte { return sha256.Sum256([]byte(secret)) }

func secretPrefix(secret string) string {
	if len(secret) <= prefixLen {
		return secret
	}
	return secret[:prefixLen]
}

// newSecret returns sk- followed by 32 random bytes in base62 (43 characters).
func newSecret() (string, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("generate secret: %w", err)
	}
	n := new(big.Int).SetBytes(raw[:])
	body := make([]byte, secretChars)
	base, mod := big.NewInt(62), new(big.Int)
	for i := secretChars - 1; i >= 0; i-- {
		n.DivMod(n, base, mod)
		body[i] = base62[mod.Int64()]
	}
	return SecretPrefix + string(body), nil
}

func checkName(name string) (string, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return "", core.Invalid("name", "must not be empty")
	case !utf8.ValidString(name):
		return "", core.Invalid("name", "must be valid UTF-8")
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", core.Invalid("name", "must be at most %d characters", MaxNameLen)
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", core.Invalid("name", "must not contain control characters")
	}
	return name, nil
}

// checkReserved refuses the internal owners' names, in any case, so that no key
// issued to a person looks like one.
func checkReserved(name string) error {
	for role, work := range ownerWork {
		if strings.EqualFold(name, role) {
			return core.Invalid("name", "%q is reserved for Porchlight's own owner of %s; choose another name", role, work)
		}
	}
	return nil
}

func checkScope(scope core.Scope) error {
	switch scope {
	case core.ScopeStandard, core.ScopeAdmin:
		return nil
	}
	return core.Invalid("scope", "unknown scope %q (want %s or %s)", scope, core.ScopeStandard, core.ScopeAdmin)
}

// wrapUnlessTyped adds context to internal errors and leaves typed ones (NotFound,
// Unauthorized...) as they are, so their reason reaches clients unchanged.
func wrapUnlessTyped(op string, err error) error {
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	return fmt.Errorf("%s: %w", op, err)
}
