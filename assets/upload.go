package assets

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
)

// maxFilename bounds a declared file name (bytes), as most file systems do.
const maxFilename = 255

// cleanFilename keeps the last path element of a declared name and refuses names that
// cannot be written back to disk as they are.
func cleanFilename(name string) (string, error) {
	name = strings.TrimSpace(name)
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = strings.TrimSpace(name[i+1:])
	}
	switch {
	case name == "" || name == "." || name == "..":
		return "", core.Invalid("filename", "is required: the name of the file being uploaded")
	case len(name) > maxFilename:
		return "", core.Invalid("filename", "is %d bytes long, over the limit of %d", len(name), maxFilename)
	case !utf8.ValidString(name):
		return "", core.Invalid("filename", "is not valid UTF-8")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "", core.Invalid("filename", "contains control characters")
	}
	return name, nil
}

// Declare records a pending upload for owner and returns it with its signed upload
// address (valid for Config.UploadTTL).
func (s *Service) Declare(owner, filename, contentType string) (core.Asset, string, error) {
	if owner == "" {
		return core.Asset{}, "", errors.New("declare asset: no owner")
	}
	name, err := cleanFilename(filename)
	if err != nil {
		return core.Asset{}, "", err
	}
	ct := mediaType(contentType)
	if _, ok := accepted[ct]; !ok {
		if strings.TrimSpace(contentType) == "" {
			return core.Asset{}, "", core.Invalid("contentType", "is required; accepted: %s", acceptedTypes)
		}
		return core.Asset{}, "", core.Invalid("contentType", "%q is not an accepted image type; accepted: %s", contentType, acceptedTypes)
	}
	now := s.cfg.Now().UTC()
	r := &record{Asset: core.Asset{
		ID: uuid.NewString(), Owner: owner, Kind: core.AssetUpload, Filename: name,
		ContentType: ct, Status: core.AssetPending, CreatedAt: now, UpdatedAt: now,
	}, UploadExpires: s.uploadDeadline(now)}
	if err := s.store.Update(func(tx store.Tx) error { return tx.Put(r) }); err != nil {
		return core.Asset{}, "", fmt.Errorf("declare asset: %w", err)
	}
	s.changed(r.Asset)
	return r.Asset, s.signedAt("PUT", "upload", r.ID, r.UploadExpires), nil
}

// uploadDeadline is when an upload address handed out at now expires (Unix seconds).
func (s *Service) uploadDeadline(now time.Time) int64 {
	return now.Unix() + int64(s.cfg.UploadTTL/time.Second)
}

// signedURL builds /storage/{what}/{id}?exp=&sig= on the base URL.
func (s *Service) signedURL(method, what, id string, ttl float64) string {
	return s.signedAt(method, what, id, s.cfg.Now().Unix()+int64(ttl))
}

// signedAt is signedURL expiring at exp (Unix seconds).
func (s *Service) signedAt(method, what, id string, exp int64) string {
	q := url.Values{}
	q.Set("exp", strconv.FormatInt(exp, 10))
	q.Set("sig", s.signer.Sign(method, id, exp))
	return s.baseURL() + "/storage/" + what + "/" + url.PathEscape(id) + "?" + q.Encode()
}

// UploadURL returns a fresh signed upload address for owner's pending upload, valid
// Config.UploadTTL, and gives the asset as long before it expires unconfirmed. An
// upload whose address already lapsed has failed with upload_expired (Conflict).
func (s *Service) UploadURL(owner, id string) (string, error) {
	now := s.cfg.Now().UTC()
	if err := s.expireUpload(owner, id, now); err != nil {
		return "", err
	}
	exp := s.uploadDeadline(now)
	var out core.Asset
	err := s.store.Update(func(tx store.Tx) error {
		r, err := tx.Owned(owner, id)
		if err != nil {
			return err
		}
		switch {
		case r.Kind != core.AssetUpload:
			return core.Conflict("asset %s is an %s and takes no uploaded bytes", id, r.Kind)
		case r.Status == core.AssetFailed && r.Code == core.CodeUploadExpired:
			return core.Conflict("the upload address of asset %s expired before the upload was confirmed; declare the asset again", id)
		case r.Status != core.AssetPending:
			return core.Conflict("asset %s takes no more bytes (status %s)", id, r.Status)
		}
		r.UploadExpires = max(r.UploadExpires, exp)
		r.UpdatedAt = now
		out = r.Asset
		return tx.Put(r)
	})
	if err != nil {
		return "", err
	}
	s.changed(out)
	return s.signedAt("PUT", "upload", id, exp), nil
}

