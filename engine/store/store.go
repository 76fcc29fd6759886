// Package store opens Porchlight's bbolt database and owns the file: its bucket
// tree, its schema version and the ordered migrations between versions (the file
// has one schema, so every migration lives here, whichever package owns the
// buckets it touches). It also implements the engine's stores on its own buckets:
// Orders (core.OrderStore), Keys (engine/keys' store) and Shoots (core.ShootStore,
// the window's shoots). Only packages named store open transactions; the rest of
// Porchlight goes through them.
//
// Bucket tree (schema version 3) and the package that owns each bucket:
//
//	meta/                      engine/store: "schema_version" -> uint64 BE; "install_secret" -> 32 random
//	                           bytes (signs storage URLs); "engine_step_timings" -> JSON step name ->
//	                           seconds per megapixel (the engine's ETA model)
//	keys/                      engine/store: key uuid -> core.Key JSON
//	key_hashes/                engine/store: sha256(secret) -> key uuid
//	key_secrets/               engine/store: key uuid -> sha256(secret) (so rotation and revocation find
//	                           the hash to drop)
//	key_owners/                engine/store: role ("hotfolders", "window") -> key uuid: Porchlight's own
//	                           owners of the work of its hot folders and its window (schema 2); their
//	                           records in keys/ have no secret
//	orders/                    engine/store: order uuid -> core.Order JSON plus "queueSeq" (its key in
//	                           queue/pending)
//	queue/pending/             engine/store: seq (NextSequence, BE) -> order uuid: orders waiting for a
//	                           worker, oldest first
//	queue/running/             engine/store: order uuid -> seq (BE): orders a worker holds
//	batches/                   engine/store: batch uuid -> core.Batch JSON
//	owner_orders/              engine/store: owner uuid + "/" + order uuid -> nil (listing by key)
//	idempotency/               engine/store: owner uuid + "/" + Idempotency-Key -> core.IdempotencyRecord JSON
//	assets/                    assets/store: asset uuid -> core.Asset JSON
//	asset_exports/             assets/store: source uuid + "/" + options fingerprint -> export asset uuid
//	ingest/                    assets/store: seq (NextSequence, BE) -> asset uuid: confirmed uploads
//	                           waiting for ingest
//	blob_refs/                 assets/store: sha256 hex -> uint64 BE count of assets that reference the blob
//	shoots/                    engine/store: shoot uuid -> core.Shoot JSON: the window's shoots, their
//	                           scenes, options and every version of each scene's result (schema 3)
//	hotfolder_journal/         app/hotfolder/store: files, scenes, holes, counters and pause marks of
//	                           each folder (the keys are documented there)
//
// The owners of assets/ and hotfolder_journal/ reach their buckets through the
// embedded bolt database of DB, and document their contents in their own packages.
//
// Rules every store keeps: a job moves between queue buckets in one transaction
// together with its record; on start every entry of queue/running goes back to
// queue/pending; sequence keys come from NextSequence, big-endian; bytes read in a
// transaction are copied before it ends; nothing is deleted under a live cursor.
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

// Bucket names. Nested buckets are reached through their parent. The engine's are
// private: only this package opens them.
var (
	bucketMeta         = []byte("meta")
	bucketKeys         = []byte("keys")
	bucketKeyHashes    = []byte("key_hashes")
	bucketKeySecrets   = []byte("key_secrets")
	bucketKeyOwners    = []byte("key_owners")
	bucketOrders       = []byte("orders")
	bucketQueue        = []byte("queue")
	bucketQueuePending = []byte("pending") // inside queue/
	bucketQueueRunning = []byte("running") // inside queue/
	bucketBatches      = []byte("batches")
	bucketOwnerOrders  = []byte("owner_orders")
	bucketIdempotency  = []byte("idempotency")

	keySchemaVersion = []byte("schema_version")
	keyInstallSecret = []byte("install_secret")
)

// Buckets of the other stores of this file (assets/store, app/hotfolder/store own
// their names and contents); the migrations that created them name them here.
var (
	bucketAssets           = []byte("assets")
	bucketAssetExports     = []byte("asset_exports")
	bucketIngest           = []byte("ingest")
	bucketBlobRefs         = []byte("blob_refs")
	bucketHotfolderJournal = []byte("hotfolder_journal")
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
	return open(dataDir, wait, migrations)
}

// OpenVersion opens (or creates) the database in dataDir bringing its schema only
// up to version: a file as that older Porchlight left it, for the tests of the
// upgrades from it. The next Open migrates it the rest of the way.
func OpenVersion(dataDir string, version uint64) (*DB, error) {
	n := 0
	for n < len(migrations) && migrations[n].Version <= version {
		n++
	}
	if n == 0 || migrations[n-1].Version != version {
		return nil, fmt.Errorf("open %s: no schema version %d", dataDir, version)
	}
	return open(dataDir, DefaultLockWait, migrations[:n])
}

func open(dataDir string, wait time.Duration, ms []migration) (*DB, error) {
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
	if err := db.Update(func(tx *bolt.Tx) error { return migrate(tx, ms) }); err != nil {
		bdb.Close()
		return nil, err
	}
	return db, nil
}

// ErrUnreadable is the error (wrapped) of a database file that opens but whose
// schema version cannot be read.
var ErrUnreadable = errors.New("the database cannot be read")

// InspectSchema reads the schema version of the database in dataDir without
// changing the file (read-only, no migration), for doctor. It waits at most wait
// for the lock (DefaultLockWait when not positive) and then fails with ErrLocked:
// a running Porchlight holds the file exclusively. An error opening the file is
// bbolt's as it is; one reading it wraps ErrUnreadable.
func InspectSchema(dataDir string, wait time.Duration) (uint64, error) {
	if wait <= 0 {
		wait = DefaultLockWait
	}
	bdb, err := bolt.Open(filepath.Join(dataDir, FileName), 0o600, &bolt.Options{ReadOnly: true, Timeout: wait})
	if errors.Is(err, bolt.ErrTimeout) {
		return 0, ErrLocked
	}
	if err != nil {
		return 0, err
	}
	defer bdb.Close()
	var version uint64
	if err := bdb.View(func(tx *bolt.Tx) error { version = schemaVersion(tx); return nil }); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrUnreadable, err)
	}
	return version, nil
}

// Path is the database file's path.
func (db *DB) Path() string { return db.path }

// schemaVersion reads the schema version inside tx.
func schemaVersion(tx *bolt.Tx) uint64 {
	b := tx.Bucket(bucketMeta)
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
		v := tx.Bucket(bucketMeta).Get(keyInstallSecret)
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

// queue returns the nested queue bucket name ("pending" or "running") inside tx.
func queue(tx *bolt.Tx, name []byte) *bolt.Bucket {
	q := tx.Bucket(bucketQueue)
	if q == nil {
		return nil
	}
	return q.Bucket(name)
}
