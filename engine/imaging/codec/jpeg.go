package codec

import (
	"image"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

// JPEG decodes through libjpeg-turbo (see jpegdec.go): SIMD Huffman and IDCT, and
// DCT-domain scaling (1/2, 1/4, 1/8) that decodes a reduced image for barely more than
// the cost of entropy decoding. Any warning other than a few harmless ones (see
// pl_harmless) makes the file unreadable, so a truncated scan never becomes a grey frame.

func probeJPEG(r io.ReaderAt, size int64) (*header, error) {
	jh, err := scanJPEG(r, size)
	if err != nil {
		return nil, err
	}
	h := &header{width: jh.width, height: jh.height, bitDepth: jh.precision, jpeg: jh, icc: jh.icc}
	switch jh.components {
	case 1:
		h.model = "gray"
	case 4:
		h.model = "cmyk"
	default:
		h.model = "rgb"
	}
	if jh.exifOff > 0 {
		exifMeta(r, jh.exifOff, jh.exifLen, &h.meta)
	}
	h.orientation = h.meta.Orientation
	return h, nil
}

// jpegScale picks the smallest of 1, 1/2, 1/4, 1/8 that keeps the longest edge at
// least target pixels (target 0: full size). It returns the denominator.
func jpegScale(w, h, target int) int {
	if target <= 0 {
		return 1
	}
	long := max(w, h)
	for _, d := range []int{8, 4, 2} {
		if (long+d-1)/d >= target {
			return d
		}
	}
	return 1
}

// readAll reads the whole file for the C decoders.
func readAll(r io.ReaderAt, size int64) ([]byte, error) {
	buf := make([]byte, size)
	n, err := r.ReadAt(buf, 0)
	if int64(n) < size {
		return nil, unreadable(err, "reading %d bytes", size)
	}
	return buf, nil
}

func decodeJPEG(r io.ReaderAt, size int64, h *header, scaleTo int, narrow bool) (*imaging.Image, error) {
	if h.bitDepth != 8 {
		return nil, unsupported("%d-bit JPEG is not supported", h.bitDepth)
	}
	buf, err := readAll(r, size)
	if err != nil {
		return nil, err
	}
	d, err := openJPEG(buf, jpegScale(h.width, h.height, scaleTo), 0)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	sw, sh, nch := d.w, d.h, d.nc
	pix := imaging.MakePixels[byte](sw * sh * nch)
	n, err := d.read(pix, sw*nch)
	if err == nil && n < sh {
		err = unreadable(nil, "the JPEG ended after %d of its %d rows", n, sh)
	}
	if err == nil {
		err = d.finish()
	}
	if err != nil {
		return nil, err
	}

	// Convert each row to linear light: through the profile's curves (RGB, gray) or
	// the naive CMYK formula. Adobe (Photoshop) CMYK files store inverted inks.
	p := h.profile
	if p != nil && !profileFits(p, h.model) {
		p = nil
	}
	lut := linearLUT8(p)
	if narrow && nch == 3 && lut == srgbLUT8 && h.orientation < 2 && scaleTo == 0 {
		// The decoded bytes are already the sRGB codes a narrow image holds.
		return &imaging.Image{Pix8: pix, Stride: sw * 3, C: 3, Rect: image.Rect(0, 0, sw, sh)}, nil
	}
	inverted := h.jpeg != nil && h.jpeg.adobe
	row := func(y int, buf []float32) {
		src := pix[y*sw*nch : (y+1)*sw*nch]
		if nch == 4 {
			cmykRowToLinear(src, buf, inverted)
			return
		}
		row8ToLinear(src, nch, buf, 3, lut)
	}
	// With a target size, resize while converting, so the full-size float image is
	// never built; orientation and the profile matrix then run on the small image.
	var img *imaging.Image
	if tw, th := fitStored(sw, sh, h.orientation, scaleTo); tw < sw || th < sh {
		img = imaging.ResizeFunc(sw, sh, 3, tw, th, row)
	} else {
		img = imaging.New(sw, sh, 3)
		imaging.Bands(sh, func(_, y0, y1 int) {
			for y := y0; y < y1; y++ {
				row(y, img.Row(y))
			}
		})
	}
	if nch != 4 {
		if p != nil && p.converts() {
			applyMatrix(img, p.matrixToSRGB())
		}
		h.profileDone = true
	}
	return img, nil
}

// fitStored is the size, in stored orientation, of a w×h stored image whose upright
// version is fitted within maxEdge (0: unchanged).
func fitStored(w, h, orientation, maxEdge int) (int, int) {
	if maxEdge <= 0 {
		return w, h
	}
	if orientation >= 5 {
		fh, fw := imaging.FitWithin(h, w, maxEdge)
		return fw, fh
	}
	return imaging.FitWithin(w, h, maxEdge)
}

// cmykRowToLinear converts CMYK samples without a colour profile by the usual naive
// formula; inverted means 255 is no ink (Adobe).
func cmykRowToLinear(src []byte, row []float32, inverted bool) {
	w := len(row) / 3
	for x := 0; x < w; x++ {
		c, m, ye, k := uint32(src[x*4]), uint32(src[x*4+1]), uint32(src[x*4+2]), uint32(src[x*4+3])
		if !inverted {
			c, m, ye, k = 255-c, 255-m, 255-ye, 255-k
		}
		o := row[x*3 : x*3+3 : x*3+3]
		o[0] = imaging.Decode8(uint8((c*k + 127) / 255))
		o[1] = imaging.Decode8(uint8((m*k + 127) / 255))
		o[2] = imaging.Decode8(uint8((ye*k + 127) / 255))
	}
}
