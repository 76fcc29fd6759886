package assets

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/signing"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/store"
	bolt "go.etcd.io/bbolt"
)

// Service is the asset store. Its methods are safe for concurrent use; Serve runs the
// ingest and export workers.
type Service struct {
	db     *store.DB
	blobs  *blobs.Store
	cfg    Config
	signer *signing.Signer
	base   atomic.Pointer[string]

	// blobMu is held across committing a blob file and the transaction that references
	// it, and across dropping the last reference and removing the file, so a new
	// reference can never point at a file that is being removed.
	blobMu sync.Mutex

	wake    chan struct{} // a job was queued
	claimMu sync.Mutex
	claimed map[string]bool // ingest keys a worker holds

	// hookProcessing, when set (tests), runs when an ingest reaches processing.
	hookProcessing func(ctx context.Context, id string)

	// newBlob starts an upload's blob; tests put a failing disk in its place.
	newBlob func(limit int64) (blobWriter, error)

	recvMu sync.Mutex
	recv   map[string]int // uploads whose bytes are arriving, by asset

	sweepEvery time.Duration // how often Serve looks for lapsed uploads
}

// blobWriter is what an upload writes its bytes through (a *blobs.Writer).
type blobWriter interface {
	io.Writer
	Close() error
	Commit() (blobs.Blob, error)
	Abort()
}

// record is what the assets bucket stores: the shared record plus what only this
// package needs. The embedded fields keep the JSON readable as a core.Asset.
type record struct {
	core.Asset
	Thumbnail string `json:"thumbnail,omitempty"`      // sha256 of the thumbnail blob
	Rejected  string `json:"uploadRejected,omitempty"` // why the last PUT was refused (over the size limit)
	// UploadExpires is when a pending upload fails with upload_expired unless it
	// is confirmed first (Unix seconds): its upload address's expiry, pushed on by
	// a re-issued address or by bytes arriving.
	UploadExpires int64 `json:"uploadExpires,omitempty"`
}

// New opens the asset store on db with its blobs under dataDir/blobs, and sweeps what
// a crash may have left: temporary files and blobs no record references.
func New(db *store.DB, dataDir string, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	bs, err := blobs.Open(filepath.Join(dataDir, "blobs"))
	if err != nil {
		return nil, err
	}
	secret, err := db.InstallSecret()
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	signer, err := signing.New(secret)
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	s := &Service{
		db: db, blobs: bs, cfg: cfg, signer: signer,
		wake: make(chan struct{}, 1), claimed: map[string]bool{},
		recv: map[string]int{}, sweepEvery: uploadSweepEvery,
	}
	s.newBlob = func(limit int64) (blobWriter, error) { return bs.Create(limit) }
	s.SetBaseURL(cfg.BaseURL)
	var refs map[string]bool
	if err := db.View(func(tx *bolt.Tx) error { refs = blobs.Referenced(tx); return nil }); err != nil {
		return nil, fmt.Errorf("assets: read blob references: %w", err)
	}
	if _, err := bs.Sweep(func(sum string) bool { return refs[sum] }); err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
	return s, nil
}

// SetBaseURL sets the scheme://host:port that signed storage addresses start with,
// once the listener is up. Until it is set, addresses are paths only.
func (s *Service) SetBaseURL(u string) {
	u = strings.TrimRight(u, "/")
	s.base.Store(&u)
}

func (s *Service) baseURL() string { return *s.base.Load() }

// Config returns the effective configuration (defaults applied).
func (s *Service) Config() Config { return s.cfg }

// getRecord reads a record inside tx; nil when absent.
func getRecord(tx *bolt.Tx, id string) (*record, error) {
	v := tx.Bucket(store.BucketAssets).Get([]byte(id))
	if v == nil {
		return nil, nil
	}
	var r record
	if err := json.Unmarshal(v, &r); err != nil {
		return nil, fmt.Errorf("decode asset %s: %w", id, err)
	}
	return &r, nil
}

func putRecord(tx *bolt.Tx, r *record) error {
	v, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode asset %s: %w", r.ID, err)
	}
	return tx.Bucket(store.BucketAssets).Put([]byte(r.ID), v)
}

// owned reads the record of id for owner: NotFound when it is missing or another
// key's (ownership failures answer 404, not 403).
func owned(tx *bolt.Tx, owner, id string) (*record, error) {
	r, err := getRecord(tx, id)
	if err != nil {
		return nil, err
	}
	if r == nil || r.Owner != owner || owner == "" {
		return nil, core.NotFound("asset %s not found", id)
	}
	return r, nil
}

