package codec

/*
#cgo pkg-config: libwebp
#include <webp/decode.h>

// pl_webp_scaled decodes data scaled to sw×sh into out (RGBA when alpha, else RGB),
// through libwebp's rescaler, so no full-size output buffer exists.
static int pl_webp_scaled(const uint8_t *data, size_t n, int sw, int sh, int alpha,
                          uint8_t *out, size_t size, int stride) {
	WebPDecoderConfig cfg;
	if (!WebPInitDecoderConfig(&cfg)) return -1;
	cfg.options.use_scaling = 1;
	cfg.options.scaled_width = sw;
	cfg.options.scaled_height = sh;
	cfg.output.colorspace = alpha ? MODE_RGBA : MODE_RGB;
	cfg.output.is_external_memory = 1;
	cfg.output.u.RGBA.rgba = out;
	cfg.output.u.RGBA.stride = stride;
	cfg.output.u.RGBA.size = size;
	int st = WebPDecode(data, n, &cfg);
	WebPFreeDecBuffer(&cfg.output);
	return st;
}
*/
import "C"

import (
	"encoding/binary"
	"io"
	"unsafe"

	"github.com/porchlight/porchlight/engine/imaging"
)

// probeWebP walks the RIFF chunks: VP8X for the canvas, flags, ICCP and EXIF; or a
// simple VP8 / VP8L bitstream header.
func probeWebP(r io.ReaderAt, size int64) (*header, error) {
	h := &header{bitDepth: 8, model: "rgb"}
	var hdr [8]byte
	var hdrRead bool
	off := int64(12)
	for off+8 <= size {
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, unreadable(err, "reading WebP chunk at %d", off)
		}
		typ := string(hdr[:4])
		ln := int64(binary.LittleEndian.Uint32(hdr[4:]))
		data := off + 8
		if data+ln > size {
			ln = size - data // truncated last chunk: let the decoder judge
		}
		read := func(limit int64) []byte {
			if ln > limit {
				return nil
			}
			b := make([]byte, ln)
			if _, err := r.ReadAt(b, data); err != nil {
				return nil
			}
			return b
		}
		switch typ {
		case "VP8X":
			b := read(64)
			if len(b) < 10 {
				return nil, unreadable(nil, "WebP VP8X chunk too short")
			}
			flags := b[0]
			if flags&0x02 != 0 {
				return nil, unsupported("animated WebP is not supported")
			}
			h.hasAlpha = flags&0x10 != 0
			h.width = 1 + (int(b[4]) | int(b[5])<<8 | int(b[6])<<16)
			h.height = 1 + (int(b[7]) | int(b[8])<<8 | int(b[9])<<16)
			hdrRead = true
		case "ALPH":
			h.webpAlphaPlane = true
		case "VP8 ":
			var b [10]byte
			if !hdrRead {
				if ln < 10 {
					return nil, unreadable(nil, "WebP VP8 frame header is malformed")
				}
				if _, err := r.ReadAt(b[:], data); err != nil || b[3] != 0x9d || b[4] != 0x01 || b[5] != 0x2a {
					return nil, unreadable(nil, "WebP VP8 frame header is malformed")
				}
				h.width = int(binary.LittleEndian.Uint16(b[6:]) & 0x3fff)
				h.height = int(binary.LittleEndian.Uint16(b[8:]) & 0x3fff)
				hdrRead = true
			}
		case "VP8L":
			var b [5]byte
			if ln < 5 {
				return nil, unreadable(nil, "WebP VP8L header is malformed")
			}
			if _, err := r.ReadAt(b[:], data); err != nil || b[0] != 0x2f {
				return nil, unreadable(err, "WebP VP8L header is malformed")
			}
			h.webpLossless = true
			if !hdrRead {
				v := binary.LittleEndian.Uint32(b[1:])
				h.width = 1 + int(v&0x3fff)
				h.height = 1 + int((v>>14)&0x3fff)
				h.hasAlpha = (v>>28)&1 != 0
				hdrRead = true
			}
		case "ICCP":
			h.icc = read(maxICC)
		case "EXIF":
			if b := read(maxThumbnail + 1<<16); b != nil {
				exifFromBlock(b, &h.meta)
			}
		}
		off = data + ln + ln&1
	}
	if !hdrRead {
		return nil, unreadable(nil, "WebP has no image header")
	}
	h.orientation = h.meta.Orientation
	return h, nil
}

