package assets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
)

// sniffBytes is how much of a file's head validation reads: enough for codec.Sniff to
// read a TIFF's first IFD and tell a camera RAW from a plain TIFF.
const sniffBytes = 64 << 10

// thumbnailQuality is the JPEG quality of the window's thumbnails.
const thumbnailQuality = 85

// failure is an ingest outcome other than ready.
type failure struct{ code, reason string }

// runIngest takes a confirmed upload through validating and processing to ready or
// failed. It stops between steps when ctx ends, leaving the job queued.
func (s *Service) runIngest(ctx context.Context, j store.Job) {
	r, _ := s.getRecord(j.ID)
	if r == nil || r.Status == core.AssetReady || r.Status == core.AssetFailed || r.Status == core.AssetPending {
		s.dequeue(j) // deleted, or settled before a crash removed its job
		return
	}
	if r.Status != core.AssetValidating { // resumed after a crash: start over
		if !s.setStatus(j, core.AssetValidating, nil) {
			return
		}
	}
	info, fail := s.validate(r)
	if fail != nil {
		s.finishFailed(j, fail.code, fail.reason)
		return
	}
	if ctx.Err() != nil {
		return
	}
	if !s.setStatus(j, core.AssetProcessing, func(rec *record) {
		rec.Format, rec.Width, rec.Height = info.Format, info.Width, info.Height
	}) {
		return
	}
	if s.hookProcessing != nil {
		s.hookProcessing(ctx, j.ID)
	}
	if ctx.Err() != nil {
		return
	}
	kind, w, h, thumb, fail := s.process(ctx, r, info.Format)
	if fail != nil {
		s.finishFailed(j, fail.code, fail.reason)
		return
	}
	if thumb == nil {
		return // ctx ended while the scan waited for memory: the job stays queued
	}
	defer thumb.Abort()
	if ctx.Err() != nil {
		return
	}
	s.finishReady(j, kind, w, h, thumb)
}

// validate checks everything the headers can tell without decoding pixels.
func (s *Service) validate(r *record) (codec.Info, *failure) {
	switch {
	case r.Rejected != "":
		return codec.Info{}, &failure{core.CodeFileTooLarge, r.Rejected}
	case r.Size == 0:
		return codec.Info{}, &failure{core.CodeEmptyFile, "the uploaded file is empty"}
	case r.Size > s.cfg.MaxUploadBytes:
		return codec.Info{}, &failure{core.CodeFileTooLarge, s.tooLargeReason()}
	}
	f, err := s.blobs.Open(r.SHA256)
	if err != nil {
		return codec.Info{}, &failure{core.CodeUnreadable, "the uploaded bytes could not be read back"}
	}
	defer f.Close()
	head := make([]byte, min(r.Size, sniffBytes))
	if _, err := f.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return codec.Info{}, &failure{core.CodeUnreadable, "the uploaded bytes could not be read back"}
	}
	format := codec.Sniff(head)
	if format == "" {
		reason := "the file is not a JPEG, PNG, WebP, TIFF, HEIC or camera RAW image"
		if _, err := codec.Probe(f, r.Size); codec.CodeOf(err) == core.CodeUnsupportedFormat {
			reason = codecReason(err)
		}
		return codec.Info{}, &failure{core.CodeUnsupportedFormat, reason}
	}
	// Probe reads past the head where needed (a RAW's SubIFDs), so its answer decides
	// the format; the sniffed one stands in when the headers are damaged.
	info, perr := codec.Probe(f, r.Size)
	rawKind := codec.SniffRaw(head)
	if perr == nil {
		format, rawKind = info.Format, info.RawKind
	}
	if !matchesDeclared(r.ContentType, format, rawKind) {
		what := formatNames[format]
		if rawKind != "" && rawKind != "raw" {
			what = fmt.Sprintf("camera RAW (%s)", strings.ToUpper(rawKind))
		}
		return codec.Info{}, &failure{core.CodeContentTypeMismatch,
			fmt.Sprintf("declared as %s but the file is a %s image", r.ContentType, what)}
	}
	if perr != nil {
		return codec.Info{}, codecFailure(perr)
	}
	if px := int64(info.Width) * int64(info.Height); px > s.cfg.MaxPixels {
		return codec.Info{}, &failure{core.CodeResolutionTooLarge,
			fmt.Sprintf("%dx%d is %.1f megapixels, over the limit of %.1f", info.Width, info.Height,
				float64(px)/1e6, float64(s.cfg.MaxPixels)/1e6)}
	}
	return info, nil
}

