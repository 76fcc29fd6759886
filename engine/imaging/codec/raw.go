package codec

import (
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

type rawHeader struct{}

func probeRaw(r io.ReaderAt, size int64, kind string) (*header, error) {
	return nil, unsupported("camera RAW (%s) decoding is not available yet", kind)
}

func decodeRaw(r io.ReaderAt, size int64, h *header, scaleTo int) (*imaging.Image, error) {
	return nil, unsupported("camera RAW decoding is not available yet")
}
