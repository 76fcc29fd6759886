package codec

/*
#cgo pkg-config: libjpeg
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <setjmp.h>
#include <jpeglib.h>
#include <jerror.h>

// The decoder drives libjpeg itself (not TurboJPEG's one-call API) for three reasons:
// every warning reaches pl_emit with its message code, so a truncated or corrupt scan
// stops the decode at once instead of being papered over with grey; rows come out a
// batch at a time, so a reduced decode never holds a full frame; and the memory
// manager's limit caps what a progressive file's coefficient buffer may take.

typedef struct {
	struct jpeg_error_mgr pub;
	jmp_buf jb;
	int code;    // message code of the failure, or -1 for the scan limit
	int warning; // the failure was a refused warning
	char msg[JMSG_LENGTH_MAX];
} pl_jerr;

typedef struct {
	struct jpeg_decompress_struct d; // first, so a j_common_ptr is a pl_jdec*
	pl_jerr err;
	struct jpeg_progress_mgr prog;
	int max_scans;
	int created;
} pl_jdec;

// pl_harmless lists the warnings that leave every coefficient decoded: padding
// between segments (common in camera files), an unknown JFIF revision or Adobe
// transform code, SOS parameters a sequential decoder ignores, and a damaged ICC
// marker (the profile is parsed separately). Everything else, truncation and
// corruption above all, stops the decode.
static int pl_harmless(int code) {
	switch (code) {
	case JWRN_EXTRANEOUS_DATA:
	case JWRN_JFIF_MAJOR:
	case JWRN_ADOBE_XFORM:
	case JWRN_NOT_SEQUENTIAL:
	case JWRN_BOGUS_ICC:
		return 1;
	}
	return 0;
}

static void pl_fail(j_common_ptr c, int warning) {
	pl_jdec *p = (pl_jdec *)c;
	p->err.code = c->err->msg_code;
	p->err.warning = warning;
	c->err->format_message(c, p->err.msg);
	longjmp(p->err.jb, 1);
}

static void pl_error_exit(j_common_ptr c) { pl_fail(c, 0); }

static void pl_emit(j_common_ptr c, int level) {
	if (level >= 0) return; // trace messages
	if (pl_harmless(c->err->msg_code)) {
		c->err->num_warnings++;
		return;
	}
	pl_fail(c, 1);
}

static void pl_output(j_common_ptr c) {} // never print

static void pl_progress(j_common_ptr c) {
	pl_jdec *p = (pl_jdec *)c;
	if (p->d.input_scan_number > p->max_scans) {
		p->err.code = -1;
		p->err.warning = 0;
		snprintf(p->err.msg, JMSG_LENGTH_MAX, "progressive JPEG has more than %d scans", p->max_scans);
		longjmp(p->err.jb, 1);
	}
}

static pl_jdec *pl_jnew(void) {
	pl_jdec *p = calloc(1, sizeof(pl_jdec));
	if (!p) return NULL;
	p->d.err = jpeg_std_error(&p->err.pub);
	p->err.pub.error_exit = pl_error_exit;
	p->err.pub.emit_message = pl_emit;
	p->err.pub.output_message = pl_output;
	p->prog.progress_monitor = pl_progress;
	p->max_scans = 500;
	return p;
}

// pl_jstart reads the headers of buf (which must outlive p), chooses the output
// colour space from the file's (gray, CMYK for CMYK and YCCK, else RGB), scales by
// 1/denom and starts decompressing: a progressive or multi-scan file is read whole
// here. max_mem caps libjpeg's own buffers (0: no cap).
static int pl_jstart(pl_jdec *p, const unsigned char *buf, unsigned long n, int denom, long max_mem,
                     int *w, int *h, int *nc) {
	if (setjmp(p->err.jb)) return -1;
	jpeg_create_decompress(&p->d);
	p->created = 1;
	p->d.progress = &p->prog;
	if (max_mem > 0) p->d.mem->max_memory_to_use = max_mem;
	jpeg_mem_src(&p->d, buf, n);
	jpeg_read_header(&p->d, TRUE);
	switch (p->d.jpeg_color_space) {
	case JCS_GRAYSCALE:
		p->d.out_color_space = JCS_GRAYSCALE;
		break;
	case JCS_CMYK:
	case JCS_YCCK:
		p->d.out_color_space = JCS_CMYK;
		break;
	default:
		p->d.out_color_space = JCS_RGB;
	}
	p->d.scale_num = 1;
	p->d.scale_denom = denom;
	p->d.dct_method = JDCT_ISLOW;
	jpeg_start_decompress(&p->d);
	*w = p->d.output_width;
	*h = p->d.output_height;
	*nc = p->d.output_components;
	return 0;
}

// pl_jread decodes the next rows scanlines into dst, stride bytes apart.
static int pl_jread(pl_jdec *p, unsigned char *dst, long stride, int rows) {
	JSAMPROW ptrs[64];
	if (setjmp(p->err.jb)) return -1;
	int done = 0;
	while (done < rows && p->d.output_scanline < p->d.output_height) {
		int k = rows - done;
		if (k > 64) k = 64;
		for (int i = 0; i < k; i++) ptrs[i] = dst + (long)(done + i) * stride;
		done += jpeg_read_scanlines(&p->d, ptrs, k);
	}
	return done;
}

// pl_jfinish reads what follows the last scanline up to the end-of-image marker.
static int pl_jfinish(pl_jdec *p) {
	if (setjmp(p->err.jb)) return -1;
	jpeg_finish_decompress(&p->d);
	return 0;
}

static void pl_jfree(pl_jdec *p) {
	if (p->created) jpeg_destroy_decompress(&p->d);
	free(p);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// jpegDecoder reads one JPEG held in memory through libjpeg.
type jpegDecoder struct {
	p    *C.pl_jdec
	pin  runtime.Pinner
	w, h int // output size, after DCT scaling
	nc   int // output components: 1 gray, 3 RGB, 4 CMYK
}

// openJPEG starts decoding buf at 1/denom scale (denom 1, 2, 4 or 8). maxMem caps
// libjpeg's buffers (0: none). buf must not change until Close.
func openJPEG(buf []byte, denom int, maxMem int64) (*jpegDecoder, error) {
	if len(buf) == 0 {
		return nil, unreadable(nil, "the JPEG is empty")
	}
	p := C.pl_jnew()
	if p == nil {
		return nil, fmt.Errorf("jpeg: out of memory")
	}
	d := &jpegDecoder{p: p}
	d.pin.Pin(&buf[0])
	var w, h, nc C.int
	if C.pl_jstart(p, (*C.uchar)(unsafe.Pointer(&buf[0])), C.ulong(len(buf)), C.int(denom), C.long(maxMem), &w, &h, &nc) != 0 {
		err := d.err()
		d.Close()
		return nil, err
	}
	d.w, d.h, d.nc = int(w), int(h), int(nc)
	return d, nil
}

// read decodes the next len(dst)/stride rows into dst and returns how many it wrote
// (fewer only at the end of the image).
func (d *jpegDecoder) read(dst []byte, stride int) (int, error) {
	rows := len(dst) / stride
	if rows == 0 {
		return 0, nil
	}
	n := C.pl_jread(d.p, (*C.uchar)(unsafe.Pointer(&dst[0])), C.long(stride), C.int(rows))
	if n < 0 {
		return 0, d.err()
	}
	return int(n), nil
}

// finish reads through the end-of-image marker, so data missing after the last row
// is noticed too.
func (d *jpegDecoder) finish() error {
	if C.pl_jfinish(d.p) != 0 {
		return d.err()
	}
	return nil
}

// Close frees libjpeg's state; the decoder cannot be used afterwards.
func (d *jpegDecoder) Close() {
	if d.p != nil {
		C.pl_jfree(d.p)
		d.p = nil
	}
	d.pin.Unpin()
}

// err describes the failure libjpeg reported. Everything is unreadable except a
// coefficient buffer over the memory cap, which is the file's size, not damage.
func (d *jpegDecoder) err() error {
	msg := C.GoString(&d.p.err.msg[0])
	code := int(d.p.err.code)
	switch {
	case d.p.err.warning != 0 && isTruncation(code):
		return unreadable(nil, "the JPEG's image data is truncated (%s)", msg)
	case d.p.err.warning != 0:
		return unreadable(nil, "the JPEG's image data is corrupt (%s)", msg)
	case code == C.JERR_NO_BACKING_STORE || code == C.JERR_OUT_OF_MEMORY:
		return &Error{Code: CodeResolutionTooLarge,
			Reason: "this JPEG needs more memory to decode than the limit allows (progressive or multi-scan files hold every coefficient)"}
	}
	return unreadable(nil, "decoding JPEG: %s", strings.TrimSpace(msg))
}

// isTruncation reports the warnings libjpeg gives when the data ends before the
// frame does: the input ran out, or a marker came where entropy data should be.
func isTruncation(code int) bool {
	return code == C.JWRN_JPEG_EOF || code == C.JWRN_HIT_MARKER
}
