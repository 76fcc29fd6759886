// Package store keeps the asset store's records, its export index, its ingest queue
// and the reference counts of its blobs in Porchlight's bbolt database. It owns these
// buckets, and other packages reach them through Store:
//
//	assets/         asset uuid -> Record JSON (a core.Asset plus what only the asset store needs)
//	asset_exports/  source uuid + "/" + format + ";q=" + quality (0 for PNG) + ";edge=" + max edge
//	                -> export asset uuid
//	ingest/         seq (NextSequence, 8-byte BE) -> asset uuid: ingest and export jobs, oldest first
//	blob_refs/      sha256 hex -> uint64 BE count of the references records hold to the blob
//
// engine/store's migrations create the buckets; Open creates any that are missing, so
// the store also works on a database opened before they existed.
//
// Everything a transaction does goes through Tx, so a record, its queue entry, its
// export index entries and the reference counts of its blobs change together or not
// at all. Values read in a transaction are copied out before it ends.
package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/porchlight/porchlight/core"
	enginestore "github.com/porchlight/porchlight/engine/store"
	bolt "go.etcd.io/bbolt"
)

// The buckets this package owns, top level in the database.
var (
	bucketAssets   = []byte("assets")
	bucketExports  = []byte("asset_exports")
	bucketIngest   = []byte("ingest")
	bucketBlobRefs = []byte("blob_refs")
)

// Record is what the assets bucket stores: the shared record plus what only the asset
// store needs. The embedded fields keep the JSON readable as a core.Asset.
type Record struct {
	core.Asset
	Thumbnail string `json:"thumbnail,omitempty"`      // sha256 of the thumbnail blob
	Rejected  string `json:"uploadRejected,omitempty"` // why the last PUT was refused (over the size limit)
	// UploadExpires is when a pending upload fails with upload_expired unless it
	// is confirmed first (Unix seconds): its upload address's expiry, pushed on by
	// a re-issued address or by bytes arriving.
	UploadExpires int64 `json:"uploadExpires,omitempty"`
}

// Job is one entry of the ingest queue.
type Job struct {
	Key string // its place in the queue (8-byte big-endian sequence)
	ID  string // the asset to ingest or export
}

// Store is what the asset service keeps in a database. It is an interface, not just
// the bbolt type, so the service depends on the operations and another database (a
// farm's shared one) can stand behind them; it lives here rather than in package
// assets because a transaction's callback names Tx, and Go's function types must
// match exactly for an implementation to satisfy it.
type Store interface {
	// View runs fn in a read-only transaction.
	View(fn func(tx Tx) error) error
	// Update runs fn in one read-write transaction: all its changes commit together,
	// or none does when fn returns an error.
	Update(fn func(tx Tx) error) error

	// Next returns the queued jobs, oldest first, for which take answers true.
	Next(take func(Job) bool) ([]Job, error)
	// Queued counts the jobs in the queue.
	Queued() (int, error)
	// PendingUploads returns the records of uploads still pending (not yet confirmed).
	PendingUploads() ([]*Record, error)
	// Exports returns the export index: key -> export asset id.
	Exports() (map[string]string, error)

	// Refs returns the blob's reference count.
	Refs(sum string) (uint64, error)
	// Referenced returns the set of blobs with at least one reference.
	Referenced() (map[string]bool, error)
}

// Tx is what one transaction can do.
type Tx interface {
	// Get returns the record of id; nil when there is none.
	Get(id string) (*Record, error)
	// Owned returns owner's record of id: core.NotFound when it is missing or another
	// owner's (ownership failures answer 404, not 403).
	Owned(owner, id string) (*Record, error)
	// Put writes r under r.ID.
	Put(r *Record) error
	// Delete removes r's record with the export index entries that lead to or from it.
	// The references r holds to blobs are the caller's to drop (Unref).
	Delete(r *Record) error

	// Export returns the id of the export of source with the normalised options opt;
	// "" when there is none.
	Export(source string, opt core.ExportOptions) string
	// SetExport indexes export asset id as the export of source with opt.
	SetExport(source string, opt core.ExportOptions, id string) error

	// Enqueue appends a job for asset id to the ingest queue.
	Enqueue(id string) error
	// Done removes the job at key from the queue (absent is fine).
	Done(key string) error

	// Ref adds one reference to the blob sum.
	Ref(sum string) error
	// Unref drops one reference to the blob sum and returns how many are left; at
	// zero the count is deleted.
	Unref(sum string) (left uint64, err error)
}

// Bolt is the Store on Porchlight's bbolt database.
type Bolt struct {
	db *bolt.DB
}

var _ Store = (*Bolt)(nil)

// Open returns the asset store on db, creating its buckets where they are missing.
func Open(db *enginestore.DB) (*Bolt, error) {
	err := db.Update(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketAssets, bucketExports, bucketIngest, bucketBlobRefs} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return fmt.Errorf("create bucket %s: %w", name, err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("open asset store: %w", err)
	}
	return &Bolt{db: db.DB}, nil
}

// View implements Store.
func (s *Bolt) View(fn func(tx Tx) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// Update implements Store.
func (s *Bolt) Update(fn func(tx Tx) error) error {
	return s.db.Update(func(tx *bolt.Tx) error { return fn(boltTx{tx}) })
}

// Next implements Store.
func (s *Bolt) Next(take func(Job) bool) ([]Job, error) {
	var out []Job
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketIngest).ForEach(func(k, v []byte) error {
			// string() copies: the job outlives the transaction.
			if j := (Job{Key: string(k), ID: string(v)}); take(j) {
				out = append(out, j)
			}
			return nil
		})
	})
	return out, err
}

