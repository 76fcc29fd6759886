package assets

import (
	"mime"
	"strings"

	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// accepted maps each declarable media type to the container it promises and, for
// camera RAW, the flavour (codec.SniffRaw). octetStream promises nothing.
var accepted = map[string]struct{ format, raw string }{
	"image/jpeg":            {codec.FormatJPEG, ""},
	"image/png":             {codec.FormatPNG, ""},
	"image/webp":            {codec.FormatWebP, ""},
	"image/tiff":            {codec.FormatTIFF, ""},
	"image/heic":            {codec.FormatHEIC, ""},
	"image/heif":            {codec.FormatHEIC, ""},
	"image/x-adobe-dng":     {codec.FormatRaw, "dng"},
	"image/x-canon-cr2":     {codec.FormatRaw, "cr2"},
	"image/x-canon-cr3":     {codec.FormatRaw, "cr3"},
	"image/x-canon-crw":     {codec.FormatRaw, "crw"},
	"image/x-nikon-nef":     {codec.FormatRaw, "nef"},
	"image/x-sony-arw":      {codec.FormatRaw, "arw"},
	"image/x-fuji-raf":      {codec.FormatRaw, "raf"},
	"image/x-olympus-orf":   {codec.FormatRaw, "orf"},
	"image/x-panasonic-rw2": {codec.FormatRaw, "rw2"},
	octetStream:             {"", ""},
}

const octetStream = "application/octet-stream"

// mediaType returns the lowercase media type of a Content-Type value without its
// parameters, "" when it does not parse.
func mediaType(v string) string {
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// acceptedTypes lists the declarable types for error messages.
const acceptedTypes = "image/jpeg, image/png, image/webp, image/tiff, image/heic, image/heif, " +
	"a camera RAW type (image/x-adobe-dng, image/x-canon-cr2, image/x-canon-cr3, image/x-canon-crw, " +
	"image/x-nikon-nef, image/x-sony-arw, image/x-fuji-raf, image/x-olympus-orf, image/x-panasonic-rw2) " +
	"or application/octet-stream"

// formatNames are the words people read in reasons.
var formatNames = map[string]string{
	codec.FormatJPEG: "JPEG", codec.FormatPNG: "PNG", codec.FormatWebP: "WebP",
	codec.FormatTIFF: "TIFF", codec.FormatHEIC: "HEIC", codec.FormatRaw: "camera RAW",
}

// matchesDeclared reports whether sniffed bytes (format and raw flavour) are what the
// declared media type promised.
func matchesDeclared(declared, format, rawKind string) bool {
	want, ok := accepted[declared]
	if !ok {
		return false
	}
	if want.format == "" { // octet-stream
		return true
	}
	if want.format != format {
		return false
	}
	// A generic TIFF-based RAW ("raw") cannot be told apart further; accept it.
	return want.raw == "" || rawKind == want.raw || rawKind == "raw"
}

// exportTypes are the delivery formats and their media types and extensions.
var exportTypes = map[string]struct{ mime, ext string }{
	"jpeg": {"image/jpeg", ".jpg"},
	"png":  {"image/png", ".png"},
	"webp": {"image/webp", ".webp"},
}

// servedType is the Content-Type a download answers with: the declared type, except
// that bytes declared as octet-stream are served as what ingest found them to be.
func servedType(contentType, format string) string {
	if contentType != octetStream {
		return contentType
	}
	switch format {
	case codec.FormatJPEG:
		return "image/jpeg"
	case codec.FormatPNG:
		return "image/png"
	case codec.FormatWebP:
		return "image/webp"
	case codec.FormatTIFF:
		return "image/tiff"
	case codec.FormatHEIC:
		return "image/heic"
	}
	return octetStream
}
