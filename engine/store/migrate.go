package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/porchlight/porchlight/core"
)

// A migration brings the schema from version Version-1 to Version. Migrations run in
// order inside the opening transaction, so a failed one leaves the file untouched.
type migration struct {
	Version uint64
	Name    string
	Apply   func(tx *bolt.Tx) error
}

// migrations is the ordered list; append, never edit a released one.
var migrations = []migration{
	{1, "initial bucket tree", migrateInitial},
	{2, "internal key owners", migrateKeyOwners},
	{3, "window shoots", migrateShoots},
}

// Latest is the schema version this build writes.
func Latest() uint64 { return migrations[len(migrations)-1].Version }

func migrate(tx *bolt.Tx, ms []migration) error {
	meta, err := tx.CreateBucketIfNotExists(bucketMeta)
	if err != nil {
		return err
	}
	cur := schemaVersion(tx)
	latest := ms[len(ms)-1].Version
	if cur > latest {
		return fmt.Errorf("database schema version %d is newer than this Porchlight understands (%d); upgrade Porchlight", cur, latest)
	}
	for _, m := range ms {
		if m.Version <= cur {
			continue
		}
		if err := m.Apply(tx); err != nil {
			return fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
		}
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, m.Version)
		if err := meta.Put(keySchemaVersion, v); err != nil {
			return err
		}
	}
	return nil
}

func migrateInitial(tx *bolt.Tx) error {
	for _, name := range [][]byte{
		bucketKeys, bucketKeyHashes, bucketKeySecrets, bucketAssets, bucketAssetExports,
		bucketIngest, bucketBlobRefs, bucketOrders, bucketBatches, bucketOwnerOrders,
		bucketIdempotency, bucketHotfolderJournal,
	} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	q, err := tx.CreateBucketIfNotExists(bucketQueue)
	if err != nil {
		return err
	}
	for _, name := range [][]byte{bucketQueuePending, bucketQueueRunning} {
		if _, err := q.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(bucketMeta)
	if meta.Get(keyInstallSecret) == nil {
		secret := make([]byte, 32)
		if _, err := rand.Read(secret); err != nil {
			return err
		}
		if err := meta.Put(keyInstallSecret, secret); err != nil {
			return err
		}
	}
	return nil
}

// migrateKeyOwners records the internal owners of hot-folder and window work by
// uuid. Version 1 found them by name (the oldest standard key named "hotfolders" or
// "window"), so a key an admin gave that name could take their work over.
//
// The oldest such key is adopted only when it has never authenticated: Porchlight
// discarded these keys' secrets when it created them, so a key with a recorded use
// had its secret outside the program and stays an ordinary key (a new internal
// owner is created at the next start). An adopted key loses its secret and its
// prefix in this same transaction, so even a secret handed out but never used
// stops working: nothing outside the program can act as an internal owner.
func migrateKeyOwners(tx *bolt.Tx) error {
	owners, err := tx.CreateBucketIfNotExists(bucketKeyOwners)
	if err != nil {
		return err
	}
	keys, secrets, hashes := tx.Bucket(bucketKeys), tx.Bucket(bucketKeySecrets), tx.Bucket(bucketKeyHashes)
	oldest := map[string]core.Key{}
	err = keys.ForEach(func(_, v []byte) error {
		var k core.Key
		if err := json.Unmarshal(v, &k); err != nil {
			return fmt.Errorf("decode key record: %w", err)
		}
		if k.Scope != core.ScopeStandard || (k.Name != OwnerHotfolders && k.Name != OwnerWindow) {
			return nil
		}
		cur, seen := oldest[k.Name]
		if !seen || k.CreatedAt.Before(cur.CreatedAt) || (k.CreatedAt.Equal(cur.CreatedAt) && k.UUID < cur.UUID) {
			oldest[k.Name] = k
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, role := range OwnerRoles() {
		k, found := oldest[role]
		if !found || k.LastUsedAt != nil || owners.Get([]byte(role)) != nil {
			continue
		}
		if hash := secrets.Get([]byte(k.UUID)); hash != nil {
			if err := hashes.Delete(Copy(hash)); err != nil {
				return err
			}
		}
		if err := secrets.Delete([]byte(k.UUID)); err != nil {
			return err
		}
		k.Prefix = ""
		v, err := json.Marshal(k)
		if err != nil {
			return err
		}
		if err := keys.Put([]byte(k.UUID), v); err != nil {
			return err
		}
		if err := owners.Put([]byte(role), []byte(k.UUID)); err != nil {
			return err
		}
	}
	return nil
}

// migrateShoots adds the bucket of the window's shoots: before version 3 the window
// kept its scenes only in memory.
func migrateShoots(tx *bolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists(bucketShoots)
	return err
}
