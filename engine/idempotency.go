package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/porchlight/porchlight/core"
)

// MaxIdempotencyKeyLen bounds the Idempotency-Key header.
const MaxIdempotencyKeyLen = 255

const (
	kindOrder = "order"
	kindBatch = "batch"
)

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

// idempotencyLookup returns the id created by the first request with this key when
// it is still remembered and was the same request; a different request under the same
// key is a core.Conflict.
func idempotencyLookup(tx core.OrdersReader, owner, key, kind, fp string, now time.Time, ttl time.Duration) (string, bool, error) {
	if key == "" {
		return "", false, nil
	}
	ent, err := tx.Idempotency(owner, key)
	if err != nil || ent == nil {
		return "", false, err
	}
	if now.Sub(ent.CreatedAt) >= ttl {
		return "", false, nil // forgotten: the key starts afresh
	}
	if ent.Kind != kind || ent.Fingerprint != fp {
		return "", false, core.Conflict("Idempotency-Key %q was already used with a different request", clip(key))
	}
	return ent.ID, true, nil
}

func idempotencyStore(tx core.OrdersTx, owner, key, kind, fp, id string, now time.Time) error {
	if key == "" {
		return nil
	}
	return tx.PutIdempotency(owner, key, core.IdempotencyRecord{Kind: kind, Fingerprint: fp, ID: id, CreatedAt: now})
}

// idempotentHit checks the key before validation, so a repeated request answers the
// first result even if its assets changed meanwhile.
func (e *Engine) idempotentHit(ctx context.Context, owner, key, kind, fp string) (id string, ok bool, err error) {
	if key == "" {
		return "", false, nil
	}
	err = e.orders.View(ctx, func(tx core.OrdersReader) error {
		id, ok, err = idempotencyLookup(tx, owner, key, kind, fp, e.now(), e.cfg.IdempotencyTTL)
		return err
	})
	return id, ok, err
}

// purgeIdempotency forgets keys older than the TTL.
func (e *Engine) purgeIdempotency(ctx context.Context) error {
	return e.orders.ForgetIdempotency(ctx, e.now().Add(-e.cfg.IdempotencyTTL))
}