func (s *Service) changed(assets ...core.Asset) {
	if s.cfg.OnChange == nil {
		return
	}
	for _, a := range assets {
		s.cfg.OnChange(a)
	}
}

// Get returns owner's asset id.
func (s *Service) Get(owner, id string) (core.Asset, error) {
	var a core.Asset
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := owned(tx, owner, id)
		if err != nil {
			return err
		}
		a = r.Asset
		return nil
	})
	return a, err
}

// Lookup returns asset id whoever owns it, for the engine and the window, which check
// ownership themselves.
func (s *Service) Lookup(id string) (core.Asset, error) {
	var a core.Asset
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			return err
		}
		if r == nil {
			return core.NotFound("asset %s not found", id)
		}
		a = r.Asset
		return nil
	})
	return a, err
}

// StatusInfo is the answer of GET /v1/assets/:id/status.
type StatusInfo struct {
	Status core.AssetStatus `json:"status"`
	Code   string           `json:"code,omitempty"`
	Reason string           `json:"reason,omitempty"`
}

// Status returns the ingest state of owner's asset id, with code and reason when it
// failed.
func (s *Service) Status(owner, id string) (StatusInfo, error) {
	a, err := s.Get(owner, id)
	if err != nil {
		return StatusInfo{}, err
	}
	st := StatusInfo{Status: a.Status}
	if a.Status == core.AssetFailed {
		st.Code, st.Reason = a.Code, a.Reason
	}
	return st, nil
}

// File is an open blob: readable, seekable and readable at offsets.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}

// Open opens the bytes of a ready asset (any owner: the engine reads its inputs
// through it). The size is the record's Size.
func (s *Service) Open(id string) (File, core.Asset, error) {
	a, err := s.Lookup(id)
	if err != nil {
		return nil, a, err
	}
	if a.Status != core.AssetReady {
		return nil, a, core.Conflict("asset %s is %s, not ready", id, a.Status)
	}
	f, err := s.blobs.Open(a.SHA256)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, a, core.NotFound("asset %s not found", id) // deleted meanwhile
		}
		return nil, a, fmt.Errorf("open asset %s: %w", id, err)
	}
	return f, a, nil
}

// Delete removes owner's asset id: its record and its references to blobs; a blob no
// other asset references is removed from disk. Exports made from it stay.
func (s *Service) Delete(owner, id string) error {
	var gone core.Asset
	var drop []string
	s.blobMu.Lock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		r, err := owned(tx, owner, id)
		if err != nil {
			return err
		}
		gone = r.Asset
		for _, sum := range []string{r.SHA256, r.Thumbnail} {
			last, err := unrefBlob(tx, sum)
			if err != nil {
				return err
			}
			if last != "" {
				drop = append(drop, last)
			}
		}
		if err := tx.Bucket(store.BucketAssets).Delete([]byte(id)); err != nil {
			return err
		}
		return s.dropExportKeys(tx, r)
	})
	if err == nil {
		for _, sum := range drop {
			if rerr := s.blobs.Remove(sum); rerr != nil {
				err = fmt.Errorf("delete asset %s: %w", id, rerr)
			}
		}
	}
	s.blobMu.Unlock()
	if err != nil {
		return err
	}
	if s.cfg.OnDelete != nil {
		s.cfg.OnDelete(gone)
	}
	return nil
}

