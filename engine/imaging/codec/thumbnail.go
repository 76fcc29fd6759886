package codec

import (
	"bytes"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

// Thumbnail returns a small upright, sRGB image fitting maxEdge: the embedded preview
// (EXIF thumbnail, or a RAW's embedded JPEG) when it is at least that large and has the
// photo's shape, else a reduced decode that never holds the full frame (see Scan)
// resized with Lanczos. Either way the size is the photo's own size fitted within
// maxEdge.
func Thumbnail(r io.ReaderAt, size int64, maxEdge int) (*imaging.Image, error) {
	if maxEdge <= 0 {
		return nil, &Error{Code: CodeUnreadable, Reason: "thumbnail size must be positive"}
	}
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	preview := h.meta.Thumbnail
	if h.format == FormatRaw {
		if p, err := raw.Thumbnail(h.raw.data); err == nil {
			preview = p
		}
	}
	if preview != nil && h.format != FormatHEIC {
		if img := embeddedThumb(preview, h, maxEdge); img != nil {
			return img, nil
		}
	}
	if int64(h.width)*int64(h.height) > DefaultMaxPixels {
		return nil, tooLarge(h.width, h.height, DefaultMaxPixels)
	}
	img, _, err := h.scan(r, size, maxEdge)
	if err != nil {
		return nil, err
	}
	return h.finishPreview(img, maxEdge), nil
}

// embeddedThumb decodes an embedded preview if it is big enough and has the main
// image's aspect ratio (many cameras letterbox 3:2 photos into 160×120 thumbnails).
// Previews are stored like the main image, so its orientation applies to them.
func embeddedThumb(t []byte, h *header, maxEdge int) *imaging.Image {
	tr := bytes.NewReader(t)
	th, err := readHeader(tr, int64(len(t)))
	if err != nil || th.format != FormatJPEG {
		return nil
	}
	if max(th.width, th.height) < maxEdge {
		return nil
	}
	in := h.info()
	sw, sh := in.Width, in.Height // stored (unrotated) shape of the main image
	if in.Orientation >= 5 {
		sw, sh = sh, sw
	}
	ar, tar := float64(sw)/float64(sh), float64(th.width)/float64(th.height)
	if tar/ar > 1.02 || ar/tar > 1.02 {
		return nil
	}
	th.orientation = in.Orientation
	img, err := th.decode(tr, int64(len(t)), DecodeOptions{ScaleToMaxEdge: maxEdge})
	if err != nil {
		return nil
	}
	w, ht := imaging.FitWithin(in.Width, in.Height, maxEdge)
	if img.W() != w || img.H() != ht {
		img = imaging.Resize(img, w, ht)
	}
	return img
}
