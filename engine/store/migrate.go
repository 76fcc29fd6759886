package store

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
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
}

// Latest is the schema version this build writes.
func Latest() uint64 { return migrations[len(migrations)-1].Version }

func migrate(tx *bolt.Tx, ms []migration) error {
	meta, err := tx.CreateBucketIfNotExists(BucketMeta)
	if err != nil {
		return err
	}
	cur := SchemaVersion(tx)
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
		BucketKeys, BucketKeyHashes, BucketKeySecrets, BucketAssets, BucketAssetExports,
		BucketIngest, BucketBlobRefs, BucketOrders, BucketBatches, BucketOwnerOrders,
		BucketIdempotency, BucketHotfolderJournal,
	} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	q, err := tx.CreateBucketIfNotExists(BucketQueue)
	if err != nil {
		return err
	}
	for _, name := range [][]byte{BucketQueuePending, BucketQueueRunning} {
		if _, err := q.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	meta := tx.Bucket(BucketMeta)
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
