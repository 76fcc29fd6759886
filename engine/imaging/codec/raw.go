package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

// rawHeader keeps the file bytes LibRaw parsed, so decoding does not read them again.
type rawHeader struct {
	data []byte
	info raw.Info
}

// libraw flip codes to EXIF orientations.
var flipOrientation = map[int]int{0: 1, 3: 3, 5: 8, 6: 6}

func probeRaw(r io.ReaderAt, size int64, kind string) (*header, error) {
	data, err := readAll(r, size)
	if err != nil {
		return nil, err
	}
	in, err := raw.Probe(data)
	var le *raw.Error
	switch {
	case errors.As(err, &le) && le.Unsupported():
		return nil, unsupported("this %s camera RAW is not supported by LibRaw", kind)
	case errors.Is(err, raw.ErrNoImage):
		return nil, unreadable(err, "the %s file holds no image", kind)
	case err != nil:
		return nil, unreadable(err, "reading %s headers", kind)
	}
	h := &header{width: in.Width, height: in.Height, bitDepth: 16, model: "rgb", rotated: true,
		raw: &rawHeader{data: data, info: in}}
	h.orientation = flipOrientation[in.Flip]

	// EXIF straight from the file where the format is TIFF-structured or embeds a JPEG;
	// LibRaw's parse fills what that leaves empty.
	rawContainerMeta(bytes.NewReader(data), size, kind, &h.meta)
	m := &h.meta
	fill := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	fill(&m.Make, in.Make)
	fill(&m.Model, in.Model)
	fill(&m.LensModel, in.Lens)
	fill(&m.Artist, in.Artist)
	fillF := func(dst *float64, v float64) {
		if *dst == 0 && v > 0 {
			*dst = v
		}
	}
	fillF(&m.ISO, in.ISO)
	fillF(&m.ExposureTime, in.Shutter)
	fillF(&m.FNumber, in.Aperture)
	fillF(&m.FocalLength, in.FocalLength)
	if m.DateTimeOriginal.IsZero() {
		m.DateTimeOriginal = in.Time
	}
	m.Orientation = h.orientation
	return h, nil
}

// rawDataPresent refuses a TIFF-structured RAW whose raw image data is missing or
// truncated (CRW, CR3 and RAF are not TIFFs and are left to LibRaw).
func rawDataPresent(h *header) error {
	switch h.rawKind {
	case "crw", "cr3", "raf":
		return nil
	}
	data := h.raw.data
	if tiffRawDataMissing(bytes.NewReader(data), int64(len(data))) {
		return unreadable(nil, "the %s file holds metadata only: its raw image data is missing or truncated", h.rawKind)
	}
	return nil
}

func decodeRaw(r io.ReaderAt, size int64, h *header, scaleTo int) (*imaging.Image, error) {
	data := h.raw.data
	if err := rawDataPresent(h); err != nil {
		return nil, err
	}
	half := scaleTo > 0 && max(h.width, h.height)/2 >= scaleTo
	dev, _, err := raw.Develop(data, half)
	if err != nil {
		return nil, rawDevelopError(err, h.rawKind)
	}
	img := imaging.New(dev.Width, dev.Height, 3)
	shortsToLinear(dev.Pix, 3, img, linearIdentity16())
	h.profileDone = true
	return img, nil
}

func rawDevelopError(err error, kind string) error {
	var ce *raw.CorruptError
	var e *Error
	switch {
	case errors.As(err, &e):
		return err
	case errors.As(err, &ce):
		return unreadable(err, "the %s raw data is corrupted or truncated", kind)
	case errors.Is(err, raw.ErrNoImage):
		return unreadable(err, "the %s file holds no decodable image", kind)
	}
	return unreadable(err, "developing %s", kind)
}

// scanRaw develops at half size when that still covers the preview, in the LibRaw
// worker, and streams the developed rows through a box reduction.
func scanRaw(r io.ReaderAt, size int64, h *header, tw, th, edge int) (*imaging.Image, error) {
	data := h.raw.data
	if err := rawDataPresent(h); err != nil {
		return nil, err
	}
	half := max(h.width, h.height)/2 >= edge
	var red *reducer
	var line []float32
	lut := linearIdentity16()
	_, err := raw.DevelopRows(data, half, func(w, ht int) error {
		if int64(w)*16 > maxRowBytes {
			return rowTooWide(w)
		}
		red = newReducer(w, ht, tw, th, false)
		line = make([]float32, w*3)
		return nil
	}, func(y int, rgb []uint16) error {
		for i, v := range rgb {
			line[i] = lut[0][v] // the same identity table for every channel
		}
		red.add(y, 0, 1, line)
		return nil
	})
	if err != nil {
		return nil, rawDevelopError(err, h.rawKind)
	}
	h.profileDone = true
	return red.image(), nil
}

// rawContainerMeta reads the EXIF a RAW container carries: the TIFF structure itself
// for TIFF-based formats, the embedded JPEG's APP1 for RAF, the CMT boxes for CR3.
// CRW (CIFF) has no EXIF; LibRaw's parse covers it.
func rawContainerMeta(r io.ReaderAt, size int64, kind string, m *Meta) {
	switch kind {
	case "raf":
		var hdr [8]byte
		if _, err := r.ReadAt(hdr[:], 84); err != nil {
			return
		}
		off, n := int64(binary.BigEndian.Uint32(hdr[:4])), int64(binary.BigEndian.Uint32(hdr[4:]))
		if off > 0 && n > 0 && off+n <= size {
			if jh, err := scanJPEG(io.NewSectionReader(r, off, n), n); err == nil && jh.exifOff > 0 {
				exifMeta(r, off+jh.exifOff, jh.exifLen, m)
			}
		}
	case "cr3":
		cr3Meta(r, size, m)
	case "crw":
	default:
		exifMeta(r, 0, size, m)
	}
}

// cr3Meta reads the EXIF of a Canon CR3: TIFF streams in the CMT1 (IFD0), CMT2 (EXIF
// IFD) and CMT4 (GPS IFD) boxes of the moov/uuid box.
func cr3Meta(r io.ReaderAt, size int64, m *Meta) {
	top, err := bmffBoxes(r, 0, size)
	if err != nil {
		return
	}
	moov, ok := findBox(top, "moov")
	if !ok {
		return
	}
	kids, err := bmffBoxes(r, moov.start, moov.end)
	if err != nil {
		return
	}
	for _, k := range kids {
		if k.typ != "uuid" || k.end-k.start < 16 {
			continue
		}
		cmts, err := bmffBoxes(r, k.start+16, k.end)
		if err != nil {
			continue
		}
		for _, c := range cmts {
			n := c.end - c.start
			switch c.typ {
			case "CMT1":
				exifMeta(r, c.start, n, m)
			case "CMT2":
				if t, err := openTIFF(r, c.start, n); err == nil {
					if d, err := t.readIFD(t.ifd0); err == nil {
						exifSubIFD(t, d, m)
					}
				}
			case "CMT4":
				if t, err := openTIFF(r, c.start, n); err == nil {
					if d, err := t.readIFD(t.ifd0); err == nil {
						gpsIFD(t, d, m)
					}
				}
			}
		}
	}
}
