package assets

import (
	"context"
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
	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
	enginestore "github.com/porchlight/porchlight/engine/store"
)

// Service is the asset store. Its methods are safe for concurrent use; Serve runs the
// ingest and export workers.
type Service struct {
	store  store.Store
	blobs  *blobs.Keeper // counted in store
	cfg    Config
	signer *signing.Signer
	base   atomic.Pointer[string]

	wake    chan struct{} // a job was queued
	claimMu sync.Mutex
	claimed map[string]bool // ingest keys a worker holds

	// hookProcessing, when set (tests), runs when an ingest reaches processing.
	hookProcessing func(ctx context.Context, id string)

	// uploadTo is what an upload's bytes are copied into, its blob; tests put a
	// failing disk in front of it.
	uploadTo func(w *blobs.Writer) io.Writer

	recvMu sync.Mutex
	recv   map[string]int // uploads whose bytes are arriving, by asset

	sweepEvery time.Duration // how often Serve looks for lapsed uploads
}

// record is an asset's stored record: the shared core.Asset plus what only this
// package needs.
type record = store.Record

// New opens the asset store on db with its blobs under dataDir/blobs, and sweeps what
// a crash may have left: temporary files and blobs no record references.
func New(db *enginestore.DB, dataDir string, cfg Config) (*Service, error) {
	cfg = cfg.withDefaults()
	st, err := store.Open(db)
	if err != nil {
		return nil, fmt.Errorf("assets: %w", err)
	}
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
		store: st, blobs: blobs.NewKeeper(bs, st), cfg: cfg, signer: signer,
		wake: make(chan struct{}, 1), claimed: map[string]bool{},
		recv: map[string]int{}, sweepEvery: uploadSweepEvery,
		uploadTo: func(w *blobs.Writer) io.Writer { return w },
	}
	s.SetBaseURL(cfg.BaseURL)
	if _, err := s.blobs.SweepUnreferenced(); err != nil {
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

// found reads the record of id inside tx: NotFound when there is none.
func found(tx store.Tx, id string) (*record, error) {
	r, err := tx.Get(id)
	if err == nil && r == nil {
		err = core.NotFound("asset %s not found", id)
	}
	return r, err
}

// getRecord returns the record of id (nil when there is none) from a transaction of
// its own.
func (s *Service) getRecord(id string) (*record, error) {
	var r *record
	err := s.store.View(func(tx store.Tx) error {
		var err error
		r, err = tx.Get(id)
		return err
	})
	return r, err
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
	err := s.store.View(func(tx store.Tx) error {
		r, err := tx.Owned(owner, id)
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
	err := s.store.View(func(tx store.Tx) error {
		r, err := found(tx, id)
		if err == nil {
			a = r.Asset
		}
		return err
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
	err := s.release(func(tx store.Tx, c *blobs.Change) error {
		r, err := tx.Owned(owner, id)
		if err != nil {
			return err
		}
		gone = r.Asset
		for _, sum := range []string{r.SHA256, r.Thumbnail} {
			if err := c.Unref(tx, sum); err != nil {
				return err
			}
		}
		return tx.Delete(r)
	})
	var unremoved *blobs.RemoveError
	if errors.As(err, &unremoved) {
		return fmt.Errorf("delete asset %s: %w", id, unremoved.Err)
	}
	if err != nil {
		return err
	}
	if s.cfg.OnDelete != nil {
		s.cfg.OnDelete(gone)
	}
	return nil
}

// commitBlob commits w through the blob keeper and runs edit, which references the
// blob with c.Ref, in one transaction of the store (see blobs.Keeper.Commit).
func (s *Service) commitBlob(w *blobs.Writer, edit func(tx store.Tx, b blobs.Blob, c *blobs.Change) error) (blobs.Blob, error) {
	return s.blobs.Commit(w, func(b blobs.Blob, c *blobs.Change) error {
		return s.store.Update(func(tx store.Tx) error { return edit(tx, b, c) })
	})
}

// release runs edit, which drops references with c.Unref, in one transaction of the
// store, and removes the blobs left without references (see blobs.Keeper.Release).
func (s *Service) release(edit func(tx store.Tx, c *blobs.Change) error) error {
	return s.blobs.Release(func(c *blobs.Change) error {
		return s.store.Update(func(tx store.Tx) error { return edit(tx, c) })
	})
}

// released drops a *blobs.RemoveError from a release: the references are gone, and
// the file that was left goes at the next sweep.
func released(err error) error {
	var unremoved *blobs.RemoveError
	if errors.As(err, &unremoved) {
		return nil
	}
	return err
}

// Serve runs the ingest and export workers until ctx ends. Jobs queued before a crash
// or a shutdown run again. A job in progress when ctx ends is abandoned at its next
// step and runs again on the next Serve.
func (s *Service) Serve(ctx context.Context) error {
	jobs := make(chan store.Job)
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
					s.unclaim(left.Key)
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

// pendingJobs claims and returns, oldest first, the queued jobs no worker holds.
func (s *Service) pendingJobs() ([]store.Job, error) {
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	return s.store.Next(func(j store.Job) bool {
		if s.claimed[j.Key] {
			return false
		}
		s.claimed[j.Key] = true
		return true
	})
}

func (s *Service) unclaim(key string) {
	s.claimMu.Lock()
	delete(s.claimed, key)
	s.claimMu.Unlock()
}

func (s *Service) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// runJob dispatches by kind and makes sure a panic in a decoder fails only its asset.
func (s *Service) runJob(ctx context.Context, j store.Job) {
	defer s.unclaim(j.Key)
	var kind core.AssetKind
	if r, _ := s.getRecord(j.ID); r != nil {
		kind = r.Kind
	}
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
func (s *Service) dequeue(j store.Job) {
	s.store.Update(func(tx store.Tx) error { return tx.Done(j.Key) })
}

// finishFailed settles a job's asset as failed, releasing its bytes, and dequeues it.
func (s *Service) finishFailed(j store.Job, code, reason string) {
	var out *core.Asset
	s.release(func(tx store.Tx, c *blobs.Change) error {
		if err := tx.Done(j.Key); err != nil {
			return err
		}
		r, err := tx.Get(j.ID)
		if err != nil || r == nil {
			return err
		}
		if err := c.Unref(tx, r.SHA256); err != nil {
			return err
		}
		r.SHA256 = ""
		r.Status, r.Code, r.Reason = core.AssetFailed, code, reason
		r.Rejected = ""
		r.UpdatedAt = s.cfg.Now().UTC()
		out = &r.Asset
		return tx.Put(r)
	})
	if out != nil {
		s.changed(*out)
	}
}

// setStatus moves a job's asset to a working state; false when the asset is gone.
func (s *Service) setStatus(j store.Job, st core.AssetStatus, edit func(r *record)) bool {
	var out *core.Asset
	err := s.store.Update(func(tx store.Tx) error {
		r, err := tx.Get(j.ID)
		if err != nil || r == nil {
			return err
		}
		r.Status = st
		if edit != nil {
			edit(r)
		}
		r.UpdatedAt = s.cfg.Now().UTC()
		out = &r.Asset
		return tx.Put(r)
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

// ExpireUploads fails every pending upload whose address lapsed before it was
// confirmed (code upload_expired), giving back the bytes it had, and answers how
// many. Serve calls it periodically.
func (s *Service) ExpireUploads() (int, error) {
	now := s.cfg.Now().UTC()
	pending, err := s.store.PendingUploads()
	if err != nil {
		return 0, fmt.Errorf("assets: find lapsed uploads: %w", err)
	}
	n := 0
	for _, r := range pending {
		if !s.overdue(r, now) {
			continue
		}
		expired, err := s.expire(r.ID, now)
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
	err := s.store.View(func(tx store.Tx) error {
		r, err := tx.Owned(owner, id)
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
	err := released(s.release(func(tx store.Tx, c *blobs.Change) error {
		r, err := tx.Get(id)
		if err != nil || r == nil || !s.overdue(r, now) {
			return err
		}
		if err := c.Unref(tx, r.SHA256); err != nil {
			return err
		}
		r.SHA256, r.Size, r.Rejected = "", 0, ""
		r.Status, r.Code = core.AssetFailed, core.CodeUploadExpired
		r.Reason = "the upload address expired before the upload was confirmed; declare the asset again"
		r.UpdatedAt = now
		out = &r.Asset
		return tx.Put(r)
	}))
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
