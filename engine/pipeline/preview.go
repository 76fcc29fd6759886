package pipeline

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/adjust"
)

// The preview base is an order's working image just before the sliders (after tone
// and shoot consistency), reduced to adjust.PreviewEdge on its long edge, which the
// window re-renders on every slider move (adjust.NewPreview) without running the
// order again. With Config.PreviewDir set, every order writes it as
// PreviewDir/<order id>.pbase when it reaches the sliders' place, whether or not it
// moves a slider, replacing any earlier one; a failure to write it is logged and
// never fails the order.
//
// The file is a 16-byte header, "PLPB", then format version, width and height as
// little-endian uint32, followed by the pixels as 16-bit sRGB codes, RGB
// interleaved, little-endian: exact enough that exposure +5 on the preview shows no
// banding, and read back with one table lookup a sample. It is written to a
// temporary file, synced and renamed, so a reader sees a whole file or none.

// PreviewExt is the file extension of a preview base.
const PreviewExt = ".pbase"

const (
	previewMagic   = "PLPB"
	previewVersion = 1
	previewHeader  = 16
)

// PreviewBasePath returns where the preview base of orderID lives in dir.
func PreviewBasePath(dir, orderID string) (string, error) {
	if orderID == "" || strings.HasPrefix(orderID, ".") || strings.ContainsAny(orderID, `/\:`) {
		return "", fmt.Errorf("pipeline: order id %q cannot name a preview file", orderID)
	}
	return filepath.Join(dir, orderID+PreviewExt), nil
}

// keepPreviewBase writes the working image as the order's preview base when step i
// is the order's first at or after the sliders' place and Config.PreviewDir is set.
func (p *Pipeline) keepPreviewBase(ctx context.Context, j *Job, steps []Step, i int) {
	if p.cfg.PreviewDir == "" || j.Image == nil {
		return
	}
	_, adj, _ := slotOf(StepAdjust)
	if _, at, _ := slotOf(steps[i].Name); at < adj {
		return
	}
	if i > 0 {
		if _, prev, _ := slotOf(steps[i-1].Name); prev >= adj {
			return
		}
	}
	start := time.Now()
	if err := WritePreviewBase(ctx, p.cfg.PreviewDir, j.OrderID, j.Image); err != nil {
		if ctx.Err() == nil {
			p.cfg.Logger.Warn("pipeline: preview base not kept", "order", j.OrderID, "err", err)
		}
		return
	}
	p.cfg.Logger.Debug("pipeline: preview base kept", "order", j.OrderID, "took", time.Since(start))
}

// WritePreviewBase reduces img to adjust.PreviewEdge and writes it as the preview
// base of orderID in dir (created if missing), replacing any earlier one.
func WritePreviewBase(ctx context.Context, dir, orderID string, img *imaging.Image) error {
	path, err := PreviewBasePath(dir, orderID)
	if err != nil {
		return err
	}
	base, err := adjust.PreviewBase(ctx, img.Widen(), adjust.PreviewEdge)
	if err != nil {
		return err
	}
	w, h := base.W(), base.H()
	buf := make([]byte, previewHeader+w*h*3*2)
	copy(buf, previewMagic)
	binary.LittleEndian.PutUint32(buf[4:], previewVersion)
	binary.LittleEndian.PutUint32(buf[8:], uint32(w))
	binary.LittleEndian.PutUint32(buf[12:], uint32(h))
	imaging.Bands(h, func(_, y0, y1 int) {
		codes := imaging.NarrowLike(w, 1, 3) // one row of codes, encoded exactly
		for y := y0; y < y1; y++ {
			codes.PutLinearRow(0, base.Row(y))
			o := buf[previewHeader+y*w*6:]
			for x, v := range codes.Row16(0) {
				binary.LittleEndian.PutUint16(o[2*x:], v)
			}
		}
	})
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return writeFileAtomic(dir, path, buf)
}

// writeFileAtomic writes data to path through a synced temporary file in dir.
func writeFileAtomic(dir, path string, data []byte) error {
	f, err := os.CreateTemp(dir, ".pbase-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// ErrNoPreviewBase is returned by LoadPreviewBase when the order has none (it has
// not reached the sliders' place yet, or PreviewDir was not set when it ran).
var ErrNoPreviewBase = errors.New("pipeline: no preview base for the order")

// LoadPreviewBase reads the preview base of orderID from dir: a linear-light RGB
// image for adjust.NewPreview.
func LoadPreviewBase(dir, orderID string) (*imaging.Image, error) {
	path, err := PreviewBasePath(dir, orderID)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNoPreviewBase
	}
	if err != nil {
		return nil, err
	}
	return decodePreviewBase(data)
}

func decodePreviewBase(data []byte) (*imaging.Image, error) {
	if len(data) < previewHeader || !bytes.Equal(data[:4], []byte(previewMagic)) {
		return nil, fmt.Errorf("pipeline: not a preview base")
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != previewVersion {
		return nil, fmt.Errorf("pipeline: preview base version %d", v)
	}
	w, h := int(binary.LittleEndian.Uint32(data[8:])), int(binary.LittleEndian.Uint32(data[12:]))
	if w <= 0 || h <= 0 || w > 4*adjust.PreviewEdge || h > 4*adjust.PreviewEdge {
		return nil, fmt.Errorf("pipeline: preview base of %dx%d", w, h)
	}
	if len(data) != previewHeader+w*h*6 {
		return nil, fmt.Errorf("pipeline: preview base cut short: %w", io.ErrUnexpectedEOF)
	}
	img := imaging.New(w, h, 3)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			in := data[previewHeader+y*w*6 : previewHeader+(y+1)*w*6]
			row := img.Row(y)
			for i := range row {
				row[i] = imaging.Decode16(binary.LittleEndian.Uint16(in[2*i:]))
			}
		}
	})
	return img, nil
}

// RemovePreviewBase deletes the preview base of orderID, if any: for when the
// order is deleted.
func RemovePreviewBase(dir, orderID string) error {
	path, err := PreviewBasePath(dir, orderID)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
