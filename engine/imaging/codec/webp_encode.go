package codec

/*
#cgo pkg-config: libwebp
#include <stdlib.h>
#include <webp/encode.h>

// pl_webp_encode compresses RGB or RGBA lossily at quality q with libwebp's default
// preset and method, using its multi-threaded paths. The output is freed with
// WebPFree (through WebPMemoryWriterClear's allocator).
static int pl_webp_encode(const uint8_t *pix, int w, int h, int stride, int alpha, float q,
                          uint8_t **out, size_t *n) {
	WebPConfig config;
	if (!WebPConfigPreset(&config, WEBP_PRESET_DEFAULT, q)) return -1;
	config.thread_level = 1;
	if (!WebPValidateConfig(&config)) return -1;
	WebPPicture pic;
	if (!WebPPictureInit(&pic)) return -1;
	pic.width = w;
	pic.height = h;
	int ok = alpha ? WebPPictureImportRGBA(&pic, pix, stride) : WebPPictureImportRGB(&pic, pix, stride);
	if (!ok) { WebPPictureFree(&pic); return -2; }
	WebPMemoryWriter wr;
	WebPMemoryWriterInit(&wr);
	pic.writer = WebPMemoryWrite;
	pic.custom_ptr = &wr;
	ok = WebPEncode(&config, &pic);
	int code = pic.error_code;
	WebPPictureFree(&pic);
	if (!ok) { WebPMemoryWriterClear(&wr); return code > 0 ? code : -3; }
	*out = wr.mem;
	*n = wr.size;
	return 0;
}
*/
import "C"

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"unsafe"

	"github.com/porchlight/porchlight/engine/imaging"
)

// encodeWebP compresses lossily with libwebp at quality q and wraps the bitstream in an
// extended (VP8X) container carrying the sRGB ICC profile and the EXIF block.
func encodeWebP(w io.Writer, img *imaging.Image, q int, opt EncodeOptions) error {
	width, height := img.W(), img.H()
	if width > 16383 || height > 16383 {
		return fmt.Errorf("encode webp: %dx%d exceeds WebP's 16383 pixel limit", width, height)
	}
	alpha := img.C == 4
	ch := 3
	if alpha {
		ch = 4
	}
	pix := toSRGB8(img, ch)
	var out *C.uint8_t
	var n C.size_t
	a := C.int(0)
	if alpha {
		a = 1
	}
	p := (*C.uint8_t)(unsafe.Pointer(&pix[0]))
	if code := C.pl_webp_encode(p, C.int(width), C.int(height), C.int(width*ch), a, C.float(q), &out, &n); code != 0 || out == nil {
		return fmt.Errorf("encode webp: libwebp failed on a %dx%d image (error %d)", width, height, int(code))
	}
	defer C.WebPFree(unsafe.Pointer(out))
	simple := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(n))
	// The simple file is RIFF/WEBP/one image chunk ("VP8 ", or "VP8L"/"ALPH"+"VP8 ").
	if len(simple) < 20 || string(simple[:4]) != "RIFF" || string(simple[8:12]) != "WEBP" {
		return fmt.Errorf("encode webp: unexpected libwebp output")
	}
	chunks := simple[12:]
	exif := buildEXIF(opt.Meta, width, height, opt.KeepGPS)

	var vp8x [10]byte
	vp8x[0] = 0x20 | 0x08 // ICC, EXIF
	if alpha {
		vp8x[0] |= 0x10
	}
	put24 := func(b []byte, v int) { b[0], b[1], b[2] = byte(v), byte(v>>8), byte(v>>16) }
	put24(vp8x[4:], width-1)
	put24(vp8x[7:], height-1)
	chunk := func(typ string, data []byte) []byte {
		h := make([]byte, 8, 8+len(data)+1)
		copy(h, typ)
		binary.LittleEndian.PutUint32(h[4:], uint32(len(data)))
		h = append(h, data...)
		if len(data)%2 == 1 {
			h = append(h, 0)
		}
		return h
	}
	// Order fixed by the container spec: VP8X, ICCP, (ALPH) image, EXIF.
	body := chunk("VP8X", vp8x[:])
	body = append(body, chunk("ICCP", srgbICC)...)
	body = append(body, chunks...)
	body = append(body, chunk("EXIF", exif)...)
	var hdr [12]byte
	copy(hdr[:], "RIFF")
	binary.LittleEndian.PutUint32(hdr[4:], uint32(4+len(body)))
	copy(hdr[8:], "WEBP")
	bw := bufio.NewWriter(w)
	bw.Write(hdr[:])
	bw.Write(body)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write webp: %w", err)
	}
	return nil
}

// toSRGB8 converts to interleaved 8-bit sRGB with ch (3 or 4) channels.
func toSRGB8(img *imaging.Image, ch int) []byte {
	w, h, c := img.W(), img.H(), img.C
	out := imaging.MakePixels[byte](w * h * ch)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			o := out[y*w*ch : (y+1)*w*ch]
			switch {
			case c == ch: // same layout: a flat map of samples (alpha too, see below)
				if ch == 4 {
					for x := 0; x < w; x++ {
						p := row[x*4 : x*4+4 : x*4+4]
						q := o[x*4 : x*4+4 : x*4+4]
						q[0], q[1], q[2] = enc8(p[0]), enc8(p[1]), enc8(p[2])
						q[3] = uint8(min(max(p[3], 0), 1)*255 + 0.5)
					}
					continue
				}
				o = o[:len(row)]
				for i, v := range row {
					o[i] = enc8(v)
				}
			case c == 1:
				for x := 0; x < w; x++ {
					v := enc8(row[x])
					o[x*ch], o[x*ch+1], o[x*ch+2] = v, v, v
					if ch == 4 {
						o[x*ch+3] = 255
					}
				}
			default:
				for x := 0; x < w; x++ {
					p := row[x*c : x*c+3 : x*c+3]
					q := o[x*ch : x*ch+ch : x*ch+ch]
					q[0], q[1], q[2] = enc8(p[0]), enc8(p[1]), enc8(p[2])
					if ch == 4 {
						a := float32(1)
						if c == 4 {
							a = row[x*c+3]
						}
						q[3] = uint8(min(max(a, 0), 1)*255 + 0.5)
					}
				}
			}
		}
	})
	return out
}