// readWebP reads the whole file and checks its bitstream against the container:
// it answers the bytes, the image's size, and 4 channels when it has alpha, else 3.
func readWebP(r io.ReaderAt, size int64, h *header) (buf []byte, w, ht, nch int, err error) {
	buf, err = readAll(r, size)
	if err != nil {
		return nil, 0, 0, 0, err
	}
	var feat C.WebPBitstreamFeatures
	if st := C.WebPGetFeatures((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), &feat); st != C.VP8_STATUS_OK {
		return nil, 0, 0, 0, unreadable(nil, "WebP bitstream features: status %d", int(st))
	}
	if feat.has_animation != 0 {
		return nil, 0, 0, 0, unsupported("animated WebP is not supported")
	}
	w, ht = int(feat.width), int(feat.height)
	if w != h.width || ht != h.height {
		return nil, 0, 0, 0, unreadable(nil, "WebP bitstream is %dx%d but its container says %dx%d", w, ht, h.width, h.height)
	}
	nch = 3
	if feat.has_alpha != 0 {
		nch = 4
	}
	return buf, w, ht, nch, nil
}

// decodeWebP decodes lossy and lossless WebP (with alpha) through libwebp.
func decodeWebP(r io.ReaderAt, size int64, h *header) (*imaging.Image, error) {
	buf, w, ht, nch, err := readWebP(r, size, h)
	if err != nil {
		return nil, err
	}
	pix := make([]byte, w*ht*nch)
	in, out := (*C.uint8_t)(unsafe.Pointer(&buf[0])), (*C.uint8_t)(unsafe.Pointer(&pix[0]))
	var res *C.uint8_t
	if nch == 4 {
		res = C.WebPDecodeRGBAInto(in, C.size_t(len(buf)), out, C.size_t(len(pix)), C.int(w*4))
	} else {
		res = C.WebPDecodeRGBInto(in, C.size_t(len(buf)), out, C.size_t(len(pix)), C.int(w*3))
	}
	if res == nil {
		return nil, unreadable(nil, "decoding WebP failed (corrupt or truncated data)")
	}
	c := 3
	if nch == 4 && !opaqueAlpha(pix) {
		c = 4
	}
	img := imaging.New(w, ht, c)
	p := h.profile
	if p != nil && !profileFits(p, h.model) {
		p = nil
	}
	bytesToLinear(pix, nch, img, linearLUT8(p))
	if p != nil && p.converts() {
		applyMatrix(img, p.matrixToSRGB())
	}
	h.profileDone = true
	return img, nil
}

// opaqueAlpha reports whether every alpha byte of RGBA samples is 255.
func opaqueAlpha(rgba []byte) bool {
	for i := 3; i < len(rgba); i += 4 {
		if rgba[i] != 255 {
			return false
		}
	}
	return true
}

// webpHeld is what libwebp holds while decoding beside its scaled output: a lossless
// image whole as 4 bytes a pixel, a lossy one's alpha plane as 1.
func webpHeld(h *header) int64 {
	px := int64(h.width) * int64(h.height)
	switch {
	case h.webpLossless:
		return 4 * px
	case h.webpAlphaPlane:
		return 2 * px
	}
	return int64(h.width) * 64 // macroblock row caches
}

// scanWebP decodes through libwebp's rescaler to at most four times the preview
// size (libwebp averages in sRGB codes; the final reduction is in linear light and
// the coarse step keeps the difference small), every byte of the bitstream read.
func scanWebP(r io.ReaderAt, size int64, h *header, tw, th int) (*imaging.Image, error) {
	buf, w, ht, nch, err := readWebP(r, size, h)
	if err != nil {
		return nil, err
	}
	sw, sh := imaging.FitWithin(w, ht, 4*max(tw, th))
	pix := make([]byte, sw*sh*nch)
	if st := C.pl_webp_scaled((*C.uint8_t)(unsafe.Pointer(&buf[0])), C.size_t(len(buf)), C.int(sw), C.int(sh), C.int(nch-3),
		(*C.uint8_t)(unsafe.Pointer(&pix[0])), C.size_t(len(pix)), C.int(sw*nch)); st != C.VP8_STATUS_OK {
		return nil, unreadable(nil, "decoding WebP failed (corrupt or truncated data, status %d)", int(st))
	}
	lut := linearLUT8(fitting(h))
	red := newReducer(sw, sh, tw, th, nch == 4)
	line := make([]float32, sw*nch)
	for y := 0; y < sh; y++ {
		row8ToLinear(pix[y*sw*nch:(y+1)*sw*nch], nch, line, nch, lut)
		red.add(y, 0, 1, line)
	}
	img := red.image()
	profileMatrix(img, h)
	return img, nil
}