// dropExportKeys removes the asset_exports entries that lead to or from r.
func (s *Service) dropExportKeys(tx *bolt.Tx, r *record) error {
	b := tx.Bucket(store.BucketAssetExports)
	if r.Kind == core.AssetExport && r.Export != nil {
		k := exportKey(r.Source, *r.Export)
		if string(b.Get(k)) == r.ID {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
	}
	prefix := []byte(r.ID + "/")
	c := b.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && strings.HasPrefix(string(k), string(prefix)); k, _ = c.Next() {
		keys = append(keys, store.Copy(k))
	}
	for _, k := range keys {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// removeBlobs removes the blobs whose last reference a committed transaction dropped.
// Callers hold blobMu.
func (s *Service) removeBlobs(sums []string) error {
	var first error
	for _, sum := range sums {
		if err := s.blobs.Remove(sum); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// unrefBlob drops one reference to the blob sum (none where sum is "") and answers
// sum when that was its last, for the caller to remove once the transaction has
// committed; "" otherwise.
func unrefBlob(tx *bolt.Tx, sum string) (string, error) {
	if sum == "" {
		return "", nil
	}
	left, err := blobs.Unref(tx, sum)
	if err != nil || left > 0 {
		return "", err
	}
	return sum, nil
}

// removeIfUnreferenced removes a committed blob that no record took (a lost race or a
// job whose asset vanished). Callers hold blobMu.
func (s *Service) removeIfUnreferenced(sum string) {
	var n uint64
	s.db.View(func(tx *bolt.Tx) error { n = blobs.Refs(tx, sum); return nil })
	if n == 0 {
		s.blobs.Remove(sum)
	}
}

// Serve runs the ingest and export workers until ctx ends. Jobs queued before a crash
// or a shutdown run again. A job in progress when ctx ends is abandoned at its next
// step and runs again on the next Serve.
func (s *Service) Serve(ctx context.Context) error {
	jobs := make(chan job)
	var wg sync.WaitGroup
	for i := 0; i < s.cfg.Workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s.runJob(ctx, j)
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() { defer close(swept); s.sweepUploads(sweepCtx) }()
	defer func() { stopSweep(); <-swept }()
	for {
		pending, err := s.pendingJobs()
		if err != nil {
			return fmt.Errorf("assets: read ingest queue: %w", err)
		}
		for i, j := range pending {
			select {
			case jobs <- j:
			case <-ctx.Done():
				for _, left := range pending[i:] {
					s.unclaim(left.key)
				}
				return nil
			}
		}
		if len(pending) == 0 {
			select {
			case <-s.wake:
			case <-ctx.Done():
				return nil
			}
		}
	}
}

// job is one entry of the ingest bucket.
type job struct {
	key string // the bucket key (8-byte sequence)
	id  string // the asset
}

// pendingJobs claims and returns, oldest first, the queued jobs no worker holds.
func (s *Service) pendingJobs() ([]job, error) {
	var out []job
	err := s.db.View(func(tx *bolt.Tx) error {
		s.claimMu.Lock()
		defer s.claimMu.Unlock()
		return tx.Bucket(store.BucketIngest).ForEach(func(k, v []byte) error {
			if !s.claimed[string(k)] {
				s.claimed[string(k)] = true
				out = append(out, job{key: string(k), id: string(v)})
			}
			return nil
		})
	})
	return out, err
}

func (s *Service) unclaim(key string) {
	s.claimMu.Lock()
	delete(s.claimed, key)
	s.claimMu.Unlock()
}

// enqueue adds a job for asset id inside tx; signal after the commit.
func enqueue(tx *bolt.Tx, id string) error {
	b := tx.Bucket(store.BucketIngest)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return b.Put(store.Itob(seq), []byte(id))
}

func (s *Service) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// runJob dispatches by kind and makes sure a panic in a decoder fails only its asset.
func (s *Service) runJob(ctx context.Context, j job) {
	defer s.unclaim(j.key)
	var kind core.AssetKind
	s.db.View(func(tx *bolt.Tx) error {
		if r, _ := getRecord(tx, j.id); r != nil {
			kind = r.Kind
		}
		return nil
	})
	defer func() {
		if p := recover(); p != nil {
			s.finishFailed(j, core.CodeUnreadable, fmt.Sprintf("the image could not be processed (%v)", p))
		}
	}()
	switch kind {
	case core.AssetExport:
		s.runExport(ctx, j)
	case "":
		s.dequeue(j) // deleted since it was queued
	default:
		s.runIngest(ctx, j)
	}
}

// dequeue drops a job whose asset is gone.
func (s *Service) dequeue(j job) {
	s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(store.BucketIngest).Delete([]byte(j.key)) })
}

// finishFailed settles a job's asset as failed, releasing its bytes, and dequeues it.
func (s *Service) finishFailed(j job, code, reason string) {
	var out *core.Asset
	var drop []string
	s.blobMu.Lock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(store.BucketIngest).Delete([]byte(j.key)); err != nil {
			return err
		}
		r, err := getRecord(tx, j.id)
		if err != nil || r == nil {
			return err
		}
		last, err := unrefBlob(tx, r.SHA256)
		if err != nil {
			return err
		}
		if last != "" {
			drop = append(drop, last)
		}
		r.SHA256 = ""
		r.Status, r.Code, r.Reason = core.AssetFailed, code, reason
		r.Rejected = ""
		r.UpdatedAt = s.cfg.Now().UTC()
		out = &r.Asset
		return putRecord(tx, r)
	})
	if err == nil {
		s.removeBlobs(drop)
	}
	s.blobMu.Unlock()
	if out != nil {
		s.changed(*out)
	}
}

// setStatus moves a job's asset to a working state; false when the asset is gone.
func (s *Service) setStatus(j job, st core.AssetStatus, edit func(r *record)) bool {
	var out *core.Asset
	err := s.db.Update(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, j.id)
		if err != nil || r == nil {
			return err
		}
		r.Status = st
		if edit != nil {
			edit(r)
		}
		r.UpdatedAt = s.cfg.Now().UTC()
		out = &r.Asset
		return putRecord(tx, r)
	})
	if err != nil || out == nil {
		if err == nil {
			s.dequeue(j)
		}
		return false
	}
	s.changed(*out)
	return true
}

