package assets

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/google/uuid"
	"github.com/porchlight/porchlight/assets/blobs"
	"github.com/porchlight/porchlight/assets/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
)

// Export limits (spec: max_edge 16 to 10000, quality 1 to 100).
const (
	MinExportEdge = 16
	MaxExportEdge = 10000
)

// NormalizeExport validates opt and fills defaults: quality 92 when 0.
func NormalizeExport(opt core.ExportOptions) (core.ExportOptions, error) {
	opt.Format = strings.ToLower(strings.TrimSpace(opt.Format))
	if opt.Format == "" {
		return opt, core.Invalid("format", "is required: jpeg, png or webp")
	}
	if _, ok := exportTypes[opt.Format]; !ok {
		return opt, core.Invalid("format", "%q is not one of jpeg, png, webp", opt.Format)
	}
	if opt.Quality == 0 {
		opt.Quality = DefaultExportQuality
	}
	if opt.Quality < 1 || opt.Quality > 100 {
		return opt, core.Invalid("quality", "%d is outside 1 to 100", opt.Quality)
	}
	if opt.MaxEdge != 0 && (opt.MaxEdge < MinExportEdge || opt.MaxEdge > MaxExportEdge) {
		return opt, core.Invalid("max_edge", "%d is outside %d to %d pixels", opt.MaxEdge, MinExportEdge, MaxExportEdge)
	}
	return opt, nil
}

// effectiveEdge drops a max_edge that would not shrink a w×h source, so requests that
// would produce the same file share one export: a max_edge at or above the source's
// longest edge keeps the source size like no max_edge. (The export index leaves out
// a PNG's quality likewise.)
func effectiveEdge(maxEdge, w, h int) int {
	if maxEdge >= max(w, h) && w > 0 && h > 0 {
		return 0
	}
	return maxEdge
}

// Export asks for a repackaging of owner's asset sourceID. The source must be an
// order output or a ready image upload (not camera RAW, a mask or another export).
// The same source and options give the same export while it is pending, processing or
// ready (created false); asking again after it failed starts a new attempt under the
// same id (created true). The export is produced in the background.
func (s *Service) Export(owner, sourceID string, opt core.ExportOptions) (core.Asset, bool, error) {
	opt, err := NormalizeExport(opt)
	if err != nil {
		return core.Asset{}, false, err
	}
	var out core.Asset
	created := false
	err = s.store.Update(func(tx store.Tx) error {
		src, err := tx.Owned(owner, sourceID)
		if err != nil {
			return err
		}
		if err := exportable(src); err != nil {
			return err
		}
		stored := opt
		stored.MaxEdge = effectiveEdge(opt.MaxEdge, src.Width, src.Height)
		now := s.cfg.Now().UTC()
		if id := tx.Export(src.ID, stored); id != "" {
			r, err := tx.Get(id)
			if err != nil {
				return err
			}
			if r != nil && r.Status != core.AssetFailed {
				out = r.Asset
				return nil
			}
			if r != nil { // failed: try again under the same id
				r.Status, r.Code, r.Reason, r.UpdatedAt = core.AssetPending, "", "", now
				if err := tx.Enqueue(r.ID); err != nil {
					return err
				}
				out, created = r.Asset, true
				return tx.Put(r)
			}
		}
		t := exportTypes[stored.Format]
		r := &record{Asset: core.Asset{
			ID: uuid.NewString(), Owner: owner, Kind: core.AssetExport,
			Filename:    strings.TrimSuffix(src.Filename, filepath.Ext(src.Filename)) + t.ext,
			ContentType: t.mime, Status: core.AssetPending, Format: stored.Format,
			Source: src.ID, Export: &stored, CreatedAt: now, UpdatedAt: now,
		}}
		if err := tx.Put(r); err != nil {
			return err
		}
		if err := tx.SetExport(src.ID, stored, r.ID); err != nil {
			return err
		}
		out, created = r.Asset, true
		return tx.Enqueue(r.ID)
	})
	if err != nil {
		return core.Asset{}, false, err
	}
	if created {
		s.signal()
		s.changed(out)
	}
	return out, created, nil
}

