// Package raw develops camera RAW files with LibRaw: headers and metadata without
// decoding, and a full development (demosaic, camera white balance, camera-to-sRGB
// colour matrix) into 16-bit linear-light sRGB, fed from memory.
package raw

/*
#cgo pkg-config: libraw
#include <stdlib.h>
#include <string.h>
#include <libraw/libraw.h>

typedef struct {
	int width, height, flip;
	int raw_width, raw_height;
	char make[64], model[64], lens[128], artist[64];
	float iso, shutter, aperture, focal;
	long long timestamp;
	int colors;
	int thumb_format, thumb_width, thumb_height;
} pl_info;

static void pl_fill(libraw_data_t *lr, pl_info *o) {
	o->width = lr->sizes.iwidth;
	o->height = lr->sizes.iheight;
	o->flip = lr->sizes.flip;
	o->raw_width = lr->sizes.raw_width;
	o->raw_height = lr->sizes.raw_height;
	strncpy(o->make, lr->idata.make, 63); o->make[63] = 0;
	strncpy(o->model, lr->idata.model, 63); o->model[63] = 0;
	strncpy(o->lens, lr->lens.Lens, 127); o->lens[127] = 0;
	strncpy(o->artist, lr->other.artist, 63); o->artist[63] = 0;
	o->iso = lr->other.iso_speed;
	o->shutter = lr->other.shutter;
	o->aperture = lr->other.aperture;
	o->focal = lr->other.focal_len;
	o->timestamp = (long long)lr->other.timestamp;
	o->colors = lr->idata.colors;
	o->thumb_format = lr->thumbnail.tformat;
	o->thumb_width = lr->thumbnail.twidth;
	o->thumb_height = lr->thumbnail.theight;
}

// pl_dataerr records the first corrupt-data report instead of printing it.
static void pl_dataerr(void *data, const char *file, const int offset) {
	int *p = (int *)data;
	if (*p == 0) *p = offset < 0 ? -1 : offset + 1;
}

// pl_open parses the headers and computes the output size (after flip) without
// decoding. half selects half-size output.
static libraw_data_t *pl_open(void *buf, size_t n, int half, pl_info *info, int *err) {
	libraw_data_t *lr = libraw_init(0);
	if (!lr) { *err = LIBRAW_UNSUFFICIENT_MEMORY; return NULL; }
	int dataerr = 0;
	libraw_set_dataerror_handler(lr, pl_dataerr, &dataerr);
	lr->params.half_size = half;
	*err = libraw_open_buffer(lr, buf, n);
	if (*err != LIBRAW_SUCCESS) { libraw_close(lr); return NULL; }
	*err = libraw_adjust_sizes_info_only(lr);
	if (*err != LIBRAW_SUCCESS) { libraw_close(lr); return NULL; }
	pl_fill(lr, info);
	return lr;
}

// pl_develop opens again (adjust_sizes_info_only is not reversible) and develops to
// 16-bit linear sRGB: camera white balance, AHD demosaic, no auto brightening (so
// exposures of a bracket keep their ratios), highlights clipped.
static libraw_processed_image_t *pl_develop(void *buf, size_t n, int half, pl_info *info, int *err, int *dataerr) {
	libraw_data_t *lr = libraw_init(0);
	if (!lr) { *err = LIBRAW_UNSUFFICIENT_MEMORY; return NULL; }
	libraw_set_dataerror_handler(lr, pl_dataerr, dataerr);
	lr->params.half_size = half;
	lr->params.output_bps = 16;
	lr->params.gamm[0] = 1.0;
	lr->params.gamm[1] = 1.0;
	lr->params.no_auto_bright = 1;
	lr->params.use_camera_wb = 1;
	lr->params.output_color = 1;
	lr->params.user_qual = 3;
	libraw_processed_image_t *img = NULL;
	if ((*err = libraw_open_buffer(lr, buf, n)) == LIBRAW_SUCCESS &&
	    (*err = libraw_unpack(lr)) == LIBRAW_SUCCESS &&
	    (*err = libraw_dcraw_process(lr)) == LIBRAW_SUCCESS) {
		img = libraw_dcraw_make_mem_image(lr, err);
		pl_fill(lr, info);
	}
	libraw_close(lr);
	return img;
}

// pl_thumb extracts the embedded preview; the returned copy is freed with free().
static char *pl_thumb(void *buf, size_t n, int *len, int *fmt, int *err) {
	libraw_data_t *lr = libraw_init(0);
	if (!lr) { *err = LIBRAW_UNSUFFICIENT_MEMORY; return NULL; }
	char *out = NULL;
	int dataerr = 0;
	libraw_set_dataerror_handler(lr, pl_dataerr, &dataerr);
	if ((*err = libraw_open_buffer(lr, buf, n)) == LIBRAW_SUCCESS &&
	    (*err = libraw_unpack_thumb(lr)) == LIBRAW_SUCCESS &&
	    lr->thumbnail.thumb && lr->thumbnail.tlength > 0) {
		out = malloc(lr->thumbnail.tlength);
		if (out) {
			memcpy(out, lr->thumbnail.thumb, lr->thumbnail.tlength);
			*len = lr->thumbnail.tlength;
			*fmt = lr->thumbnail.tformat;
		}
	}
	libraw_close(lr);
	return out;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// Info is what LibRaw reads from a RAW file's headers.
type Info struct {
	Width, Height int // developed size, flip applied
	Flip          int // LibRaw flip code: 0 none, 3 180°, 5 90° CCW, 6 90° CW
	Make, Model   string
	Lens, Artist  string
	ISO           float64
	Shutter       float64 // seconds
	Aperture      float64 // f-number
	FocalLength   float64 // mm
	Time          time.Time
	Colors        int
	ThumbW        int // size of the embedded preview, 0 if none
	ThumbH        int
}

// ErrNoImage is returned for files LibRaw recognises but that hold no decodable raster
// (for example a DNG whose pixel data was stripped).
var ErrNoImage = errors.New("raw: file holds no decodable image")

// CorruptError reports raw data LibRaw found damaged or missing while decoding.
type CorruptError struct{ Offset int64 }

func (e *CorruptError) Error() string {
	if e.Offset < 0 {
		return "raw: image data is corrupted"
	}
	return fmt.Sprintf("raw: image data is corrupted at offset %d", e.Offset)
}

// Error is a LibRaw failure.
type Error struct {
	Code int
	Op   string
}

func (e *Error) Error() string {
	return fmt.Sprintf("libraw %s: %s", e.Op, C.GoString(C.libraw_strerror(C.int(e.Code))))
}

// Unsupported reports whether LibRaw did not recognise the file at all.
func (e *Error) Unsupported() bool { return e.Code == C.LIBRAW_FILE_UNSUPPORTED }

func info(c *C.pl_info) Info {
	in := Info{
		Width: int(c.width), Height: int(c.height), Flip: int(c.flip),
		Make: C.GoString(&c.make[0]), Model: C.GoString(&c.model[0]),
		Lens: C.GoString(&c.lens[0]), Artist: C.GoString(&c.artist[0]),
		ISO: float64(c.iso), Shutter: float64(c.shutter), Aperture: float64(c.aperture),
		FocalLength: float64(c.focal), Colors: int(c.colors),
		ThumbW: int(c.thumb_width), ThumbH: int(c.thumb_height),
	}
	if c.timestamp > 0 {
		in.Time = time.Unix(int64(c.timestamp), 0).UTC()
	}
	return in
}

// pinned runs fn with data pinned, so LibRaw may hold the pointer across its calls.
func pinned(data []byte, fn func(p unsafe.Pointer, n C.size_t)) {
	var pin runtime.Pinner
	pin.Pin(&data[0])
	defer pin.Unpin()
	fn(unsafe.Pointer(&data[0]), C.size_t(len(data)))
}

// probeLocal parses the headers only, in this process.
func probeLocal(data []byte) (Info, error) {
	if len(data) == 0 {
		return Info{}, &Error{Code: C.LIBRAW_FILE_UNSUPPORTED, Op: "open"}
	}
	var ci C.pl_info
	var code C.int
	pinned(data, func(p unsafe.Pointer, n C.size_t) {
		lr := C.pl_open(p, n, 0, &ci, &code)
		if lr != nil {
			C.libraw_close(lr)
		}
	})
	if code != C.LIBRAW_SUCCESS {
		return Info{}, &Error{Code: int(code), Op: "open"}
	}
	in := info(&ci) // adjust_sizes_info_only has already applied the flip to the size
	if in.Width <= 0 || in.Height <= 0 {
		return in, ErrNoImage
	}
	return in, nil
}

// Image is a developed RAW: interleaved 16-bit linear sRGB, 3 samples per pixel.
type Image struct {
	Width, Height int
	Pix           []uint16
}

// developLocal develops in this process and hands the header information and the
// pixels, still in LibRaw's memory, to emit (nc is 3 for RGB or 1 for monochrome
// sensors).
func developLocal(data []byte, half bool, emit func(in Info, w, h, nc int, pix []uint16) error) (Info, error) {
	if len(data) == 0 {
		return Info{}, &Error{Code: C.LIBRAW_FILE_UNSUPPORTED, Op: "open"}
	}
	var ci C.pl_info
	var code, dataErr C.int
	var fail error
	var w, ht int
	pinned(data, func(p unsafe.Pointer, n C.size_t) {
		h := C.int(0)
		if half {
			h = 1
		}
		pi := C.pl_develop(p, n, h, &ci, &code, &dataErr)
		if pi != nil && dataErr != 0 {
			C.libraw_dcraw_clear_mem(pi)
			fail = &CorruptError{Offset: int64(dataErr) - 1}
			return
		}
		if pi == nil {
			if code == C.LIBRAW_SUCCESS {
				code = C.LIBRAW_UNSPECIFIED_ERROR
			}
			fail = &Error{Code: int(code), Op: "develop"}
			return
		}
		defer C.libraw_dcraw_clear_mem(pi)
		if pi._type != C.LIBRAW_IMAGE_BITMAP || pi.bits != 16 || (pi.colors != 3 && pi.colors != 1) {
			fail = fmt.Errorf("raw: unexpected developed image (type %d, %d bits, %d colours)", pi._type, pi.bits, pi.colors)
			return
		}
		nc := int(pi.colors)
		w, ht = int(pi.width), int(pi.height)
		if w <= 0 || ht <= 0 || int(pi.data_size) < w*ht*nc*2 {
			fail = ErrNoImage
			return
		}
		in := info(&ci)
		in.Width, in.Height = w, ht
		fail = emit(in, w, ht, nc, unsafe.Slice((*uint16)(unsafe.Pointer(&pi.data[0])), w*ht*nc))
	})
	if fail != nil {
		return Info{}, fail
	}
	in := info(&ci)
	in.Width, in.Height = w, ht
	return in, nil
}

// toImage copies developed samples into an RGB Image.
func toImage(w, h, nc int, src []uint16) *Image {
	out := &Image{Width: w, Height: h, Pix: make([]uint16, w*h*3)}
	if nc == 3 {
		copy(out.Pix, src)
		return out
	}
	for i, v := range src {
		out.Pix[i*3], out.Pix[i*3+1], out.Pix[i*3+2] = v, v, v
	}
	return out
}

// thumbnailLocal returns the embedded JPEG preview, in this process.
func thumbnailLocal(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, &Error{Code: C.LIBRAW_FILE_UNSUPPORTED, Op: "open"}
	}
	var out []byte
	var code C.int
	pinned(data, func(p unsafe.Pointer, n C.size_t) {
		var ln, fmt C.int
		t := C.pl_thumb(p, n, &ln, &fmt, &code)
		if t == nil {
			return
		}
		defer C.free(unsafe.Pointer(t))
		if fmt == C.LIBRAW_THUMBNAIL_JPEG {
			out = C.GoBytes(unsafe.Pointer(t), ln)
		}
	})
	if out == nil {
		if code != C.LIBRAW_SUCCESS {
			return nil, &Error{Code: int(code), Op: "thumbnail"}
		}
		return nil, ErrNoImage
	}
	return out, nil
}
