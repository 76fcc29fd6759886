package codec

import (
	"image"
	"image/color"

	"github.com/porchlight/porchlight/engine/imaging"
)

// fromGoImage converts what the Go decoders return (image/png, x/image/tiff, HEIC) into
// linear light through the header's profile tables, keeping 16-bit precision, and marks
// the profile conversion as done. Alpha becomes a 4th channel when the image has any
// transparency.
func fromGoImage(m image.Image, h *header) *imaging.Image {
	b := m.Bounds()
	w, ht := b.Dx(), b.Dy()
	c := 3
	if h.hasAlpha && !isOpaque(m) {
		c = 4
	}
	p := h.profile
	if p != nil && !profileFits(p, h.model) {
		p = nil
	}
	img := imaging.New(w, ht, c)
	done := true
	switch s := m.(type) {
	case *image.NRGBA:
		bytesToLinear(compact(s.Pix, s.Stride, w*4, ht), 4, img, linearLUT8(p))
	case *image.Gray:
		bytesToLinear(compact(s.Pix, s.Stride, w, ht), 1, img, linearLUT8(p))
	case *image.RGBA:
		if c == 3 { // opaque: premultiplied equals straight
			bytesToLinear(compact(s.Pix, s.Stride, w*4, ht), 4, img, linearLUT8(p))
		} else {
			done = false
			img = imaging.FromImage(m, true)
		}
	case *image.NRGBA64:
		shortsToLinear(be16(s.Pix, s.Stride, w*8, ht), 4, img, linearLUT16(p))
	case *image.RGBA64:
		if c == 3 {
			shortsToLinear(be16(s.Pix, s.Stride, w*8, ht), 4, img, linearLUT16(p))
		} else {
			done = false
			img = imaging.FromImage(m, true)
		}
	case *image.YCbCr:
		rgb := make([]byte, w*ht*3)
		imaging.Bands(ht, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				o := rgb[y*w*3 : (y+1)*w*3]
				for x := 0; x < w; x++ {
					yi := s.YOffset(b.Min.X+x, b.Min.Y+y)
					ci := s.COffset(b.Min.X+x, b.Min.Y+y)
					o[x*3], o[x*3+1], o[x*3+2] = color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
				}
			}
		})
		bytesToLinear(rgb, 3, img, linearLUT8(p))
	case *image.Gray16:
		shortsToLinear(be16(s.Pix, s.Stride, w*2, ht), 1, img, linearLUT16(p))
	default:
		if p != nil && p.converts() {
			// Generic path: gather 16-bit straight samples, then the profile tables.
			pix := make([]uint16, w*ht*4)
			imaging.Bands(ht, func(_, y0, y1 int) {
				for y := y0; y < y1; y++ {
					for x := 0; x < w; x++ {
						nc := color.NRGBA64Model.Convert(m.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA64)
						o := pix[(y*w+x)*4:]
						o[0], o[1], o[2], o[3] = nc.R, nc.G, nc.B, nc.A
					}
				}
			})
			shortsToLinear(pix, 4, img, linearLUT16(p))
		} else {
			done = false
			img = imaging.FromImage(m, c == 4)
		}
	}
	if done {
		if p != nil && p.converts() {
			applyMatrix(img, p.matrixToSRGB())
		}
		h.profileDone = true
	}
	return img
}

// profileFits reports whether an embedded profile describes the pixel model; a
// mismatched one (an RGB profile on a gray image) is ignored.
func profileFits(p *iccProfile, model string) bool {
	switch model {
	case "gray":
		return p.ColorSpace == "GRAY"
	case "rgb":
		return p.ColorSpace == "RGB "
	}
	return false
}

func isOpaque(m image.Image) bool {
	if o, ok := m.(interface{ Opaque() bool }); ok {
		return o.Opaque()
	}
	return false
}

// compact returns rows of n bytes without stride padding (the slice itself when there
// is none).
func compact(pix []byte, stride, n, h int) []byte {
	if stride == n {
		return pix[:n*h]
	}
	out := make([]byte, n*h)
	for y := 0; y < h; y++ {
		copy(out[y*n:], pix[y*stride:y*stride+n])
	}
	return out
}

// be16 decodes big-endian 16-bit samples (Go's 16-bit image layouts).
func be16(pix []byte, stride, n, h int) []uint16 {
	out := make([]uint16, n/2*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src := pix[y*stride : y*stride+n]
			dst := out[y*(n/2) : (y+1)*(n/2)]
			for i := range dst {
				dst[i] = uint16(src[2*i])<<8 | uint16(src[2*i+1])
			}
		}
	})
	return out
}
