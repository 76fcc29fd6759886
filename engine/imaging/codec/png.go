package codec

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"image/png"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
)

func probePNG(r io.ReaderAt, size int64) (*header, error) {
	h := &header{}
	var hdr [8]byte
	off := int64(8)
	first := true
	for n := 0; ; n++ {
		if off+8 > size {
			if first {
				return nil, unreadable(nil, "PNG ends inside its header")
			}
			break // a missing IEND is tolerated; the decoder decides
		}
		if _, err := r.ReadAt(hdr[:], off); err != nil {
			return nil, unreadable(err, "reading PNG chunk at %d", off)
		}
		ln := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := string(hdr[4:8])
		data := off + 8
		if ln > 1<<31 || data+ln > size {
			if first {
				return nil, unreadable(nil, "PNG chunk %q at %d runs past the end", typ, off)
			}
			break
		}
		read := func(limit int64) ([]byte, error) {
			if ln > limit {
				return nil, fmt.Errorf("%s chunk of %d bytes", typ, ln)
			}
			b := make([]byte, ln)
			_, err := r.ReadAt(b, data)
			return b, err
		}
		if first {
			if typ != "IHDR" || ln < 13 {
				return nil, unreadable(nil, "PNG does not start with an IHDR chunk")
			}
			b, err := read(13)
			if err != nil {
				return nil, unreadable(err, "reading PNG IHDR")
			}
			w, ht := binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
			if w == 0 || ht == 0 || w > 1<<30 || ht > 1<<30 {
				return nil, unreadable(nil, "PNG header says %dx%d", w, ht)
			}
			h.width, h.height, h.bitDepth = int(w), int(ht), int(b[8])
			switch ct := b[9]; ct {
			case 0:
				h.model = "gray"
			case 4:
				h.model, h.hasAlpha = "gray", true
			case 2, 3:
				h.model = "rgb"
			case 6:
				h.model, h.hasAlpha = "rgb", true
			default:
				return nil, unreadable(nil, "PNG colour type %d", ct)
			}
			if b[9] == 3 {
				h.bitDepth = 8 // palette entries are 8-bit
			}
			first = false
		} else {
			switch typ {
			case "tRNS":
				h.hasAlpha = true
			case "iCCP":
				if b, err := read(maxICC); err == nil {
					if i := bytes.IndexByte(b, 0); i > 0 && i+2 <= len(b) {
						if zr, err := zlib.NewReader(bytes.NewReader(b[i+2:])); err == nil {
							if p, err := io.ReadAll(io.LimitReader(zr, maxICC)); err == nil {
								h.icc = p
							}
						}
					}
				}
			case "eXIf":
				if b, err := read(maxThumbnail + 1<<16); err == nil {
					exifFromBlock(b, &h.meta)
				}
			case "acTL":
				return nil, unsupported("animated PNG is not supported")
			case "IEND":
				h.orientation = h.meta.Orientation
				return h, nil
			}
		}
		off = data + ln + 4
		if n > 1<<20 {
			return nil, unreadable(nil, "PNG has too many chunks")
		}
	}
	h.orientation = h.meta.Orientation
	return h, nil
}

func decodePNG(r io.ReaderAt, size int64, h *header) (*imaging.Image, error) {
	m, err := png.Decode(io.NewSectionReader(r, 0, size))
	if err != nil {
		return nil, unreadable(err, "decoding PNG")
	}
	return fromGoImage(m, h), nil
}
