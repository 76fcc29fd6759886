package codec

import (
	"bufio"
	"bytes"
	"fmt"
	"image/jpeg"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

func encodeJPEG(w io.Writer, img *imaging.Image, q int, opt EncodeOptions) error {
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img.ToNRGBA(), &jpeg.Options{Quality: q}); err != nil {
		return fmt.Errorf("encode jpeg: %w", err)
	}
	b := buf.Bytes()
	bw := bufio.NewWriter(w)
	bw.Write(b[:2])
	bw.Write(jpegMetaSegments(img, opt))
	bw.Write(b[2:])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jpeg: %w", err)
	}
	return nil
}
