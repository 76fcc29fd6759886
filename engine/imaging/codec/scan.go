package codec

import (
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Scan is how ingest reads an upload: it proves the whole file decodes and returns a
// small preview, holding a reduced copy of the frame at most, never a full-size one.
//
// What each format holds at its peak (Need reports it, from the headers, before any
// pixel is decoded):
//
//   - PNG and TIFF stream row by row (strip by strip, tile by tile) into a box
//     reduction: a few rows and the reduced sums, a few MB whatever the frame size.
//   - JPEG decodes at 1/2, 1/4 or 1/8 scale in libjpeg (DCT scaling, to at least
//     twice the preview size), 16 rows at a time, from the file held in memory. A
//     baseline file needs a few rows of state; a progressive or multi-scan one keeps
//     every DCT coefficient until its last scan (2 bytes a sample: 360 MB for 120 MP
//     at 4:2:0), and libjpeg's memory cap is set to that figure, so a file cannot take
//     more than its headers declare.
//   - WebP decodes through libwebp's scaled output, from the file held in memory.
//     Lossy data is decoded a macroblock row at a time (plus the alpha plane, a byte a
//     pixel); lossless (VP8L) data may be held whole, up to 4 bytes a pixel.
//   - HEIC decodes in the WebAssembly libheif, which has no reduced decode and holds
//     about 22 bytes a pixel at its peak. A grid (what phones write) is decoded one
//     tile at a time, so it holds one tile's worth (6 MB for 512×512); a single image
//     is decoded whole and is refused above HEVC's largest picture (35.6 MP, under
//     800 MB at the peak). Only rows are converted on the Go side.
//   - Camera RAW develops at half size in the LibRaw worker process, which holds the
//     raw data and the half-size image (about 6 bytes a pixel) and exits afterwards;
//     this process receives the developed rows one at a time.
//
// Truncated or corrupt data fails as unreadable, as early as the decoder can tell:
// a JPEG scan that ends before its frame stops at its first missing block.

// ScanOptions bound a Scan.
type ScanOptions struct {
	// MaxPixels refuses larger images (resolution_too_large) from their headers, as in
	// DecodeOptions.
	MaxPixels int64
	// MaxEdge is the longest edge of the preview; 0 means 512.
	MaxEdge int
	// Reserve, when set, is called after the headers are read and before any pixel is
	// decoded with the bytes the scan will hold at its peak; the scan waits for it and
	// calls the returned release when done. An error from Reserve ends the scan.
	Reserve func(need int64) (release func(), err error)
}

// Scanned is what a Scan found.
type Scanned struct {
	Info Info
	// Preview is the image fitted within MaxEdge: upright, linear-light sRGB, with a
	// 4th channel when some pixel is not opaque.
	Preview *imaging.Image
	// Mask reports a PNG that is white on transparent: some pixel mostly transparent
	// and every visible pixel white (the magic eraser's mask format).
	Mask bool
	// Need is the peak memory the scan declared to Reserve.
	Need int64
}

// defaultScanEdge is the preview edge when ScanOptions.MaxEdge is 0.
const defaultScanEdge = 512

// Scan reads every byte of the image data of a file, failing as Decode would on a
// damaged one, while holding only a reduced copy of the frame; see the notes above
// for what each format holds.
func Scan(r io.ReaderAt, size int64, opt ScanOptions) (*Scanned, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	max := DecodeOptions{MaxPixels: opt.MaxPixels}.maxPixels()
	if int64(h.width)*int64(h.height) > max {
		return nil, tooLarge(h.width, h.height, max)
	}
	edge := opt.MaxEdge
	if edge <= 0 {
		edge = defaultScanEdge
	}
	out := &Scanned{Info: h.info(), Need: h.scanNeed(size, edge)}
	if opt.Reserve != nil {
		release, err := opt.Reserve(out.Need)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	img, mask, err := h.scan(r, size, edge)
	if err != nil {
		return nil, err
	}
	out.Preview, out.Mask = h.finishPreview(img, edge), mask
	return out, nil
}

// storedTarget is the preview size in the decoder's own orientation.
func (h *header) storedTarget(edge int) (int, int) {
	if h.rotated {
		return imaging.FitWithin(h.width, h.height, edge)
	}
	return fitStored(h.width, h.height, h.orientation, edge)
}

// finishPreview turns a reduced image in stored orientation into the preview: upright
// and the photo's own size fitted within edge (the reduction's factors may differ per
// axis, so the reduced image's shape is not the photo's).
func (h *header) finishPreview(img *imaging.Image, edge int) *imaging.Image {
	if !h.rotated {
		img = Orient(img, h.orientation)
	}
	in := h.info()
	if w, ht := imaging.FitWithin(in.Width, in.Height, edge); w != img.W() || ht != img.H() {
		img = imaging.Resize(img, w, ht)
	}
	return img
}

// profileMatrix finishes a colour conversion whose tone curves the decoder already
// applied: the matrix is linear, so it commutes with the box reduction and runs on the
// small image.
func profileMatrix(img *imaging.Image, h *header) {
	if p := fitting(h); p != nil && p.converts() {
		applyMatrix(img, p.matrixToSRGB())
	}
	h.profileDone = true
}

// scanNeed estimates from the headers the peak bytes a scan of the file holds.
func (h *header) scanNeed(size int64, edge int) int64 {
	const base = 8 << 20 // tables, scratch, the final resize
	tw, th := h.storedTarget(edge)
	px := int64(h.width) * int64(h.height)
	need := base + reducerBytes(h.width, h.height, tw, th, 4)
	w := int64(h.width)
	switch h.format {
	case FormatPNG, FormatTIFF:
		need += w * (8 + 8 + 16) // current and previous raw rows, one linear row
	case FormatJPEG:
		d := int64(jpegScale(h.width, h.height, 2*edge))
		need += size + jpegCoefBytes(h.jpeg) + 16*(w/d+1)*4 + (w/d+1)*12
	case FormatWebP:
		need += size + webpHeld(h) + reducerBytes(h.width, h.height, tw, th, 4)
	case FormatHEIC:
		if g := h.heicGrid; g != nil && !h.hasAlpha {
			need += heicWholePerPixel*int64(g.tileW)*int64(g.tileH) + 3*g.maxTileBytes
		} else {
			need += 3*size + heicWholePerPixel*px
		}
	case FormatRaw:
		need += 2*size + px*6
	}
	return need
}

// scan decodes the whole file into a reduced image in stored orientation, its colour
// converted to sRGB primaries.
func (h *header) scan(r io.ReaderAt, size int64, edge int) (*imaging.Image, bool, error) {
	tw, th := h.storedTarget(edge)
	switch h.format {
	case FormatPNG:
		return scanPNG(r, size, h, tw, th)
	case FormatJPEG:
		img, err := scanJPEGPixels(r, size, h, tw, th, edge)
		return img, false, err
	case FormatTIFF:
		img, err := scanTIFF(r, size, h, tw, th)
		return img, false, err
	case FormatWebP:
		img, err := scanWebP(r, size, h, tw, th)
		return img, false, err
	case FormatHEIC:
		img, err := scanHEIC(r, size, h, edge)
		return img, false, err
	case FormatRaw:
		img, err := scanRaw(r, size, h, tw, th, edge)
		return img, false, err
	}
	return nil, false, unsupported("cannot scan %s", h.format)
}

func scanPNG(r io.ReaderAt, size int64, h *header, tw, th int) (*imaging.Image, bool, error) {
	c := 3
	if h.hasAlpha {
		c = 4
	}
	red := newReducer(h.width, h.height, tw, th, c == 4)
	var judge maskJudge
	err := streamPNG(r, size, h, c, func(y, x0, step int, px []float32) {
		if c == 4 {
			judge.row(px)
		}
		red.add(y, x0, step, px)
	})
	if err != nil {
		return nil, false, err
	}
	img := red.image()
	profileMatrix(img, h)
	return img, c == 4 && judge.isMask(), nil
}

// jpegCoefBytes is the coefficient buffer libjpeg allocates for a progressive or
// multi-scan file (0 for a single-scan sequential one): every block of every
// component, 64 coefficients of 2 bytes, rounded up to whole MCUs.
func jpegCoefBytes(j *jpegHeader) int64 {
	if j == nil || (!j.progressive && j.scanComps >= j.components) {
		return 0
	}
	hmax, vmax := 1, 1
	for _, c := range j.sampling[:j.components] {
		hmax, vmax = max(hmax, c[0]), max(vmax, c[1])
	}
	var n int64
	for _, c := range j.sampling[:j.components] {
		bw := roundUp(ceilDiv(ceilDiv(j.width*c[0], hmax), 8), c[0])
		bh := roundUp(ceilDiv(ceilDiv(j.height*c[1], vmax), 8), c[1])
		n += int64(bw) * int64(bh) * 128
	}
	return n
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(a, b int) int { return ceilDiv(a, max(b, 1)) * max(b, 1) }

// scanJPEGPixels decodes at the DCT scale nearest the preview and streams 16 rows at a time
// through the reduction. libjpeg's memory is capped at what the headers declare.
func scanJPEGPixels(r io.ReaderAt, size int64, h *header, tw, th, edge int) (*imaging.Image, error) {
	if h.bitDepth != 8 {
		return nil, unsupported("%d-bit JPEG is not supported", h.bitDepth)
	}
	buf, err := readAll(r, size)
	if err != nil {
		return nil, err
	}
	// Twice the preview size leaves the final resize room to filter: 1/8 scale is an
	// 8x8 average of sRGB codes, coarse straight at the preview size.
	d, err := openJPEG(buf, jpegScale(h.width, h.height, 2*edge), jpegCoefBytes(h.jpeg)+jpegWorkBytes(h.jpeg))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	sw, sh, nch := d.w, d.h, d.nc
	p := fitting(h)
	lut := linearLUT8(p)
	inverted := h.jpeg != nil && h.jpeg.adobe
	// The reduction is sized from the scaled frame: its target in scaled pixels.
	red := newReducer(sw, sh, min(tw, sw), min(th, sh), false)
	const batch = 16
	rows := make([]byte, batch*sw*nch)
	line := make([]float32, sw*3)
	for y := 0; y < sh; {
		n, err := d.read(rows[:min(batch, sh-y)*sw*nch], sw*nch)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, unreadable(nil, "the JPEG ended after %d of its %d rows", y, sh)
		}
		for i := 0; i < n; i++ {
			src := rows[i*sw*nch : (i+1)*sw*nch]
			if nch == 4 {
				cmykRowToLinear(src, line, inverted)
			} else {
				row8ToLinear(src, nch, line, 3, lut)
			}
			red.add(y+i, 0, 1, line)
		}
		y += n
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	img := red.image()
	if nch != 4 {
		profileMatrix(img, h)
	}
	h.profileDone = true
	return img, nil
}

// jpegWorkBytes is what libjpeg needs besides the coefficient buffer: tables, the
// entropy decoder and some rows of samples at full width, generously.
func jpegWorkBytes(j *jpegHeader) int64 {
	if j == nil {
		return 32 << 20
	}
	return 32<<20 + int64(j.width)*int64(j.components)*64
}
