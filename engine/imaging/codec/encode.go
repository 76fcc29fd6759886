package codec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"image"
	"image/png"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

func encode(w io.Writer, img *imaging.Image, opt EncodeOptions) error {
	if img == nil || img.W() <= 0 || img.H() <= 0 {
		return fmt.Errorf("encode: empty image")
	}
	if img.C != 1 && img.C != 3 && img.C != 4 {
		return fmt.Errorf("encode: %d channels (want 1, 3 or 4)", img.C)
	}
	if len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C {
		return fmt.Errorf("encode: pixel buffer shorter than %dx%d", img.W(), img.H())
	}
	q := opt.Quality
	if q == 0 {
		q = 92
	}
	if q < 1 || q > 100 {
		return fmt.Errorf("encode: quality %d out of 1..100", opt.Quality)
	}
	switch opt.Format {
	case FormatJPEG, "jpg":
		return encodeJPEG(w, img, q, opt)
	case FormatPNG:
		return encodePNG(w, img, opt)
	case FormatWebP:
		return encodeWebP(w, img, q, opt)
	}
	return fmt.Errorf("encode: unknown format %q (want jpeg, png or webp)", opt.Format)
}

// jpegSegment frames one marker segment.
func jpegSegment(marker byte, payload ...[]byte) []byte {
	n := 2
	for _, p := range payload {
		n += len(p)
	}
	out := []byte{0xFF, marker, byte(n >> 8), byte(n)}
	for _, p := range payload {
		out = append(out, p...)
	}
	return out
}

// jpegMetaSegments are the APP1 EXIF and APP2 sRGB ICC segments written after SOI.
func jpegMetaSegments(img *imaging.Image, opt EncodeOptions) []byte {
	var out []byte
	exif := buildEXIF(opt.Meta, img.W(), img.H(), opt.KeepGPS)
	if len(exif)+8 <= 0xFFFF {
		out = append(out, jpegSegment(0xE1, []byte("Exif\x00\x00"), exif)...)
	}
	out = append(out, jpegSegment(0xE2, []byte("ICC_PROFILE\x00\x01\x01"), srgbICC)...)
	return out
}

func pngChunk(typ string, data []byte) []byte {
	out := make([]byte, 8, 12+len(data))
	binary.BigEndian.PutUint32(out, uint32(len(data)))
	copy(out[4:], typ)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(out[4:]))
}

// encodePNG writes 8- or 16-bit PNG with an sRGB chunk and an eXIf chunk after IHDR.
func encodePNG(w io.Writer, img *imaging.Image, opt EncodeOptions) error {
	var m image.Image
	switch {
	case opt.Bits16:
		m = img.ToNRGBA64()
	default:
		m = img.ToNRGBA()
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	if err := enc.Encode(&buf, m); err != nil {
		return fmt.Errorf("encode png: %w", err)
	}
	b := buf.Bytes()
	const ihdrEnd = 8 + 8 + 13 + 4
	bw := bufio.NewWriter(w)
	bw.Write(b[:ihdrEnd])
	bw.Write(pngChunk("sRGB", []byte{0})) // perceptual intent
	bw.Write(pngChunk("eXIf", buildEXIF(opt.Meta, img.W(), img.H(), opt.KeepGPS)))
	bw.Write(b[ihdrEnd:])
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}
