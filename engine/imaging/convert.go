package imaging

import (
	"image"
	"image/color"
	"image/draw"
)

// FromImage converts any Go image to a linear-light Image with 3 channels (4 when the
// source has an alpha channel and keepAlpha is set). Fast paths cover the layouts the
// standard decoders produce; others go through the generic color model.
func FromImage(src image.Image, keepAlpha bool) *Image {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	c := 3
	if keepAlpha && !opaque(src) {
		c = 4
	}
	dst := New(w, h, c)
	switch s := src.(type) {
	case *image.YCbCr:
		Bands(h, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				row := dst.Row(y)
				for x := 0; x < w; x++ {
					yi := s.YOffset(b.Min.X+x, b.Min.Y+y)
					ci := s.COffset(b.Min.X+x, b.Min.Y+y)
					r, g, bb := color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
					o := x * c
					row[o], row[o+1], row[o+2] = decode8[r], decode8[g], decode8[bb]
					if c == 4 {
						row[o+3] = 1
					}
				}
			}
		})
	case *image.Gray:
		Bands(h, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				row := dst.Row(y)
				sr := s.Pix[(y)*s.Stride : (y)*s.Stride+w]
				for x, v := range sr {
					l := decode8[v]
					o := x * c
					row[o], row[o+1], row[o+2] = l, l, l
					if c == 4 {
						row[o+3] = 1
					}
				}
			}
		})
	case *image.NRGBA:
		Bands(h, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				row := dst.Row(y)
				sp := s.Pix[y*s.Stride : y*s.Stride+w*4]
				for x := 0; x < w; x++ {
					o, i := x*c, x*4
					row[o], row[o+1], row[o+2] = decode8[sp[i]], decode8[sp[i+1]], decode8[sp[i+2]]
					if c == 4 {
						row[o+3] = float32(sp[i+3]) / 255
					}
				}
			}
		})
	case *image.RGBA:
		fromPremultiplied8(dst, s.Pix, s.Stride, w)
	default:
		// Generic path: un-premultiply 16-bit values from the color model.
		Bands(h, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				row := dst.Row(y)
				for x := 0; x < w; x++ {
					nc := color.NRGBA64Model.Convert(src.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
					o := x * c
					row[o], row[o+1], row[o+2] = decode16[nc.R], decode16[nc.G], decode16[nc.B]
					if c == 4 {
						row[o+3] = float32(nc.A) / 65535
					}
				}
			}
		})
	}
	return dst
}

func fromPremultiplied8(dst *Image, pix []uint8, stride, w int) {
	c := dst.C
	Bands(dst.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := dst.Row(y)
			sp := pix[y*stride : y*stride+w*4]
			for x := 0; x < w; x++ {
				o, i := x*c, x*4
				a := sp[i+3]
				r, g, b := sp[i], sp[i+1], sp[i+2]
				if a != 0 && a != 255 {
					r = uint8(min(255, int(r)*255/int(a)))
					g = uint8(min(255, int(g)*255/int(a)))
					b = uint8(min(255, int(b)*255/int(a)))
				}
				row[o], row[o+1], row[o+2] = decode8[r], decode8[g], decode8[b]
				if c == 4 {
					row[o+3] = float32(a) / 255
				}
			}
		}
	})
}

func opaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// ToNRGBA converts to an 8-bit sRGB image (alpha 255 for 3-channel images).
func (m *Image) ToNRGBA() *image.NRGBA {
	w, h := m.W(), m.H()
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := m.Row(y)
			op := out.Pix[y*out.Stride : y*out.Stride+w*4]
			for x := 0; x < w; x++ {
				i, o := x*m.C, x*4
				switch m.C {
				case 1:
					v := Encode8(row[i])
					op[o], op[o+1], op[o+2] = v, v, v
					op[o+3] = 255
				default:
					op[o], op[o+1], op[o+2] = Encode8(row[i]), Encode8(row[i+1]), Encode8(row[i+2])
					op[o+3] = 255
					if m.C == 4 {
						op[o+3] = uint8(Clamp01(row[i+3])*255 + 0.5)
					}
				}
			}
		}
	})
	return out
}

// ToNRGBA64 converts to a 16-bit sRGB image, for 16-bit PNG and TIFF output.
func (m *Image) ToNRGBA64() *image.NRGBA64 {
	w, h := m.W(), m.H()
	out := image.NewNRGBA64(image.Rect(0, 0, w, h))
	Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := m.Row(y)
			op := out.Pix[y*out.Stride : y*out.Stride+w*8]
			for x := 0; x < w; x++ {
				i, o := x*m.C, x*8
				var r, g, b uint16
				a := uint16(65535)
				if m.C == 1 {
					r = Encode16(row[i])
					g, b = r, r
				} else {
					r, g, b = Encode16(row[i]), Encode16(row[i+1]), Encode16(row[i+2])
					if m.C == 4 {
						a = uint16(Clamp01(row[i+3])*65535 + 0.5)
					}
				}
				op[o], op[o+1] = uint8(r>>8), uint8(r)
				op[o+2], op[o+3] = uint8(g>>8), uint8(g)
				op[o+4], op[o+5] = uint8(b>>8), uint8(b)
				op[o+6], op[o+7] = uint8(a>>8), uint8(a)
			}
		}
	})
	return out
}

// Clamp01 clamps v to 0..1, NaN to 0.
func Clamp01(v float32) float32 {
	if !(v > 0) {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}

// Draw copies the image into a draw.Image at its origin; used by tests and the UI.
func (m *Image) Draw(dst draw.Image) {
	draw.Draw(dst, dst.Bounds(), m.ToNRGBA(), image.Point{}, draw.Src)
}
