package codec

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

// DecodeMask reads an erase mask: a white-on-transparent PNG where white and opaque
// marks the region. The result has one channel in 0..1: coverage = alpha × luma of the
// stored (not linearised) colour, so anti-aliased edges keep their partial coverage.
//
// Grayscale and black-and-white PNGs are accepted as masks too. A PNG that is neither
// transparent nor neutral gray is a photo, and is refused, as is any other format.
func DecodeMask(r io.ReaderAt, size int64) (*imaging.Image, error) {
	if size > 0 {
		head, err := readHead(r, size)
		if err != nil {
			return nil, err
		}
		if f := Sniff(head); f != FormatPNG {
			if f == "" {
				f = "an unknown format"
			}
			return nil, unsupported("a mask must be a PNG (white on transparent), not %s", f)
		}
	}
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	if h.format != FormatPNG {
		return nil, unsupported("a mask must be a PNG (white on transparent), not %s", h.format)
	}
	if int64(h.width)*int64(h.height) > DefaultMaxPixels {
		return nil, tooLarge(h.width, h.height, DefaultMaxPixels)
	}
	m, err := png.Decode(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, unreadable(err, "decoding mask PNG")
	}
	b := m.Bounds()
	w, ht := b.Dx(), b.Dy()
	out := imaging.New(w, ht, 1)

	// Per row band: count colourful opaque pixels and whether any pixel is transparent.
	nw := imaging.Workers()
	colourful := make([]int, nw)
	transparent := make([]bool, nw)
	imaging.Bands(ht, func(wk, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := out.Row(y)
			for x := 0; x < w; x++ {
				r, g, bl, a := nrgba16(m, b.Min.X+x, b.Min.Y+y)
				if a < 0xFFFF {
					transparent[wk] = true
				}
				if a > 0x8000 && spread(r, g, bl) > 0x1400 { // about 20 of 255
					colourful[wk]++
				}
				luma := (0.2126*float32(r) + 0.7152*float32(g) + 0.0722*float32(bl)) / 0xFFFF
				row[x] = luma * float32(a) / 0xFFFF
			}
		}
	})
	anyTransparent, nColour := false, 0
	for i := range colourful {
		nColour += colourful[i]
		anyTransparent = anyTransparent || transparent[i]
	}
	if !anyTransparent && int64(nColour)*100 > int64(w)*int64(ht) {
		return nil, unsupported("this PNG looks like a photo, not a mask: a mask is white on transparent (or black and white), but %d%% of its pixels are coloured and none is transparent",
			int64(nColour)*100/(int64(w)*int64(ht)))
	}
	return out, nil
}

func spread(r, g, b uint32) uint32 {
	return max(r, g, b) - min(r, g, b)
}

// nrgba16 reads one pixel as non-premultiplied 16-bit, with fast paths for the layouts
// image/png produces for masks.
func nrgba16(m image.Image, x, y int) (r, g, b, a uint32) {
	switch s := m.(type) {
	case *image.Gray:
		v := uint32(s.Pix[s.PixOffset(x, y)]) * 0x101
		return v, v, v, 0xFFFF
	case *image.NRGBA:
		p := s.Pix[s.PixOffset(x, y):]
		return uint32(p[0]) * 0x101, uint32(p[1]) * 0x101, uint32(p[2]) * 0x101, uint32(p[3]) * 0x101
	case *image.Paletted:
		c := color.NRGBAModel.Convert(s.Palette[s.ColorIndexAt(x, y)]).(color.NRGBA)
		return uint32(c.R) * 0x101, uint32(c.G) * 0x101, uint32(c.B) * 0x101, uint32(c.A) * 0x101
	}
	c := color.NRGBA64Model.Convert(m.At(x, y)).(color.NRGBA64)
	return uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)
}

// Thumbnail returns a small upright, sRGB image fitting maxEdge: the embedded preview
// (EXIF thumbnail, or a RAW's embedded JPEG) when it is at least that large and has the
// photo's shape, else a fast reduced decode (DCT-scaled JPEG, half-size RAW) resized
// with Lanczos. Either way the size is the photo's own size fitted within maxEdge.
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
	return h.decode(r, size, DecodeOptions{ScaleToMaxEdge: maxEdge})
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