// DownloadURL returns a signed download address for owner's ready asset and the
// seconds it stays valid.
func (s *Service) DownloadURL(owner, id string) (string, int, error) {
	a, err := s.Get(owner, id)
	if err != nil {
		return "", 0, err
	}
	if a.Status != core.AssetReady {
		return "", 0, core.Conflict("asset %s is %s, not ready; its bytes can be downloaded once it is ready", id, a.Status)
	}
	ttl := s.cfg.DownloadTTL.Seconds()
	return s.signedURL("GET", "download", id, ttl), int(ttl), nil
}

// Upload stores the bytes of a declared, not yet confirmed upload, streaming them
// into a blob while hashing and enforcing the size limit. contentType must be the
// declared one. A second Upload before Confirm replaces the first.
func (s *Service) Upload(id, contentType string, body io.Reader) error {
	_, err := s.upload(id, contentType, body, -1)
	return err
}

// tooLarge is the 413 answer, and the reason ingest reports for the asset.
func (s *Service) tooLargeReason() string {
	return fmt.Sprintf("the file is larger than the upload limit of %s", humanBytes(s.cfg.MaxUploadBytes))
}

func (s *Service) upload(id, contentType string, body io.Reader, length int64) (blobs.Blob, error) {
	// While its bytes arrive the asset does not expire: its address was valid when
	// they started.
	defer s.receiving(id)()
	r, err := s.getRecord(id)
	switch {
	case err != nil:
		return blobs.Blob{}, err
	case r == nil:
		return blobs.Blob{}, core.NotFound("asset %s not found", id)
	case r.Kind != core.AssetUpload:
		return blobs.Blob{}, core.Conflict("asset %s is an %s and takes no uploaded bytes", id, r.Kind)
	case r.Status == core.AssetFailed && r.Code == core.CodeUploadExpired:
		return blobs.Blob{}, core.Conflict("the upload address of asset %s expired before the upload was confirmed; declare the asset again", id)
	case r.Status != core.AssetPending:
		return blobs.Blob{}, core.Conflict("asset %s was already confirmed (status %s); declare a new asset to upload other bytes", id, r.Status)
	}
	declared := r.ContentType
	got := mediaType(contentType)
	if got != declared {
		if got == "" {
			got = "none"
		}
		return blobs.Blob{}, &core.Error{Kind: core.KindUnsupported, Field: "Content-Type",
			Reason: fmt.Sprintf("must be the declared %s, got %s", declared, got)}
	}
	if length > s.cfg.MaxUploadBytes {
		return blobs.Blob{}, s.reject(id)
	}
	w, err := s.blobs.Create(s.cfg.MaxUploadBytes)
	if err != nil {
		return blobs.Blob{}, storageFailure(id, err)
	}
	defer w.Abort()
	src := &sourceReader{r: body}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(writerOnly{s.uploadTo(w)}, src, buf); err != nil {
		var tl *blobs.TooLargeError
		switch {
		case errors.As(err, &tl):
			return blobs.Blob{}, s.reject(id)
		case src.err == nil:
			// Not the sender's fault: the disk refused the bytes.
			return blobs.Blob{}, storageFailure(id, err)
		case isTimeout(src.err):
			return blobs.Blob{}, &StalledError{Idle: idleOf(body)}
		}
		return blobs.Blob{}, &core.Error{Kind: core.KindInvalid, Field: "body", Reason: fmt.Sprintf("upload interrupted: %v", err)}
	}
	var out *core.Asset
	b, err := s.commitBlob(w, func(tx store.Tx, b blobs.Blob, c *blobs.Change) error {
		r, err := found(tx, id)
		if err != nil {
			return err
		}
		if r.Status != core.AssetPending {
			return core.Conflict("asset %s was confirmed while its bytes arrived", id)
		}
		if err := c.Ref(tx, b.Sum); err != nil {
			return err
		}
		if err := c.Unref(tx, r.SHA256); err != nil {
			return err
		}
		r.SHA256, r.Size, r.Rejected = b.Sum, b.Size, ""
		r.UpdatedAt = s.cfg.Now().UTC()
		// Bytes arrived: the client has a whole address lifetime to confirm them.
		r.UploadExpires = max(r.UploadExpires, s.uploadDeadline(r.UpdatedAt))
		out = &r.Asset
		return tx.Put(r)
	})
	if err != nil {
		if core.KindOf(err) == core.KindInternal {
			err = storageFailure(id, err)
		}
		return blobs.Blob{}, err
	}
	s.changed(*out)
	return b, nil
}