// codecFailure turns a codec error into an ingest failure.
func codecFailure(err error) *failure {
	code := codec.CodeOf(err)
	switch code {
	case core.CodeEmptyFile, core.CodeUnsupportedFormat, core.CodeUnreadable, core.CodeResolutionTooLarge:
	default:
		code = core.CodeUnreadable
	}
	return &failure{code, codecReason(err)}
}

func codecReason(err error) string {
	var ce *codec.Error
	if errors.As(err, &ce) && ce.Reason != "" {
		return ce.Reason
	}
	return err.Error()
}

// process proves the whole image readable, tells masks from images and writes the
// thumbnail into an uncommitted blob. codec.Scan holds a reduced copy of the frame at
// most, never a full-size one, so a small upload declaring a huge frame costs little
// memory; what a larger scan does hold is charged to the memory budget first (see
// smallScan).
func (s *Service) process(ctx context.Context, r *record, format string) (kind core.AssetKind, w, h int, thumb *blobs.Writer, fail *failure) {
	f, err := s.blobs.Open(r.SHA256)
	if err != nil {
		return "", 0, 0, nil, &failure{core.CodeUnreadable, "the uploaded bytes could not be read back"}
	}
	sc, err := codec.Scan(f, r.Size, codec.ScanOptions{
		MaxPixels: s.cfg.MaxPixels,
		MaxEdge:   s.cfg.ThumbnailEdge,
		Reserve:   func(need int64) (func(), error) { return s.reserveScan(ctx, need) },
	})
	f.Close()
	if err != nil {
		if ctx.Err() != nil {
			return "", 0, 0, nil, nil // stopping: the job stays queued
		}
		return "", 0, 0, nil, codecFailure(err)
	}
	kind = core.AssetUpload
	if format == codec.FormatPNG && sc.Mask {
		kind = core.AssetMask
	}
	thumb, err = s.writeThumbnail(sc.Preview)
	if err != nil {
		return "", 0, 0, nil, &failure{core.CodeUnreadable, fmt.Sprintf("making the thumbnail failed: %v", err)}
	}
	return kind, sc.Info.Width, sc.Info.Height, thumb, nil
}

// smallScan is the most a scan holds without being charged to the memory budget:
// most hold a few rows and the reduced sums (tens of MB at most), and two ingest
// workers bound those like request buffers. A scan that holds more (a progressive
// JPEG's coefficients, a lossless WebP, a whole HEIC image, a RAW development) is
// charged what its headers declare to the budget orders and exports share, so it
// waits its turn there, and one over the whole budget fails as resolution_too_large.
const smallScan = 64 << 20

// reserveScan is codec.ScanOptions.Reserve for ingest.
func (s *Service) reserveScan(ctx context.Context, need int64) (func(), error) {
	if need <= smallScan {
		return func() {}, nil
	}
	charge := membudget.Bound(need)
	release, err := s.cfg.Memory.Hold(ctx, charge)
	if errors.Is(err, membudget.ErrTooLarge) {
		return nil, &codec.Error{Code: core.CodeResolutionTooLarge, Reason: fmt.Sprintf(
			"decoding this file needs about %s of memory, more than the whole memory budget of %s; raise engine.memory_mb in the configuration",
			membudget.MB(charge), membudget.MB(s.cfg.Memory.Size()))}
	}
	return release, err
}