// exportable says why a record cannot be an export source.
func exportable(src *record) error {
	switch {
	case src.Kind == core.AssetExport:
		return core.Invalid("assetId", "asset %s is an export; export from its source %s instead", src.ID, src.Source)
	case src.Kind == core.AssetMask:
		return core.Invalid("assetId", "asset %s is a mask; only images and order outputs can be exported", src.ID)
	case src.Status != core.AssetReady:
		return core.Conflict("asset %s is %s; it can be exported once it is ready", src.ID, src.Status)
	case src.Format == codec.FormatRaw:
		return core.Invalid("assetId", "asset %s is a camera RAW file; develop it through an order and export the order's output", src.ID)
	}
	return nil
}

// runExport produces an export: decode (scaled at decode time when that is cheaper),
// a gamma-correct Lanczos downscale to the exact size, and an encode carrying the
// source's metadata under the GPS policy.
func (s *Service) runExport(ctx context.Context, j store.Job) {
	var r, src *record
	s.store.View(func(tx store.Tx) error {
		r, _ = tx.Get(j.ID)
		if r != nil {
			src, _ = tx.Get(r.Source)
		}
		return nil
	})
	if r == nil || r.Export == nil || r.Status == core.AssetReady || r.Status == core.AssetFailed {
		s.dequeue(j)
		return
	}
	if src == nil || src.Status != core.AssetReady || src.SHA256 == "" {
		s.finishFailed(j, core.CodeUnreadable, "the source asset was deleted before the export was made")
		return
	}
	// Charged to the budget orders share; it waits while pending, and one that could
	// never fit fails instead of running past the budget.
	mem := s.cfg.Memory
	est := s.exportMemory(src, *r.Export)
	if err := mem.Acquire(ctx, est); err != nil {
		if errors.Is(err, membudget.ErrTooLarge) {
			s.finishFailed(j, core.CodeResolutionTooLarge, exportTooLarge(src.Asset, *r.Export, est, mem.Size()))
		}
		return // otherwise ctx ended: the job stays queued for the next Serve
	}
	held := true
	release := func() {
		if held {
			held = false
			mem.Release(est)
		}
	}
	defer release()
	if !s.setStatus(j, core.AssetProcessing, nil) {
		return
	}
	w, width, height, err := s.encodeExport(src, *r.Export)
	// The pixels are gone once encoded: storing the file needs no budget, and the
	// budget is free again before the export is announced ready.
	release()
	if err != nil {
		f := codecFailure(err)
		s.finishFailed(j, f.code, "the export could not be made: "+f.reason)
		return
	}
	defer w.Abort()
	if ctx.Err() != nil {
		return
	}
	s.finishBlob(j, w, "export", func(r *record, b blobs.Blob) {
		r.SHA256, r.Size, r.Width, r.Height = b.Sum, b.Size, width, height
	})
}

// What an export holds at once, in bytes a pixel; they follow the pipeline's memory
// estimate, which measured them on real photos.
const (
	exportFloatPx  = 16    // a decoded float32 pixel, alpha included
	exportJPEGPx   = 6 + 4 // libjpeg's coefficient buffer (progressive files) and output bytes
	exportOtherPx  = 36    // the other decoders at their peak, the float image included
	exportEncodePx = 12    // the encoder's 8- or 16-bit copy and buffers beside the image
)

// exportMemory is ExportMemory for a stored source, with a JPEG's headers read.
func (s *Service) exportMemory(src *record, opt core.ExportOptions) int64 {
	var info *codec.Info
	if src.Format == codec.FormatJPEG {
		if f, err := s.blobs.Open(src.SHA256); err == nil {
			if in, err := codec.Probe(f, src.Size); err == nil {
				info = &in
			}
			f.Close()
		}
	}
	return ExportMemory(src.Asset, info, opt)
}