// writerOnly hides a writer's other methods so io.CopyBuffer uses its Write.
type writerOnly struct{ io.Writer }

// reject remembers that the last PUT was over the limit (dropping earlier bytes) and
// returns the 413 error.
func (s *Service) reject(id string) error {
	reason := s.tooLargeReason()
	err := released(s.release(func(tx store.Tx, c *blobs.Change) error {
		r, err := tx.Get(id)
		if err != nil || r == nil || r.Status != core.AssetPending {
			return err
		}
		if err := c.Unref(tx, r.SHA256); err != nil {
			return err
		}
		r.SHA256, r.Size, r.Rejected = "", 0, reason
		r.UpdatedAt = s.cfg.Now().UTC()
		r.UploadExpires = max(r.UploadExpires, s.uploadDeadline(r.UpdatedAt))
		return tx.Put(r)
	}))
	if err != nil {
		return fmt.Errorf("upload asset %s: %w", id, err)
	}
	return &core.Error{Kind: core.KindTooLarge, Reason: reason}
}

// Confirm tells the store that owner's upload is complete: the asset moves to
// validating and is queued for ingest in the same transaction. Confirming again
// returns the asset as it is; so does confirming an upload whose address lapsed
// first, which has failed with upload_expired.
func (s *Service) Confirm(owner, id string) (core.Asset, error) {
	// An upload whose address lapsed unconfirmed has failed, whether or not the
	// sweeper has been by.
	if err := s.expireUpload(owner, id, s.cfg.Now().UTC()); err != nil {
		return core.Asset{}, err
	}
	var a core.Asset
	queued := false
	err := s.store.Update(func(tx store.Tx) error {
		r, err := tx.Owned(owner, id)
		if err != nil {
			return err
		}
		a = r.Asset
		if r.Status != core.AssetPending {
			return nil
		}
		if r.Kind != core.AssetUpload {
			return core.Conflict("asset %s is an %s, not an upload", id, r.Kind)
		}
		if r.SHA256 == "" && r.Rejected == "" {
			return core.Conflict("no bytes were uploaded for asset %s: PUT the file to its upload URL first", id)
		}
		r.Status = core.AssetValidating
		r.UpdatedAt = s.cfg.Now().UTC()
		if err := tx.Enqueue(id); err != nil {
			return err
		}
		a = r.Asset
		queued = true
		return tx.Put(r)
	})
	if err != nil {
		return core.Asset{}, err
	}
	if queued {
		s.signal()
		s.changed(a)
	}
	return a, nil
}

// Add declares, uploads and confirms a file in one call, for the hot folders and the
// command line, which hold the bytes themselves. A file over the size limit is still
// confirmed, so its asset fails ingest with file_too_large like an API upload would.
func (s *Service) Add(owner, filename, contentType string, body io.Reader) (core.Asset, error) {
	a, _, err := s.Declare(owner, filename, contentType)
	if err != nil {
		return core.Asset{}, err
	}
	if err := s.Upload(a.ID, contentType, body); err != nil && core.KindOf(err) != core.KindTooLarge {
		s.Delete(owner, a.ID)
		return core.Asset{}, err
	}
	return s.Confirm(owner, a.ID)
}

