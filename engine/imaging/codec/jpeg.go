package codec

/*
#cgo pkg-config: libturbojpeg
#include <stdlib.h>
#include <turbojpeg.h>
*/
import "C"

import (
	"bytes"
	"fmt"
	"image"
	"io"
	"strings"
	"unsafe"

	"github.com/porchlight/porchlight/engine/imaging"
)

// JPEG goes through libjpeg-turbo's TurboJPEG API: SIMD Huffman and IDCT, and DCT-domain
// scaling (1/2, 1/4, 1/8) that decodes a reduced image for barely more than the cost of
// entropy decoding.

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

func tjError(handle C.tjhandle) (string, bool) {
	msg := C.GoString(C.tjGetErrorStr2(handle))
	return msg, C.tjGetErrorCode(handle) == C.TJERR_WARNING
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
	handle := C.tjInitDecompress()
	if handle == nil {
		return nil, fmt.Errorf("jpeg: TurboJPEG init failed")
	}
	defer C.tjDestroy(handle)

	var cw, ch, subsamp, cs C.int
	if C.tjDecompressHeader3(handle, (*C.uchar)(unsafe.Pointer(&buf[0])), C.ulong(len(buf)), &cw, &ch, &subsamp, &cs) != 0 {
		msg, _ := tjError(handle)
		return nil, unreadable(nil, "JPEG header: %s", msg)
	}
	w, ht := int(cw), int(ch)
	d := jpegScale(w, ht, scaleTo)
	sw, sh := (w+d-1)/d, (ht+d-1)/d

	pf, nch := C.int(C.TJPF_RGB), 3
	switch cs {
	case C.TJCS_GRAY:
		pf, nch = C.TJPF_GRAY, 1
	case C.TJCS_CMYK, C.TJCS_YCCK:
		pf, nch = C.TJPF_CMYK, 4
	}
	pix := imaging.MakePixels[byte](sw * sh * nch)
	flags := C.int(C.TJFLAG_ACCURATEDCT | C.TJFLAG_LIMITSCANS)
	if C.tjDecompress2(handle, (*C.uchar)(unsafe.Pointer(&buf[0])), C.ulong(len(buf)),
		(*C.uchar)(unsafe.Pointer(&pix[0])), C.int(sw), C.int(sw*nch), C.int(sh), pf, flags) != 0 {
		msg, warning := tjError(handle)
		// Minor corruption (extraneous bytes, a bad restart marker) still decodes; a
		// truncated file or a fatal error does not.
		// The message text alone is not trusted (TurboJPEG keeps it in state that other
		// decodes can touch): a warning on a file without an end-of-image marker after
		// its last scan is truncation, whatever the text says.
		if !warning || strings.Contains(msg, "Premature end") || !hasEOI(buf) {
			return nil, unreadable(nil, "decoding JPEG: %s", msg)
		}
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

// hasEOI reports whether buf ends (give or take trailing padding) with the JPEG
// end-of-image marker.
func hasEOI(buf []byte) bool {
	tail := buf[max(0, len(buf)-4096):]
	return bytes.LastIndex(tail, []byte{0xFF, 0xD9}) >= 0
}
