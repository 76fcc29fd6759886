package store

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

// Keys is the API keys' store on this database (engine/keys.Store): keys/,
// key_hashes/, key_secrets/ and key_owners/. Every operation is one transaction;
// the key service's rules run inside it through the callbacks it passes.
type Keys struct{ db *DB }

// NewKeys returns the key store of db.
func NewKeys(db *DB) *Keys { return &Keys{db: db} }

// Insert stores a new key with the hash of its secret; core.Conflict when that
// hash already belongs to a key.
func (s *Keys) Insert(ctx context.Context, k core.Key, hash []byte) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketKeyHashes).Get(hash) != nil {
			return core.Conflict("a key with this secret already exists")
		}
		return putKey(tx, k, hash)
	})
}

// Get returns key id's record, core.NotFound when there is none.
func (s *Keys) Get(ctx context.Context, id string) (core.Key, error) {
	var k core.Key
	err := s.view(ctx, func(tx *bolt.Tx) error {
		var err error
		k, err = getKey(tx, id)
		return err
	})
	return k, err
}

// List returns every key record, in no particular order.
func (s *Keys) List(ctx context.Context) ([]core.Key, error) {
	var out []core.Key
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketKeys).ForEach(func(_, v []byte) error {
			var k core.Key
			if err := json.Unmarshal(v, &k); err != nil {
				return fmt.Errorf("decode key record: %w", err)
			}
			out = append(out, k)
			return nil
		})
	})
	return out, err
}

// BySecret returns the key whose current secret has hash; found is false when
// there is none (unknown, rotated away or revoked).
func (s *Keys) BySecret(ctx context.Context, hash []byte) (core.Key, bool, error) {
	var k core.Key
	found := false
	err := s.view(ctx, func(tx *bolt.Tx) error {
		id, ok := secretOwner(tx, hash)
		if !ok {
			return nil
		}
		rec, err := getKey(tx, id)
		if core.KindOf(err) == core.KindNotFound {
			return nil
		}
		k, found = rec, err == nil
		return err
	})
	return k, found, err
}

// Delete removes key id with its secret, after guard (given the record and the
// internal owner role the key has, "" when none) let it; guard's error aborts.
// core.NotFound when there is no such key.
func (s *Keys) Delete(ctx context.Context, id string, guard func(k core.Key, role string) error) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		k, err := getKey(tx, id)
		if err != nil {
			return err
		}
		if err := guard(k, ownerRole(tx, id)); err != nil {
			return err
		}
		if err := dropSecret(tx, id); err != nil {
			return err
		}
		return tx.Bucket(bucketKeys).Delete([]byte(id))
	})
}

// SetSecret gives key id the secret of hash, replacing its old one, after edit
// (given the record and the key's internal owner role) changed the record or
// refused with an error. It returns the record as stored.
func (s *Keys) SetSecret(ctx context.Context, id string, hash []byte, edit func(k *core.Key, role string) error) (core.Key, error) {
	var k core.Key
	err := s.update(ctx, func(tx *bolt.Tx) error {
		var err error
		if k, err = getKey(tx, id); err != nil {
			return err
		}
		if err := edit(&k, ownerRole(tx, id)); err != nil {
			return err
		}
		if err := dropSecret(tx, id); err != nil {
			return err
		}
		return putKey(tx, k, hash)
	})
	return k, err
}

// SwapSecret replaces the secret of hash old by the one of hash fresh on the key it
// belongs to, after edit changed the record: a compare and swap, so of concurrent
// swaps from one secret exactly one succeeds. found is false when old is no key's
// current secret.
func (s *Keys) SwapSecret(ctx context.Context, old, fresh []byte, edit func(k *core.Key)) (core.Key, bool, error) {
	var k core.Key
	found := false
	err := s.update(ctx, func(tx *bolt.Tx) error {
		id, ok := secretOwner(tx, old)
		if !ok {
			return nil
		}
		rec, err := getKey(tx, id)
		if core.KindOf(err) == core.KindNotFound {
			return nil
		}
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketKeyHashes).Delete(old); err != nil {
			return err
		}
		edit(&rec)
		if err := putKey(tx, rec, fresh); err != nil {
			return err
		}
		k, found = rec, true
		return nil
	})
	if err != nil {
		return core.Key{}, false, err
	}
	return k, found, nil
}

// InternalOwner returns the uuid recorded for role in key_owners/; the first time
// it stores create's record (without a secret) and records its uuid, in one
// transaction.
func (s *Keys) InternalOwner(ctx context.Context, role string, create func() core.Key) (string, error) {
	var id string
	err := s.update(ctx, func(tx *bolt.Tx) error {
		owners := tx.Bucket(bucketKeyOwners)
		if v := owners.Get([]byte(role)); v != nil {
			id = string(v)
			return nil
		}
		k := create()
		if err := putKeyRecord(tx, k); err != nil {
			return err
		}
		id = k.UUID
		return owners.Put([]byte(role), []byte(k.UUID))
	})
	return id, err
}

