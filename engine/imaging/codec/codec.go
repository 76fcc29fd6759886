// Package codec reads and writes Porchlight's image files: it sniffs formats, probes
// dimensions and metadata from headers without decoding pixels, decodes JPEG, PNG, WebP,
// TIFF, HEIC and camera RAW into linear-light float32 images (orientation applied,
// colour converted to sRGB primaries), and encodes JPEG, PNG and WebP tagged as sRGB
// with the photographer's EXIF carried over.
//
// Every failure on bad input is an *Error with one of the ingest codes, so the asset
// store can report it as data.code.
//
// Scan is ingest's read: it proves a whole file decodes while holding a reduced copy of
// the frame at most (PNG and TIFF streamed row by row, JPEG and WebP decoded scaled),
// and returns a preview; see scan.go for what each format holds.
//
// Libraries: JPEG through libjpeg-turbo (the libjpeg API for decoding, with DCT-domain
// downscaling and every warning checked; TurboJPEG for encoding), WebP through
// libwebp, PNG and TIFF through the Go decoders (and streaming readers here for Scan),
// HEIC through github.com/gen2brain/heic (libheif, from the system when a shared
// libheif is installed, else as WebAssembly in process: no build dependency, works
// everywhere), camera RAW through LibRaw in a worker process (see package raw). ICC
// matrix/TRC profiles are parsed and applied here.
package codec

import (
	"io"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

// DefaultMaxPixels is the resolution limit applied when DecodeOptions.MaxPixels is 0.
const DefaultMaxPixels = 120_000_000

// Info is what a file's headers say about it.
type Info struct {
	Format      string // jpeg png webp tiff heic raw
	RawKind     string // for raw: dng cr2 cr3 nef arw raf orf rw2 crw pef srw, or raw
	Width       int    // after orientation
	Height      int    // after orientation
	Orientation int    // EXIF orientation 1-8 (1 when absent)
	BitDepth    int    // bits per sample as stored
	HasAlpha    bool
	ColorSpace  string // sRGB, Gray, CMYK, camera, or the embedded ICC profile's description
}

// Meta is the photographic metadata of a file.
type Meta struct {
	Make, Model, LensModel, Artist, Copyright, Software string

	// DateTimeOriginal includes SubSecTimeOriginal; it is in the zone of
	// OffsetTimeOriginal when the file records one, else the wall clock in UTC.
	DateTimeOriginal time.Time
	ExposureTime     float64 // seconds
	FNumber          float64
	ISO              float64
	ExposureBias     float64 // EV
	FocalLength      float64 // mm
	FlashFired       bool    // EXIF Flash says the flash fired

	HasGPS              bool
	Latitude, Longitude float64 // signed decimal degrees, when HasGPS
	Altitude            float64 // metres, when HasAltitude
	HasAltitude         bool

	ICCName     string // description of the embedded ICC profile, "" if none
	Orientation int    // EXIF orientation 1-8 (0 when absent)
	Thumbnail   []byte // embedded EXIF JPEG thumbnail, nil if none

	exifColorSpace  int  // EXIF ColorSpace tag: 1 sRGB, 0xFFFF uncalibrated
	adobeRGBInterop bool // EXIF interoperability index R03 (DCF Adobe RGB option)
}

// DecodeOptions bound a decode.
type DecodeOptions struct {
	// MaxPixels refuses images with more pixels (resolution_too_large) before any pixel
	// buffer is allocated. 0 means DefaultMaxPixels; a negative value disables the check.
	MaxPixels int64
	// ScaleToMaxEdge, when > 0, returns the image fitted within that many pixels on its
	// longest edge (never enlarged). JPEG then decodes at the smallest DCT scale that is
	// still at least that large and RAW develops at half size when that suffices, before
	// a final Lanczos resize: much faster for previews and exports.
	ScaleToMaxEdge int
	// Narrow asks for the file's own 8-bit sRGB codes (imaging's narrow storage) where
	// they are exact: an RGB JPEG in sRGB, upright, at full size. Brackets waiting for
	// the merge are read only as sRGB codes, so this skips a float32 frame and two
	// conversions. Every other file decodes to float32 as usual.
	Narrow bool
}

// EncodeOptions choose the output file.
type EncodeOptions struct {
	Format  string // jpeg png webp
	Quality int    // 1-100 for JPEG and WebP; 0 means 92
	Meta    *Meta  // EXIF to carry (copyright, artist, camera, lens, exposure, date); nil for none
	KeepGPS bool   // write Meta's GPS position; dropped otherwise
	Bits16  bool   // PNG: 16 bits per sample
}

func (o DecodeOptions) maxPixels() int64 {
	switch {
	case o.MaxPixels == 0:
		return DefaultMaxPixels
	case o.MaxPixels < 0:
		return 1 << 62
	}
	return o.MaxPixels
}

// Probe reads only the headers of a file and reports its format, size after
// orientation, depth, alpha and colour space. It never decodes pixels.
func Probe(r io.ReaderAt, size int64) (Info, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return Info{}, err
	}
	return h.info(), nil
}

// ReadMeta reads a file's EXIF (and ICC profile name) without decoding pixels.
func ReadMeta(r io.ReaderAt, size int64) (Meta, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return Meta{}, err
	}
	return h.meta, nil
}

// Decode reads a whole image as linear-light float32 with sRGB primaries: EXIF
// orientation applied, an embedded ICC profile converted, 16-bit precision kept and
// alpha kept as a 4th channel when present. Grayscale sources come back as 3 channels.
func Decode(r io.ReaderAt, size int64, opt DecodeOptions) (*imaging.Image, Meta, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, Meta{}, err
	}
	if max := opt.maxPixels(); int64(h.width)*int64(h.height) > max {
		return nil, h.meta, tooLarge(h.width, h.height, max)
	}
	img, err := h.decode(r, size, opt)
	if err != nil {
		return nil, h.meta, err
	}
	return img, h.meta, nil
}

// Encode writes img (linear light, 1, 3 or 4 channels) as an sRGB-tagged file.
func Encode(w io.Writer, img *imaging.Image, opt EncodeOptions) error {
	return encode(w, img, opt)
}
