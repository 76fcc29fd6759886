package engine

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
)

// MaxIdempotencyKeyLen bounds the Idempotency-Key header.
const MaxIdempotencyKeyLen = 255

const (
	kindOrder = "order"
	kindBatch = "batch"
)

// idempotencyEntry is the stored first answer to a key: which request it was (by
// fingerprint) and what it created.
type idempotencyEntry struct {
	Kind        string    `json:"kind"`
	Fingerprint string    `json:"fingerprint"`
	ID          string    `json:"id"` // order or batch id
	CreatedAt   time.Time `json:"createdAt"`
}

func checkIdempotencyKey(k string) error {
	if len(k) > MaxIdempotencyKeyLen {
		return core.Invalid("Idempotency-Key", "is longer than %d characters", MaxIdempotencyKeyLen)
	}
	for _, c := range []byte(k) {
		if c < 0x20 || c > 0x7e {
			return core.Invalid("Idempotency-Key", "must be printable ASCII")
		}
	}
	return nil
}

// fingerprint identifies a request body: the same request always gives the same one.
func fingerprint(kind string, parts ...any) (string, error) {
	v, err := json.Marshal(append([]any{kind}, parts...))
	if err != nil {
		return "", fmt.Errorf("engine: fingerprint request: %w", err)
	}
	sum := sha256.Sum256(v)
	return hex.EncodeToString(sum[:]), nil
}

func idempotencyKey(owner, key string) []byte { return []byte(owner + "/" + key) }

// idempotencyLookup returns the id created by the first request with this key when
// it is still remembered and was the same request; a different request under the same
// key is a core.Conflict.
func idempotencyLookup(tx *bolt.Tx, owner, key, kind, fp string, now time.Time, ttl time.Duration) (string, bool, error) {
	if key == "" {
		return "", false, nil
	}
	v := tx.Bucket(store.BucketIdempotency).Get(idempotencyKey(owner, key))
	if v == nil {
		return "", false, nil
	}
	var ent idempotencyEntry
	if err := json.Unmarshal(v, &ent); err != nil {
		return "", false, fmt.Errorf("decode idempotency entry: %w", err)
	}
	if now.Sub(ent.CreatedAt) >= ttl {
		return "", false, nil // forgotten: the key starts afresh
	}
	if ent.Kind != kind || ent.Fingerprint != fp {
		return "", false, core.Conflict("Idempotency-Key %q was already used with a different request", clip(key))
	}
	return ent.ID, true, nil
}

func idempotencyStore(tx *bolt.Tx, owner, key, kind, fp, id string, now time.Time) error {
	if key == "" {
		return nil
	}
	v, err := json.Marshal(idempotencyEntry{Kind: kind, Fingerprint: fp, ID: id, CreatedAt: now})
	if err != nil {
		return err
	}
	return tx.Bucket(store.BucketIdempotency).Put(idempotencyKey(owner, key), v)
}

// idempotentHit checks the key before validation, so a repeated request answers the
// first result even if its assets changed meanwhile.
func (e *Engine) idempotentHit(owner, key, kind, fp string) (id string, ok bool, err error) {
	if key == "" {
		return "", false, nil
	}
	err = e.db.View(func(tx *bolt.Tx) error {
		id, ok, err = idempotencyLookup(tx, owner, key, kind, fp, e.now(), e.cfg.IdempotencyTTL)
		return err
	})
	return id, ok, err
}

// purgeIdempotency deletes keys older than the TTL.
func (e *Engine) purgeIdempotency() error {
	now := e.now()
	var stale [][]byte
	err := e.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketIdempotency).ForEach(func(k, v []byte) error {
			var ent idempotencyEntry
			if json.Unmarshal(v, &ent) != nil || now.Sub(ent.CreatedAt) >= e.cfg.IdempotencyTTL {
				stale = append(stale, bytes.Clone(k))
			}
			return nil
		})
	})
	if err != nil || len(stale) == 0 {
		return err
	}
	return e.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(store.BucketIdempotency)
		for _, k := range stale {
			v := b.Get(k)
			var ent idempotencyEntry
			if v != nil && json.Unmarshal(v, &ent) == nil && now.Sub(ent.CreatedAt) < e.cfg.IdempotencyTTL {
				continue // replaced meanwhile
			}
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		return nil
	})
}