// uploadSweepEvery is how often Serve fails pending uploads whose address lapsed.
// Confirming or re-issuing checks the deadline itself, so the sweep only decides how
// soon an abandoned upload shows failed and gives its bytes back.
const uploadSweepEvery = 30 * time.Second

// receiving marks asset id's bytes as arriving until the returned func is called.
func (s *Service) receiving(id string) func() {
	s.recvMu.Lock()
	s.recv[id]++
	s.recvMu.Unlock()
	return func() {
		s.recvMu.Lock()
		if s.recv[id]--; s.recv[id] <= 0 {
			delete(s.recv, id)
		}
		s.recvMu.Unlock()
	}
}

// overdue reports whether r is a pending upload whose deadline passed at now with no
// bytes arriving.
func (s *Service) overdue(r *record, now time.Time) bool {
	if r.Kind != core.AssetUpload || r.Status != core.AssetPending {
		return false
	}
	deadline := r.UploadExpires
	if deadline == 0 { // declared before deadlines were recorded
		deadline = s.uploadDeadline(r.UpdatedAt)
	}
	if now.Unix() < deadline {
		return false
	}
	s.recvMu.Lock()
	defer s.recvMu.Unlock()
	return s.recv[r.ID] == 0
}

// Records that may be pending uploads; the rest are skipped without decoding.
var (
	markUpload  = []byte(`"kind":"upload"`)
	markPending = []byte(`"status":"pending"`)
)

// ExpireUploads fails every pending upload whose address lapsed before it was
// confirmed (code upload_expired), giving back the bytes it had, and answers how
// many. Serve calls it periodically.
func (s *Service) ExpireUploads() (int, error) {
	now := s.cfg.Now().UTC()
	var due []string
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(store.BucketAssets).ForEach(func(_, v []byte) error {
			if !bytes.Contains(v, markPending) || !bytes.Contains(v, markUpload) {
				return nil
			}
			var r record
			if json.Unmarshal(v, &r) == nil && s.overdue(&r, now) {
				due = append(due, r.ID)
			}
			return nil
		})
	})
	if err != nil {
		return 0, fmt.Errorf("assets: find lapsed uploads: %w", err)
	}
	n := 0
	for _, id := range due {
		expired, err := s.expire(id, now)
		if err != nil {
			return n, err
		}
		if expired {
			n++
		}
	}
	return n, nil
}

// expireUpload fails owner's asset id if it is an overdue upload.
func (s *Service) expireUpload(owner, id string, now time.Time) error {
	var due bool
	err := s.db.View(func(tx *bolt.Tx) error {
		r, err := owned(tx, owner, id)
		if err == nil {
			due = s.overdue(r, now)
		}
		return err
	})
	if err != nil || !due {
		return err
	}
	_, err = s.expire(id, now)
	return err
}

// expire moves asset id to failed with upload_expired if it is still overdue, in one
// transaction, and drops its bytes when nothing else references them.
func (s *Service) expire(id string, now time.Time) (bool, error) {
	var out *core.Asset
	var drop []string
	s.blobMu.Lock()
	err := s.db.Update(func(tx *bolt.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil || r == nil || !s.overdue(r, now) {
			return err
		}
		last, err := unrefBlob(tx, r.SHA256)
		if err != nil {
			return err
		}
		if last != "" {
			drop = append(drop, last)
		}
		r.SHA256, r.Size, r.Rejected = "", 0, ""
		r.Status, r.Code = core.AssetFailed, core.CodeUploadExpired
		r.Reason = "the upload address expired before the upload was confirmed; declare the asset again"
		r.UpdatedAt = now
		out = &r.Asset
		return putRecord(tx, r)
	})
	if err == nil {
		s.removeBlobs(drop)
	}
	s.blobMu.Unlock()
	if err != nil {
		return false, fmt.Errorf("expire upload %s: %w", id, err)
	}
	if out != nil {
		s.changed(*out)
	}
	return out != nil, nil
}

// sweepUploads runs ExpireUploads every sweepEvery until ctx ends. A failed sweep is
// retried at the next tick; the deadlines are in the records.
func (s *Service) sweepUploads(ctx context.Context) {
	t := time.NewTicker(s.sweepEvery)
	defer t.Stop()
	for {
		if ctx.Err() == nil {
			s.ExpireUploads()
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}