// RecordUses writes when each key was last used, in one transaction, unless its
// record already has that time or a later one; keys revoked since are skipped.
func (s *Keys) RecordUses(ctx context.Context, uses map[string]time.Time) error {
	return s.update(ctx, func(tx *bolt.Tx) error {
		for id, at := range uses {
			k, err := getKey(tx, id)
			if core.KindOf(err) == core.KindNotFound {
				continue // revoked since
			}
			if err != nil {
				return err
			}
			if k.LastUsedAt != nil && !at.After(*k.LastUsedAt) {
				continue
			}
			k.LastUsedAt = &at
			if err := putKeyRecord(tx, k); err != nil {
				return err
			}
		}
		return nil
	})
}

// KeysContent is everything the key store holds, raw: what a test checks to know
// that no secret is stored and no index entry is left behind.
type KeysContent struct {
	Records map[string][]byte // keys/: uuid -> record JSON
	Hashes  map[string]string // key_hashes/: string(hash) -> uuid
	Secrets map[string][]byte // key_secrets/: uuid -> hash
	Owners  map[string]string // key_owners/: role -> uuid
}

// Content returns a copy of the key store's buckets.
func (s *Keys) Content(ctx context.Context) (KeysContent, error) {
	c := KeysContent{Records: map[string][]byte{}, Hashes: map[string]string{}, Secrets: map[string][]byte{}, Owners: map[string]string{}}
	err := s.view(ctx, func(tx *bolt.Tx) error {
		for _, b := range []struct {
			name []byte
			put  func(k, v []byte)
		}{
			{bucketKeys, func(k, v []byte) { c.Records[string(k)] = Copy(v) }},
			{bucketKeyHashes, func(k, v []byte) { c.Hashes[string(k)] = string(v) }},
			{bucketKeySecrets, func(k, v []byte) { c.Secrets[string(k)] = Copy(v) }},
			{bucketKeyOwners, func(k, v []byte) { c.Owners[string(k)] = string(v) }},
		} {
			if err := tx.Bucket(b.name).ForEach(func(k, v []byte) error { b.put(k, v); return nil }); err != nil {
				return err
			}
		}
		return nil
	})
	return c, err
}

func (s *Keys) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.View(fn)
}

func (s *Keys) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(fn)
}

// secretOwner finds the key of a secret's hash. The index could outlive a rotation
// only through a bug; the key's own hash is the authority, compared in constant time.
func secretOwner(tx *bolt.Tx, hash []byte) (string, bool) {
	id := tx.Bucket(bucketKeyHashes).Get(hash)
	if id == nil {
		return "", false
	}
	if subtle.ConstantTimeCompare(tx.Bucket(bucketKeySecrets).Get(id), hash) != 1 {
		return "", false
	}
	return string(id), true
}

// ownerRole answers the role id is the internal owner of, "" when none.
func ownerRole(tx *bolt.Tx, id string) string {
	role := ""
	_ = tx.Bucket(bucketKeyOwners).ForEach(func(k, v []byte) error {
		if string(v) == id {
			role = string(k)
		}
		return nil
	})
	return role
}

// dropSecret removes key id's hash from both indexes.
func dropSecret(tx *bolt.Tx, id string) error {
	secrets := tx.Bucket(bucketKeySecrets)
	if hash := secrets.Get([]byte(id)); hash != nil {
		if err := tx.Bucket(bucketKeyHashes).Delete(Copy(hash)); err != nil {
			return err
		}
	}
	return secrets.Delete([]byte(id))
}

func getKey(tx *bolt.Tx, id string) (core.Key, error) {
	v := tx.Bucket(bucketKeys).Get([]byte(id))
	if v == nil {
		return core.Key{}, core.NotFound("API key %s not found", id)
	}
	var k core.Key
	if err := json.Unmarshal(v, &k); err != nil {
		return core.Key{}, fmt.Errorf("decode key %s: %w", id, err)
	}
	return k, nil
}

// putKey writes the record and both hash indexes of k.
func putKey(tx *bolt.Tx, k core.Key, hash []byte) error {
	if err := putKeyRecord(tx, k); err != nil {
		return err
	}
	if err := tx.Bucket(bucketKeySecrets).Put([]byte(k.UUID), hash); err != nil {
		return err
	}
	return tx.Bucket(bucketKeyHashes).Put(hash, []byte(k.UUID))
}

func putKeyRecord(tx *bolt.Tx, k core.Key) error {
	v, err := json.Marshal(k)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketKeys).Put([]byte(k.UUID), v)
}