// finishReady commits the thumbnail and settles the asset as ready in one
// transaction with its dequeue.
func (s *Service) finishReady(j store.Job, kind core.AssetKind, w, h int, thumb *blobs.Writer) {
	s.finishBlob(j, thumb, "thumbnail", func(r *record, tb blobs.Blob) {
		r.Kind, r.Width, r.Height, r.Thumbnail = kind, w, h, tb.Sum
	})
}

// finishBlob commits the blob a job made (what names it in a failure) and, in one
// transaction with the job's dequeue, references it from the asset, still
// processing, which set edits, and settles the asset as ready. A blob that cannot be
// stored fails the asset.
func (s *Service) finishBlob(j store.Job, w *blobs.Writer, what string, set func(r *record, b blobs.Blob)) {
	var out *core.Asset
	_, err := s.commitBlob(w, func(tx store.Tx, b blobs.Blob, c *blobs.Change) error {
		if err := tx.Done(j.Key); err != nil {
			return err
		}
		r, err := tx.Get(j.ID)
		if err != nil || r == nil || r.Status != core.AssetProcessing {
			return err
		}
		if err := c.Ref(tx, b.Sum); err != nil {
			return err
		}
		set(r, b)
		r.Status, r.Code, r.Reason = core.AssetReady, "", ""
		r.UpdatedAt = s.cfg.Now().UTC()
		out = &r.Asset
		return tx.Put(r)
	})
	var failed *blobs.WriteError
	if errors.As(err, &failed) {
		s.finishFailed(j, core.CodeUnreadable, fmt.Sprintf("storing the %s failed: %v", what, failed))
		return
	}
	if err == nil && out != nil {
		s.changed(*out)
	}
}

// Thumbnail opens the JPEG thumbnail of owner's ready asset (longest edge at most
// Config.ThumbnailEdge). Outputs and exports get theirs on first request.
func (s *Service) Thumbnail(owner, id string) (File, error) {
	a, err := s.Get(owner, id)
	if err != nil {
		return nil, err
	}
	if a.Status != core.AssetReady {
		return nil, core.Conflict("asset %s is %s, not ready", id, a.Status)
	}
	var sum string
	if r, _ := s.getRecord(id); r != nil {
		sum = r.Thumbnail
	}
	if sum == "" {
		if sum, err = s.makeThumbnail(id, a); err != nil {
			return nil, err
		}
	}
	f, err := s.blobs.Open(sum)
	if errors.Is(err, os.ErrNotExist) {
		return nil, core.NotFound("asset %s not found", id)
	}
	return f, err
}

// makeThumbnail reads a ready asset at thumbnail scale (an embedded EXIF thumbnail or
// a reduced decode) and stores its thumbnail.
func (s *Service) makeThumbnail(id string, a core.Asset) (string, error) {
	f, err := s.blobs.Open(a.SHA256)
	if err != nil {
		return "", core.NotFound("asset %s not found", id)
	}
	img, err := codec.Thumbnail(f, a.Size, s.cfg.ThumbnailEdge)
	f.Close()
	if err != nil {
		return "", fmt.Errorf("thumbnail of asset %s: %w", id, err)
	}
	w, err := s.writeThumbnail(img)
	if err != nil {
		return "", fmt.Errorf("thumbnail of asset %s: %w", id, err)
	}
	var sum string
	_, err = s.commitBlob(w, func(tx store.Tx, tb blobs.Blob, c *blobs.Change) error {
		r, err := found(tx, id)
		if err != nil {
			return err
		}
		if r.Thumbnail != "" { // made concurrently
			sum = r.Thumbnail
			return nil
		}
		if err := c.Ref(tx, tb.Sum); err != nil {
			return err
		}
		r.Thumbnail, sum = tb.Sum, tb.Sum
		return tx.Put(r)
	})
	var failed *blobs.WriteError
	if errors.As(err, &failed) {
		return "", fmt.Errorf("thumbnail of asset %s: %w", id, err)
	}
	return sum, err
}