// humanBytes writes a byte count in decimal units, as limits are configured.
func humanBytes(n int64) string {
	units := []struct {
		size float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "kB"}}
	for _, u := range units {
		if float64(n) >= u.size {
			v := math.Round(float64(n)/u.size*100) / 100
			return strconv.FormatFloat(v, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

// DefaultUploadIdle is how long an upload body may send nothing before the server
// gives up on it.
const DefaultUploadIdle = 30 * time.Second

// StorageOptions tune how StorageHandlerWith receives upload bodies.
type StorageOptions struct {
	// UploadIdle bounds each read of an upload body: a sender that stalls longer is
	// answered 408 and nothing of its bytes is kept. DefaultUploadIdle when 0.
	UploadIdle time.Duration
	// Admit, when set, is asked before an upload body is read, with the key that owns
	// the asset (the signed address carries none). It answers a release to call once
	// the body is read, or a *BusyError, answered 429 with Retry-After.
	Admit func(owner string) (release func(), err error)
	// Logger receives the detail of failures answered 500 or 507; nil: slog.Default().
	Logger *slog.Logger
}

func (o StorageOptions) withDefaults() StorageOptions {
	if o.UploadIdle <= 0 {
		o.UploadIdle = DefaultUploadIdle
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// BusyError refuses an upload for now; Admit returns it.
type BusyError struct {
	Reason     string
	RetryAfter time.Duration
}

func (e *BusyError) Error() string { return e.Reason }

// StalledError reports an upload body that stopped sending bytes (408).
type StalledError struct{ Idle time.Duration }

func (e *StalledError) Error() string {
	idle := "too long"
	if e.Idle > 0 {
		idle = e.Idle.String()
	}
	return fmt.Sprintf("the upload stalled: no bytes arrived for %s; nothing of it was kept, PUT the whole file again", idle)
}

// ErrStorageFull is in the chain of write failures for lack of space (ENOSPC,
// EDQUOT), answered 507.
var ErrStorageFull = errors.New("no space left to store the file")

// storageFailure wraps a write failure of asset id, marking one for lack of space.
func storageFailure(id string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("upload asset %s: %w: %w", id, ErrStorageFull, err)
	}
	return fmt.Errorf("upload asset %s: %w", id, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// sourceReader remembers the sender's read error, to tell it from a write failure.
type sourceReader struct {
	r   io.Reader
	err error
}

func (s *sourceReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// idleReader moves the connection's read deadline before every read, so a body may
// take as long as it needs while bytes keep coming, but may not stall.
type idleReader struct {
	r    io.Reader
	rc   *http.ResponseController // nil where deadlines are not supported
	idle time.Duration
}

func (ir *idleReader) Read(p []byte) (int, error) {
	if ir.rc != nil && ir.rc.SetReadDeadline(time.Now().Add(ir.idle)) != nil {
		ir.rc = nil
	}
	n, err := ir.r.Read(p)
	if err == io.EOF && ir.rc != nil {
		// The whole body is in: the server's own read of the next request must not
		// inherit the deadline. After an error it stays, so nothing waits on the
		// sender any more.
		_ = ir.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

func idleOf(r io.Reader) time.Duration {
	if ir, ok := r.(*idleReader); ok {
		return ir.idle
	}
	return 0
}

// serveUpload receives the body of PUT /storage/upload/{id}, its signature checked.
func (s *Service) serveUpload(w http.ResponseWriter, r *http.Request, id string, opt StorageOptions) {
	release := func() {}
	if opt.Admit != nil {
		a, err := s.Lookup(id)
		if err != nil {
			writeCoreError(w, r, opt.Logger, err)
			return
		}
		if release, err = opt.Admit(a.Owner); err != nil {
			var busy *BusyError
			if !errors.As(err, &busy) {
				writeCoreError(w, r, opt.Logger, err)
				return
			}
			w.Header().Set("Retry-After", strconv.FormatInt(max(1, int64(math.Ceil(busy.RetryAfter.Seconds()))), 10))
			w.Header().Set("Connection", "close") // the body stays unread
			writeError(w, http.StatusTooManyRequests, busy.Reason)
			return
		}
	}
	body := &idleReader{r: r.Body, rc: http.NewResponseController(w), idle: opt.UploadIdle}
	b, err := s.upload(id, r.Header.Get("Content-Type"), body, r.ContentLength)
	// The slot is free before the answer goes out, so a client that has its answer
	// can start the next upload at once.
	release()
	if err != nil {
		if st := httpStatus(err); st == http.StatusRequestEntityTooLarge || st == http.StatusRequestTimeout {
			// Stop reading the rest of an oversized or stalled body.
			w.Header().Set("Connection", "close")
		}
		writeCoreError(w, r, opt.Logger, err)
		return
	}
	w.Header().Set("ETag", `"`+b.Sum+`"`)
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{
		"assetId": id, "size": b.Size, "sha256": b.Sum, "status": core.AssetPending,
	}})
}
