// Package store opens Porchlight's bbolt database and owns its bucket tree, its
// schema version and the ordered migrations between versions. Other packages read
// and write their own buckets inside transactions of this database; the names live
// here so the whole tree is documented in one place.
//
// Bucket tree (schema version 2):
//
//	meta/                      "schema_version" -> uint64 BE; "install_secret" -> 32 random bytes (signs storage URLs);
//	                           "engine_step_timings" -> JSON step name -> seconds per megapixel (ETA model)
//	keys/                      key uuid -> core.Key JSON
//	key_hashes/                sha256(secret) -> key uuid
//	key_secrets/               key uuid -> sha256(secret) (so rotation and revocation find the hash to drop)
//	key_owners/                role ("hotfolders", "window") -> key uuid: Porchlight's own owners of the work of
//	                           its hot folders and its window (schema 2); their records in keys/ have no secret
//	assets/                    asset uuid -> core.Asset JSON
//	asset_exports/             source uuid + "/" + options fingerprint -> export asset uuid
//	ingest/                    seq (NextSequence, BE) -> asset uuid: confirmed uploads waiting for ingest
//	blob_refs/                 sha256 hex -> uint64 BE count of assets that reference the blob
//	orders/                    order uuid -> core.Order JSON plus "queueSeq" (its key in queue/pending)
//	queue/pending/             seq (BE) -> order uuid: orders waiting for a worker, oldest first
//	queue/running/             order uuid -> seq (BE): orders a worker holds
//	batches/                   batch uuid -> core.Batch JSON
//	owner_orders/              owner uuid + "/" + order uuid -> nil (listing by key)
//	idempotency/               owner uuid + "/" + Idempotency-Key -> stored first answer
//	hotfolder_journal/         file identity -> journal entry JSON
//
// A job moves between queue buckets in one transaction together with its record.
// On start the engine moves every entry of queue/running back to queue/pending.
package store

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Bucket names. Nested buckets are reached through their parent.
var (
	BucketMeta             = []byte("meta")
	BucketKeys             = []byte("keys")
	BucketKeyHashes        = []byte("key_hashes")
	BucketKeySecrets       = []byte("key_secrets")
	BucketKeyOwners        = []byte("key_owners")
	BucketAssets           = []byte("assets")
	BucketAssetExports     = []byte("asset_exports")
	BucketIngest           = []byte("ingest")
	BucketBlobRefs         = []byte("blob_refs")
	BucketOrders           = []byte("orders")
	BucketQueue            = []byte("queue")
	BucketQueuePending     = []byte("pending") // inside queue/
	BucketQueueRunning     = []byte("running") // inside queue/
	BucketBatches          = []byte("batches")
	BucketOwnerOrders      = []byte("owner_orders")
	BucketIdempotency      = []byte("idempotency")
	BucketHotfolderJournal = []byte("hotfolder_journal")

	keySchemaVersion = []byte("schema_version")
	keyInstallSecret = []byte("install_secret")
)

// Roles of the internal owners in key_owners/: the front doors that own work
// without an API key of their own.
const (
	OwnerHotfolders = "hotfolders"
	OwnerWindow     = "window"
)

// OwnerRoles lists every internal owner role.
func OwnerRoles() []string { return []string{OwnerHotfolders, OwnerWindow} }

// DB is the opened database.
type DB struct {
	*bolt.DB
	path string
}

// FileName is the database file inside the data dir.
const FileName = "porchlight.db"

// ErrLocked is the error (wrapped) of opening a database another process holds:
// bbolt allows one process at a time.
var ErrLocked = errors.New("the database is locked by another running Porchlight")

// DefaultLockWait is how long Open waits for another process to let go.
const DefaultLockWait = 5 * time.Second

// Open opens (or creates) the database in dataDir and brings its schema up to date.
// A database written by a newer Porchlight is refused rather than misread.
func Open(dataDir string) (*DB, error) { return OpenWait(dataDir, DefaultLockWait) }

// OpenWait is Open waiting at most wait for the lock, then failing with ErrLocked
// (DefaultLockWait when wait is not positive: bbolt would wait forever).
func OpenWait(dataDir string, wait time.Duration) (*DB, error) {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	path := filepath.Join(dataDir, FileName)
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: wait})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("open %s: %w", path, ErrLocked)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db := &DB{DB: bdb, path: path}
	if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, migrations) }); err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// SchemaVersion reads the schema version inside tx.
func SchemaVersion(tx *bolt.Tx) uint64 {
	b := tx.Bucket(BucketMeta)
	if b == nil {
		return 0
	}
	v := b.Get(keySchemaVersion)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// InstallSecret returns the per-install secret used to sign storage addresses.
func (db *DB) InstallSecret() ([]byte, error) {
	var out []byte
	err := db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(BucketMeta).Get(keyInstallSecret)
		if len(v) == 0 {
			return errors.New("install secret missing")
		}
		out = append([]byte(nil), v...)
		return nil
	})
	return out, err
}

// Itob encodes a sequence number as an 8-byte big-endian key, so keys sort in order.
func Itob(v uint64) []byte {
	b := make([]byte, 8)
	binary.BigEndian.PutUint64(b, v)
	return b
}

// Btoi decodes an 8-byte big-endian key.
func Btoi(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

// Copy returns a copy of b: values read in a transaction are only valid inside it.
func Copy(b []byte) []byte {
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// Queue returns the nested queue bucket name ("pending" or "running") inside tx.
func Queue(tx *bolt.Tx, name []byte) *bolt.Bucket {
	q := tx.Bucket(BucketQueue)
	if q == nil {
		return nil
	}
	return q.Bucket(name)
}
