package codec

/*
#cgo pkg-config: libturbojpeg
#include <turbojpeg.h>
*/
import "C"

import (
	"bufio"
	"fmt"
	"io"
	"unsafe"

	"github.com/porchlight/porchlight/engine/imaging"
)

// encodeJPEG compresses with TurboJPEG: 4:2:0 chroma below quality 95 (what cameras
// and web encoders use), 4:4:4 from 95 up, gray for 1-channel images. The JFIF APP0
// segment TurboJPEG writes is replaced by EXIF (APP1) and the sRGB profile (APP2).
func encodeJPEG(w io.Writer, img *imaging.Image, q int, opt EncodeOptions) error {
	width, height := img.W(), img.H()
	if width > 65535 || height > 65535 {
		return fmt.Errorf("encode jpeg: %dx%d exceeds JPEG's 65535 pixel limit", width, height)
	}
	nch, pf, samp := 3, C.int(C.TJPF_RGB), C.int(C.TJSAMP_420)
	if img.C == 1 {
		nch, pf, samp = 1, C.TJPF_GRAY, C.TJSAMP_GRAY
	} else if q >= 95 {
		samp = C.TJSAMP_444
	}
	pix := toSRGB8(img, nch)

	handle := C.tjInitCompress()
	if handle == nil {
		return fmt.Errorf("encode jpeg: TurboJPEG init failed")
	}
	defer C.tjDestroy(handle)
	bufSize := C.tjBufSize(C.int(width), C.int(height), samp)
	out := (*C.uchar)(C.tjAlloc(C.int(bufSize)))
	if out == nil {
		return fmt.Errorf("encode jpeg: cannot allocate %d bytes", bufSize)
	}
	defer C.tjFree(out)
	n := C.ulong(bufSize)
	if C.tjCompress2(handle, (*C.uchar)(unsafe.Pointer(&pix[0])), C.int(width), C.int(width*nch), C.int(height),
		pf, &out, &n, samp, C.int(q), C.TJFLAG_ACCURATEDCT|C.TJFLAG_NOREALLOC) != 0 {
		return fmt.Errorf("encode jpeg: %s", C.GoString(C.tjGetErrorStr2(handle)))
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(n))
	rest := b[2:]
	if len(rest) > 4 && rest[0] == 0xFF && rest[1] == 0xE0 { // drop JFIF APP0
		rest = rest[2+(int(rest[2])<<8|int(rest[3])):]
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.Write(b[:2])
	bw.Write(jpegMetaSegments(img, opt))
	bw.Write(rest)
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write jpeg: %w", err)
	}
	return nil
}