// ExportMemory bounds what an export of src with opt holds at once, the bytes it is
// charged against the memory budget: the decode (for a JPEG made smaller, at reduced
// DCT scale and resampled while converting), the resample to the exact size and the
// encode, with membudget's headroom. info is the source's headers when read; without
// them a JPEG is assumed to need turning upright.
func ExportMemory(src core.Asset, info *codec.Info, opt core.ExportOptions) int64 {
	w, h := int64(src.Width), int64(src.Height)
	px := w * h
	ow, oh := int64(src.Width), int64(src.Height)
	if opt.MaxEdge > 0 {
		a, b := imaging.FitWithin(src.Width, src.Height, opt.MaxEdge)
		ow, oh = int64(a), int64(b)
	}
	out := ow * oh
	// The first pass of a resample: the result's width by the source's height (or the
	// other way round), bounded for either orientation.
	tmp := max(ow, oh) * max(w, h)
	var decode int64
	switch src.Format {
	case codec.FormatJPEG:
		rotated := info == nil || info.Orientation >= 2
		decode = exportJPEGPx * px
		if out < px {
			decode += exportFloatPx * (tmp + out)
		} else {
			decode += exportFloatPx * px
		}
		if rotated {
			decode += exportFloatPx * out // the upright copy
		}
	default:
		decode = exportOtherPx * px
		if out < px {
			decode += exportFloatPx * (tmp + out)
		}
	}
	live := max(src.Size+decode, (exportFloatPx+exportEncodePx)*out)
	return membudget.Bound(live)
}

// exportTooLarge explains an export that can never fit the memory budget.
func exportTooLarge(src core.Asset, opt core.ExportOptions, est, budget int64) string {
	size := "at full size"
	if opt.MaxEdge > 0 {
		size = fmt.Sprintf("within %d pixels", opt.MaxEdge)
	}
	return fmt.Sprintf("the export of a %dx%d image %s needs about %s of memory, more than the whole memory budget of %s; "+
		"raise engine.memory_mb in the configuration (0 takes a share of the memory available at start)",
		src.Width, src.Height, size, membudget.MB(est), membudget.MB(budget))
}

// encodeExport writes the export of src into an uncommitted blob.
func (s *Service) encodeExport(src *record, opt core.ExportOptions) (*blobs.Writer, int, int, error) {
	f, err := s.blobs.Open(src.SHA256)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("open source: %w", err)
	}
	defer f.Close()
	w, err := s.blobs.Create(0)
	if err != nil {
		return nil, 0, 0, err
	}
	width, height, err := Repackage(f, src.Size, opt, s.cfg.KeepGPS, w)
	if err != nil {
		w.Abort()
		return nil, 0, 0, err
	}
	return w, width, height, nil
}

// Repackage decodes an image, fits it within opt.MaxEdge (never enlarging) and encodes
// it in opt.Format at opt.Quality, keeping the photographer's metadata (GPS only with
// keepGPS). It is the whole of an export; the `export` command calls it on files.
func Repackage(r io.ReaderAt, size int64, opt core.ExportOptions, keepGPS bool, w io.Writer) (width, height int, err error) {
	opt, err = NormalizeExport(opt)
	if err != nil {
		return 0, 0, err
	}
	img, meta, err := codec.Decode(r, size, codec.DecodeOptions{MaxPixels: -1, ScaleToMaxEdge: opt.MaxEdge})
	if err != nil {
		return 0, 0, err
	}
	if opt.MaxEdge > 0 {
		// The decoder may stop at a scale above the target (JPEG DCT scaling); finish
		// with the high-quality resampler.
		if tw, th := imaging.FitWithin(img.W(), img.H(), opt.MaxEdge); tw != img.W() || th != img.H() {
			img = imaging.Resize(img, tw, th)
		}
	}
	if err := codec.Encode(w, img, codec.EncodeOptions{Format: opt.Format, Quality: opt.Quality, Meta: &meta, KeepGPS: keepGPS}); err != nil {
		return 0, 0, err
	}
	return img.W(), img.H(), nil
}