// Queued implements Store.
func (s *Bolt) Queued() (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketIngest).Stats().KeyN
		return nil
	})
	return n, err
}

// Markers of the records that may be pending uploads; PendingUploads decodes no other.
var (
	markUpload  = []byte(`"kind":"upload"`)
	markPending = []byte(`"status":"pending"`)
)

// PendingUploads implements Store.
func (s *Bolt) PendingUploads() ([]*Record, error) {
	var out []*Record
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketAssets).ForEach(func(_, v []byte) error {
			if !bytes.Contains(v, markPending) || !bytes.Contains(v, markUpload) {
				return nil
			}
			var r Record
			if json.Unmarshal(v, &r) == nil && r.Kind == core.AssetUpload && r.Status == core.AssetPending {
				out = append(out, &r)
			}
			return nil
		})
	})
	return out, err
}

// Exports implements Store.
func (s *Bolt) Exports() (map[string]string, error) {
	out := map[string]string{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketExports).ForEach(func(k, v []byte) error {
			out[string(k)] = string(v)
			return nil
		})
	})
	return out, err
}

// Refs implements Store.
func (s *Bolt) Refs(sum string) (uint64, error) {
	var n uint64
	err := s.db.View(func(tx *bolt.Tx) error {
		n = enginestore.Btoi(tx.Bucket(bucketBlobRefs).Get([]byte(sum)))
		return nil
	})
	return n, err
}

// Referenced implements Store.
func (s *Bolt) Referenced() (map[string]bool, error) {
	set := map[string]bool{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketBlobRefs).ForEach(func(k, v []byte) error {
			if enginestore.Btoi(v) > 0 {
				set[string(k)] = true
			}
			return nil
		})
	})
	return set, err
}

// boltTx is Tx on a bbolt transaction.
type boltTx struct{ tx *bolt.Tx }

func (t boltTx) Get(id string) (*Record, error) {
	v := t.tx.Bucket(bucketAssets).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var r Record
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("decode asset %s: %w", id, err)
	}
	return &r, nil
}

func (t boltTx) Owned(owner, id string) (*Record, error) {
	r, err := t.Get(id)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Owner != owner || owner == "" {
		return nil, core.NotFound("asset %s not found", id)
	}
	return r, nil
}

func (t boltTx) Put(r *Record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode asset %s: %w", r.ID, err)
	}
	return t.tx.Bucket(bucketAssets).Put([]byte(r.ID), v)
}

func (t boltTx) Delete(r *Record) error {
	if err := t.tx.Bucket(bucketAssets).Delete([]byte(r.ID)); err != nil {
		return err
	}
	return t.dropExportKeys(r)
}

// exportKey is the export index key of source and normalised options. Quality is
// left out of a PNG's (PNG ignores it), so requests that would produce the same file
// share one export.
func exportKey(source string, opt core.ExportOptions) []byte {
	q := opt.Quality
	if opt.Format == "png" {
		q = 0
	}
	return []byte(source + "/" + opt.Format + ";q=" + strconv.Itoa(q) + ";edge=" + strconv.Itoa(opt.MaxEdge))
}

// dropExportKeys removes the export index entries that lead to or from r: its own,
// when it is an export, and those of the exports made from it.
func (t boltTx) dropExportKeys(r *Record) error {
	b := t.tx.Bucket(bucketExports)
	if r.Kind == core.AssetExport && r.Export != nil {
		k := exportKey(r.Source, *r.Export)
		if string(b.Get(k)) == r.ID {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	prefix := r.ID + "/"
	var keys []string
	c := b.Cursor()
	for k, _ := c.Seek([]byte(prefix)); k != nil && strings.HasPrefix(string(k), prefix); k, _ = c.Next() {
		keys = append(keys, string(k))
	}
	// Deleted once the cursor is done with the bucket.
	for _, k := range keys {
		if err := b.Delete([]byte(k)); err != nil {
			return err
		}
	}
	return nil
}

func (t boltTx) Export(source string, opt core.ExportOptions) string {
	return string(t.tx.Bucket(bucketExports).Get(exportKey(source, opt)))
}

func (t boltTx) SetExport(source string, opt core.ExportOptions, id string) error {
	return t.tx.Bucket(bucketExports).Put(exportKey(source, opt), []byte(id))
}

func (t boltTx) Enqueue(id string) error {
	b := t.tx.Bucket(bucketIngest)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(enginestore.Itob(seq), []byte(id))
}

func (t boltTx) Done(key string) error {
	return t.tx.Bucket(bucketIngest).Delete([]byte(key))
}

func (t boltTx) Ref(sum string) error {
	b := t.tx.Bucket(bucketBlobRefs)
	return b.Put([]byte(sum), enginestore.Itob(enginestore.Btoi(b.Get([]byte(sum)))+1))
}

func (t boltTx) Unref(sum string) (uint64, error) {
	b := t.tx.Bucket(bucketBlobRefs)
	n := enginestore.Btoi(b.Get([]byte(sum)))
	if n <= 1 {
		return 0, b.Delete([]byte(sum))
	}
	return n - 1, b.Put([]byte(sum), enginestore.Itob(n-1))
}
