package codec

import (
	"image/jpeg"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

func probeJPEG(r io.ReaderAt, size int64) (*header, error) {
	jh, err := scanJPEG(r, size)
	if err != nil {
		return nil, err
	}
	h := &header{width: jh.width, height: jh.height, bitDepth: jh.precision, jpeg: jh, icc: jh.icc}
	switch jh.components {
	case 1:
		h.model = "gray"
	case 4:
		h.model = "cmyk"
	default:
		h.model = "rgb"
	}
	if jh.exifOff > 0 {
		exifMeta(r, jh.exifOff, jh.exifLen, &h.meta)
	}
	h.orientation = h.meta.Orientation
	return h, nil
}

func decodeJPEG(r io.ReaderAt, size int64, h *header, scaleTo int) (*imaging.Image, error) {
	m, err := jpeg.Decode(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, unreadable(err, "decoding JPEG")
	}
	return imaging.FromImage(m, false), nil
}
