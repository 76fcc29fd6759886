package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"sort"
)

// jpegHeader is what the marker segments before the first scan say about a JPEG.
type jpegHeader struct {
	width, height  int
	precision      int // bits per sample
	components     int
	progressive    bool
	exifOff        int64 // offset of the TIFF stream of the EXIF APP1 in the file, 0 if none
	exifLen        int64
	icc            []byte    // reassembled APP2 ICC_PROFILE chunks, nil if none
	adobe          bool      // APP14 "Adobe" present
	adobeTransform int       // 0 = none (RGB/CMYK), 1 = YCbCr, 2 = YCCK
	sampling       [4][2]int // horizontal and vertical sampling factor of each component
	scanComps      int       // components in the first scan (fewer than components: multi-scan)
}

const maxICC = 16 << 20

// scanJPEG walks the marker segments up to the first SOS. It reads only segment headers
// and the payloads it needs (SOF, APP1 EXIF, APP2 ICC, APP14 Adobe).
func scanJPEG(r io.ReaderAt, size int64) (*jpegHeader, error) {
	h := &jpegHeader{}
	type iccChunk struct {
		seq  int
		data []byte
	}
	var chunks []iccChunk
	iccTotal := 0
	var buf [4]byte
	off := int64(2)
	for {
		if off+4 > size {
			return nil, unreadable(nil, "JPEG ends before its first scan")
		}
		if _, err := r.ReadAt(buf[:2], off); err != nil {
			return nil, unreadable(err, "reading JPEG marker at %d", off)
		}
		if buf[0] != 0xFF {
			// Stray bytes before a marker: libjpeg skips them with a harmless warning
			// (some writers pad segments), so the header walk does too.
			next, err := nextFF(r, off, size)
			if err != nil {
				return nil, err
			}
			off = next
			continue
		}
		marker := buf[1]
		if marker == 0xFF { // fill byte
			off++
			continue
		}
		off += 2
		if marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7) {
			continue // markers without a length
		}
		if marker == 0xD9 {
			return nil, unreadable(nil, "JPEG ends before its first scan")
		}
		if _, err := r.ReadAt(buf[:2], off); err != nil {
			return nil, unreadable(err, "reading JPEG segment length at %d", off)
		}
		n := int64(binary.BigEndian.Uint16(buf[:2]))
		if n < 2 || off+n > size {
			return nil, unreadable(nil, "JPEG segment %#02x at %d has a bad length %d", marker, off, n)
		}
		payload := off + 2
		plen := n - 2
		read := func() ([]byte, error) {
			b := make([]byte, plen)
			if _, err := r.ReadAt(b, payload); err != nil {
				return nil, unreadable(err, "reading JPEG segment %#02x", marker)
			}
			return b, nil
		}
		switch {
		case marker == 0xDA: // SOS: header is over
			if h.width == 0 {
				return nil, unreadable(nil, "JPEG has no frame header before its first scan")
			}
			if plen < 1 {
				return nil, unreadable(nil, "JPEG scan header too short")
			}
			if _, err := r.ReadAt(buf[:1], payload); err != nil {
				return nil, unreadable(err, "reading JPEG scan header")
			}
			h.scanComps = int(buf[0])
			if len(chunks) > 0 {
				sort.Slice(chunks, func(i, j int) bool { return chunks[i].seq < chunks[j].seq })
				h.icc = make([]byte, 0, iccTotal)
				for _, c := range chunks {
					h.icc = append(h.icc, c.data...)
				}
			}
			return h, nil
		case marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC:
			b, err := read()
			if err != nil {
				return nil, err
			}
			if len(b) < 6 {
				return nil, unreadable(nil, "JPEG frame header too short")
			}
			if h.width != 0 {
				break // only the first frame counts
			}
			h.precision = int(b[0])
			h.height = int(binary.BigEndian.Uint16(b[1:3]))
			h.width = int(binary.BigEndian.Uint16(b[3:5]))
			h.components = int(b[5])
			h.progressive = marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE
			if marker == 0xC3 || marker == 0xC7 || marker == 0xCB || marker == 0xCF {
				return nil, unsupported("lossless JPEG is not supported")
			}
			if h.width == 0 || h.height == 0 {
				return nil, unreadable(nil, "JPEG frame header says %dx%d", h.width, h.height)
			}
			switch h.components {
			case 1, 3, 4:
			default:
				return nil, unsupported("JPEG with %d components", h.components)
			}
			if len(b) < 6+3*h.components {
				return nil, unreadable(nil, "JPEG frame header too short for %d components", h.components)
			}
			for i := 0; i < h.components; i++ {
				f := b[6+3*i+1]
				h.sampling[i] = [2]int{max(1, int(f>>4)), max(1, int(f&15))}
			}
		case marker == 0xE1 && h.exifOff == 0 && plen > 14:
			var sig [6]byte
			if _, err := r.ReadAt(sig[:], payload); err == nil && string(sig[:]) == "Exif\x00\x00" {
				h.exifOff, h.exifLen = payload+6, plen-6
			}
		case marker == 0xE2 && plen > 14:
			b, err := read()
			if err != nil {
				return nil, err
			}
			if bytes.HasPrefix(b, []byte("ICC_PROFILE\x00")) {
				iccTotal += len(b) - 14
				if iccTotal > maxICC {
					return nil, unreadable(nil, "JPEG ICC profile over %d bytes", maxICC)
				}
				chunks = append(chunks, iccChunk{seq: int(b[12]), data: b[14:]})
			}
		case marker == 0xEE && plen >= 12:
			b, err := read()
			if err != nil {
				return nil, err
			}
			if bytes.HasPrefix(b, []byte("Adobe")) {
				h.adobe = true
				h.adobeTransform = int(b[11])
			}
		}
		off += n
	}
}

// nextFF returns the offset of the next 0xFF byte at or after off.
func nextFF(r io.ReaderAt, off, size int64) (int64, error) {
	var chunk [4096]byte
	for off < size {
		n, err := r.ReadAt(chunk[:min(int64(len(chunk)), size-off)], off)
		if i := bytes.IndexByte(chunk[:n], 0xFF); i >= 0 {
			return off + int64(i), nil
		}
		if n == 0 {
			return 0, unreadable(err, "reading JPEG at %d", off)
		}
		off += int64(n)
	}
	return 0, unreadable(nil, "JPEG ends before its first scan")
}

func (h *jpegHeader) String() string {
	return fmt.Sprintf("%dx%d %d-bit %d components", h.width, h.height, h.precision, h.components)
}
