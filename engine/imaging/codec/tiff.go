package codec

import (
	"errors"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
	"golang.org/x/image/tiff"
)

// TIFF tags read by the probe.
const (
	tagImageWidth      = 0x0100
	tagImageLength     = 0x0101
	tagBitsPerSample   = 0x0102
	tagCompression     = 0x0103
	tagPhotometric     = 0x0106
	tagSamplesPerPixel = 0x0115
	tagExtraSamples    = 0x0152
	tagICCProfile      = 0x8773
)

// openTIFFIFD0 opens a TIFF file and reads its first IFD, either failure as an
// unreadable file.
func openTIFFIFD0(r io.ReaderAt, size int64) (*tiffFile, ifd, error) {
	t, err := openTIFF(r, 0, size)
	if err != nil {
		return nil, ifd{}, unreadable(err, "reading TIFF header")
	}
	d, err := t.readIFD(t.ifd0)
	if err != nil {
		return nil, ifd{}, unreadable(err, "reading TIFF IFD0")
	}
	return t, d, nil
}

func probeTIFF(r io.ReaderAt, size int64) (*header, error) {
	t, d, err := openTIFFIFD0(r, size)
	if err != nil {
		return nil, err
	}
	h := &header{}
	num := func(tag uint16) int {
		if e, ok := d.find(tag); ok {
			v, _ := t.uint(e)
			return int(v)
		}
		return 0
	}
	h.width, h.height = num(tagImageWidth), num(tagImageLength)
	h.bitDepth = max(1, num(tagBitsPerSample))
	spp := max(1, num(tagSamplesPerPixel))
	switch num(tagPhotometric) {
	case 0, 1:
		h.model = "gray"
		h.hasAlpha = spp >= 2
	case 2:
		h.model = "rgb"
		h.hasAlpha = spp >= 4
	case 3:
		h.model = "rgb" // palette
	case 5:
		h.model = "cmyk"
	case 6:
		h.model = "rgb" // YCbCr
	default:
		return nil, unsupported("TIFF photometric interpretation %d is not supported", num(tagPhotometric))
	}
	if e, ok := d.find(tagICCProfile); ok {
		if b, err := t.data(e); err == nil && len(b) <= maxICC {
			h.icc = append([]byte(nil), b...)
		}
	}
	exifMeta(r, 0, size, &h.meta)
	h.meta.Thumbnail = nil // IFD1 of a TIFF is another page, not an EXIF thumbnail
	h.orientation = h.meta.Orientation
	return h, nil
}

func decodeTIFF(r io.ReaderAt, size int64, h *header) (*imaging.Image, error) {
	if h.model == "cmyk" {
		return nil, unsupported("CMYK TIFF is not supported; convert it to RGB first")
	}
	m, err := tiff.Decode(io.NewSectionReader(r, 0, size))
	var ue tiff.UnsupportedError
	if errors.As(err, &ue) {
		return nil, unsupported("TIFF with %s is not supported", string(ue))
	}
	if err != nil {
		return nil, unreadable(err, "decoding TIFF")
	}
	return fromGoImage(m, h), nil
}
