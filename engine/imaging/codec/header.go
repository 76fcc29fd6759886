package codec

import (
	"bytes"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

// headSize is how much of a file Sniff sees.
const headSize = 64 << 10

// header is everything learned from a file's headers, before any pixel is decoded.
type header struct {
	format, rawKind string
	width, height   int // as stored, before orientation
	orientation     int // EXIF orientation still to apply after decoding (1 = none)
	bitDepth        int
	hasAlpha        bool
	model           string // rgb, gray, cmyk
	icc             []byte
	profile         *iccProfile // parsed icc, or built from HEIF nclx primaries
	meta            Meta
	jpeg            *jpegHeader
	raw             *rawHeader
	// rotated: the decoder itself applies the orientation (HEIF transforms, RAW flip),
	// and width/height are already the displayed size.
	rotated bool
	// profileDone: the decoder already converted to sRGB primaries with the profile.
	profileDone bool
	// webpLossless and webpAlphaPlane say how libwebp will hold a WebP while decoding
	// it: a lossless image whole, a lossy one's alpha plane whole.
	webpLossless, webpAlphaPlane bool
	// heicGrid is a HEIC's primary grid, decoded tile by tile; nil for a single image.
	heicGrid *heifGrid
}

func readHead(r io.ReaderAt, size int64) ([]byte, error) {
	head := make([]byte, min(size, headSize))
	n, err := r.ReadAt(head, 0)
	if n < len(head) {
		return nil, unreadable(err, "reading the first %d bytes", len(head))
	}
	return head, nil
}

func readHeader(r io.ReaderAt, size int64) (*header, error) {
	if size <= 0 {
		return nil, &Error{Code: CodeEmptyFile, Reason: "the file is empty"}
	}
	head, err := readHead(r, size)
	if err != nil {
		return nil, err
	}
	format, kind := sniff(head)
	if format == FormatTIFF {
		// The head may not reach the SubIFDs that mark a RAW; look again with the file.
		if k := tiffRawKind(r, size); k != "" {
			format, kind = FormatRaw, k
		}
	}
	var h *header
	switch format {
	case FormatJPEG:
		h, err = probeJPEG(r, size)
	case FormatPNG:
		h, err = probePNG(r, size)
	case FormatWebP:
		h, err = probeWebP(r, size)
	case FormatTIFF:
		h, err = probeTIFF(r, size)
	case FormatHEIC:
		h, err = probeHEIC(r, size)
	case FormatRaw:
		h, err = probeRaw(r, size, kind)
	default:
		return nil, unsupported("%s is not a JPEG, PNG, WebP, TIFF, HEIC or camera RAW file", describeUnknown(head))
	}
	if err != nil {
		return nil, err
	}
	h.format, h.rawKind = format, kind
	if h.orientation < 1 || h.orientation > 8 {
		h.orientation = 1
	}
	if h.width <= 0 || h.height <= 0 {
		return nil, unreadable(nil, "%s header gives no image size", format)
	}
	if h.icc != nil {
		if p, err := parseICC(h.icc); err == nil {
			h.profile = p
		}
	}
	if h.profile == nil && h.model == "rgb" && h.meta.exifColorSpace == 0xFFFF && h.meta.adobeRGBInterop {
		h.profile = adobeRGBProfile()
	}
	if h.profile != nil {
		h.meta.ICCName = h.profile.Description
	}
	return h, nil
}

func (h *header) info() Info {
	in := Info{
		Format: h.format, RawKind: h.rawKind, Width: h.width, Height: h.height,
		Orientation: h.orientation, BitDepth: h.bitDepth, HasAlpha: h.hasAlpha,
	}
	if !h.rotated && h.orientation >= 5 {
		in.Width, in.Height = h.height, h.width
	}
	switch {
	case h.format == FormatRaw:
		in.ColorSpace = "camera"
	case h.model == "cmyk":
		in.ColorSpace = "CMYK"
		if h.meta.ICCName != "" {
			in.ColorSpace = h.meta.ICCName
		}
	case h.meta.ICCName != "":
		in.ColorSpace = h.meta.ICCName
	case h.model == "gray":
		in.ColorSpace = "Gray"
	default:
		in.ColorSpace = "sRGB"
	}
	return in
}

// decode runs the format's decoder, then the colour conversion, the orientation and
// the final fit.
func (h *header) decode(r io.ReaderAt, size int64, opt DecodeOptions) (*imaging.Image, error) {
	var img *imaging.Image
	var err error
	switch h.format {
	case FormatJPEG:
		img, err = decodeJPEG(r, size, h, opt.ScaleToMaxEdge, opt.Narrow)
	case FormatPNG:
		img, err = decodePNG(r, size, h)
	case FormatWebP:
		img, err = decodeWebP(r, size, h)
	case FormatTIFF:
		img, err = decodeTIFF(r, size, h)
	case FormatHEIC:
		img, err = decodeHEIC(r, size, h)
	case FormatRaw:
		img, err = decodeRaw(r, size, h, opt.ScaleToMaxEdge)
	}
	if err != nil {
		return nil, err
	}
	if img.IsNarrow() {
		return img, nil // exact sRGB codes, upright and full size: nothing left to do
	}
	if h.profile != nil && profileFits(h.profile, h.model) && !h.profileDone {
		h.profile.ToSRGB(img)
	}
	if !h.rotated {
		img = Orient(img, h.orientation)
	}
	if opt.ScaleToMaxEdge > 0 {
		w, hh := imaging.FitWithin(img.W(), img.H(), opt.ScaleToMaxEdge)
		if w != img.W() || hh != img.H() {
			img = imaging.Resize(img, w, hh)
		}
	}
	return img, nil
}

// describeUnknown names common formats we refuse, for a clearer error.
func describeUnknown(head []byte) string {
	switch {
	case bytes.HasPrefix(head, []byte("GIF8")):
		return "this GIF"
	case bytes.HasPrefix(head, []byte("BM")):
		return "this BMP"
	case bytes.HasPrefix(head, []byte("%PDF")):
		return "this PDF"
	case bytes.HasPrefix(head, []byte("II+\x00")), bytes.HasPrefix(head, []byte("MM\x00+")):
		return "this BigTIFF"
	case len(head) >= 12 && string(head[4:8]) == "ftyp":
		return "this " + string(bytes.TrimSpace(head[8:12])) + " media file"
	}
	return "the file"
}
