package codec

import (
	"image"
	"image/color"
	"image/png"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
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
	px := pixelReader(m)
	nw := imaging.Workers()
	colourful := make([]int, nw)
	transparent := make([]bool, nw)
	imaging.Bands(ht, func(wk, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := out.Row(y)
			for x := 0; x < w; x++ {
				r, g, bl, a := px(b.Min.X+x, b.Min.Y+y)
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

// pixelReader returns a function reading one pixel as non-premultiplied 16-bit, with
// fast paths (no allocation per pixel) for the layouts image/png produces.
func pixelReader(m image.Image) func(x, y int) (r, g, b, a uint32) {
	switch s := m.(type) {
	case *image.Gray:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			v := uint32(s.Pix[s.PixOffset(x, y)]) * 0x101
			return v, v, v, 0xFFFF
		}
	case *image.Gray16:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			i := s.PixOffset(x, y)
			v := uint32(s.Pix[i])<<8 | uint32(s.Pix[i+1])
			return v, v, v, 0xFFFF
		}
	case *image.NRGBA:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			p := s.Pix[s.PixOffset(x, y):]
			return uint32(p[0]) * 0x101, uint32(p[1]) * 0x101, uint32(p[2]) * 0x101, uint32(p[3]) * 0x101
		}
	case *image.NRGBA64:
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			p := s.Pix[s.PixOffset(x, y):]
			return uint32(p[0])<<8 | uint32(p[1]), uint32(p[2])<<8 | uint32(p[3]),
				uint32(p[4])<<8 | uint32(p[5]), uint32(p[6])<<8 | uint32(p[7])
		}
	case *image.Paletted:
		pal := make([]color.NRGBA64, len(s.Palette))
		for i, c := range s.Palette {
			pal[i] = color.NRGBA64Model.Convert(c).(color.NRGBA64)
		}
		return func(x, y int) (uint32, uint32, uint32, uint32) {
			i := int(s.Pix[s.PixOffset(x, y)])
			if i >= len(pal) {
				return 0, 0, 0, 0
			}
			c := pal[i]
			return uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)
		}
	}
	return func(x, y int) (uint32, uint32, uint32, uint32) {
		c := color.NRGBA64Model.Convert(m.At(x, y)).(color.NRGBA64)
		return uint32(c.R), uint32(c.G), uint32(c.B), uint32(c.A)
	}
}
