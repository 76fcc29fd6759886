package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// Painted masks are kept in the data folder, one PNG per photo painted on (white
// marks what to erase, black keeps it: the format the API's mask input takes), and
// each saved mask is also added to the asset store so a scene's options can name it.

// maskDir is the folder the window keeps painted masks in.
func (w *Window) maskDir() string {
	dir := w.deps.DataDir
	if dir == "" && w.cfg.File() != "" {
		dir = filepath.Dir(w.cfg.File())
	}
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "porchlight")
	}
	return filepath.Join(dir, "masks")
}

// maskPath is where the mask painted on a photo is kept; key names the photo (a
// bracket's path, or "asset:" and a result's id), so reopening the brush on the same
// photo finds it again.
func (w *Window) maskPath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(w.maskDir(), hex.EncodeToString(sum[:10])+".png")
}

// maskImage is the mask as a 1-bit PNG image: palette black (keep) and white (erase).
func maskImage(m *paintMask) *image.Paletted {
	img := image.NewPaletted(image.Rect(0, 0, m.w, m.h), color.Palette{color.Gray{0}, color.Gray{255}})
	for i, v := range m.pix {
		if v != 0 {
			img.Pix[i] = 1
		}
	}
	return img
}

// writeMaskPNG writes the mask to path: a temporary file beside it, synced, then
// renamed over it, so a crash never leaves half a mask.
func writeMaskPNG(path string, m *paintMask) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return writeFileAtomic(path, 0o600, func(w io.Writer) error { return enc.Encode(w, maskImage(m)) })
}

// readMaskPNG reads a mask PNG as the engine does (codec.DecodeMask: coverage above
// 0.5 erases) into a w×h paint mask. A mask of another size is scaled by nearest
// neighbour when the aspect ratios agree within 1 %, as the engine does; otherwise it
// was drawn for another photo and is refused. A missing file returns fs.ErrNotExist.
func readMaskPNG(path string, w, h int) (*paintMask, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	dec, err := codec.DecodeMask(f, st.Size())
	if err != nil {
		return nil, err
	}
	return paintMaskFrom(dec, w, h)
}

// paintMaskFrom thresholds a decoded one-channel mask at 0.5, scaled to w×h.
func paintMaskFrom(dec *imaging.Image, w, h int) (*paintMask, error) {
	mw, mh := dec.W(), dec.H()
	if mw != w || mh != h {
		if d := float64(mw)*float64(h)/(float64(mh)*float64(w)) - 1; d > 0.01 || d < -0.01 {
			return nil, fmt.Errorf("the mask is %dx%d but the photo is %dx%d", mw, mh, w, h)
		}
	}
	m := newPaintMask(w, h)
	for y := range h {
		src := dec.Row(min(mh-1, (2*y+1)*mh/(2*h)))
		row := m.pix[y*w : (y+1)*w]
		for x := range row {
			if src[min(mw-1, (2*x+1)*mw/(2*w))] > 0.5 {
				row[x] = 255
			}
		}
	}
	return m, nil
}

// loadPaintedMask is the mask to start the brush with on a photo of w×h: the PNG kept
// for it, else the scene's mask asset (one chosen as a file), else none (nil).
func (w *Window) loadPaintedMask(key, assetID string, width, height int) (*paintMask, error) {
	m, err := readMaskPNG(w.maskPath(key), width, height)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || assetID == "" {
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return m, err
	}
	f, rec, err := w.deps.Assets.Open(assetID)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dec, err := codec.DecodeMask(f, rec.Size)
	if err != nil {
		return nil, err
	}
	return paintMaskFrom(dec, width, height)
}

// storeMask writes the mask for the photo named key to the data folder and adds it
// to the asset store; it returns once the asset is ready (or failed), off the UI
// goroutine.
func (w *Window) storeMask(key string, m *paintMask) (string, core.Asset, error) {
	path := w.maskPath(key)
	if err := writeMaskPNG(path, m); err != nil {
		return path, core.Asset{}, fmt.Errorf("writing the mask: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return path, core.Asset{}, err
	}
	a, err := w.deps.Assets.Add(w.owner, "mask.png", "image/png", f)
	f.Close()
	// Ingest is quick for a mask; the options may name it only once it is ready.
	for err == nil && a.Status != core.AssetReady && a.Status != core.AssetFailed {
		select {
		case <-w.ctx.Done():
			return path, a, w.ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		a, err = w.deps.Assets.Get(w.owner, a.ID)
	}
	if err == nil && a.Status == core.AssetFailed {
		err = fmt.Errorf("the mask was refused: %s", a.Reason)
	}
	return path, a, err
}
