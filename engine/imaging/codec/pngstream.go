package codec

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// A PNG is streamed row by row: only the current and previous filtered rows and one
// row of linear samples are held, never the frame. It checks everything image/png
// does on the way (every chunk's CRC, the zlib checksum, the data filling exactly the
// frame, an IEND chunk), so a file that streams is one the full decoder reads.

// maxRowBytes bounds the row buffers of a streamed decode: rows of linear RGBA
// samples up to 64 MB, over 4 million pixels wide.
const maxRowBytes = 64 << 20

// rowTooWide refuses a frame whose single row would outgrow the row buffers.
func rowTooWide(w int) error {
	return &Error{Code: CodeResolutionTooLarge,
		Reason: fmt.Sprintf("rows of %d pixels are wider than this program reads (at most %d)", w, maxRowBytes/16)}
}

// pngPixels receives streamed pixels: row y, columns x0, x0+step, ..., as linear
// samples with the channel count streamPNG was asked for.
type pngPixels func(y, x0, step int, px []float32)

// idatReader reads the data of consecutive IDAT chunks as one stream, verifying each
// chunk's CRC as it ends. At the first other chunk it reports io.EOF and remembers
// where that chunk starts.
type idatReader struct {
	r      io.ReaderAt
	size   int64
	off    int64 // next byte to read
	remain int64 // bytes left in the current chunk
	crc    uint32
	next   int64 // offset of the chunk after the IDAT run, once reached
	done   bool
	hdr    [8]byte
}

func (d *idatReader) Read(p []byte) (int, error) {
	for d.remain == 0 {
		if d.done {
			return 0, io.EOF
		}
		if err := d.endChunk(); err != nil {
			return 0, err
		}
	}
	n := int(min(int64(len(p)), d.remain))
	k, err := d.r.ReadAt(p[:n], d.off)
	d.crc = crc32.Update(d.crc, crc32.IEEETable, p[:k])
	d.off += int64(k)
	d.remain -= int64(k)
	if k < n {
		return k, unreadable(err, "reading PNG image data at %d", d.off)
	}
	return k, nil
}

// endChunk checks the CRC of the chunk just read and opens the next one if it is an
// IDAT.
func (d *idatReader) endChunk() error {
	if d.off+4 > d.size {
		return unreadable(nil, "the PNG ends inside its image data")
	}
	if _, err := d.r.ReadAt(d.hdr[:4], d.off); err != nil {
		return unreadable(err, "reading a PNG chunk checksum")
	}
	if binary.BigEndian.Uint32(d.hdr[:4]) != d.crc {
		return unreadable(nil, "PNG IDAT chunk at %d has a bad checksum", d.off)
	}
	d.off += 4
	ln, typ, err := pngChunkHeader(d.r, d.size, d.off, d.hdr[:])
	if err != nil {
		return err
	}
	if typ != "IDAT" {
		d.next, d.done = d.off, true
		return nil
	}
	d.crc = crc32.Update(0, crc32.IEEETable, d.hdr[4:8])
	d.off += 8
	d.remain = ln
	return nil
}

// pngChunkHeader reads the length and type of the chunk at off and checks that its
// data and CRC lie inside the file.
func pngChunkHeader(r io.ReaderAt, size, off int64, buf []byte) (int64, string, error) {
	if off+8 > size {
		return 0, "", unreadable(nil, "the PNG ends before its IEND chunk")
	}
	if _, err := r.ReadAt(buf[:8], off); err != nil {
		return 0, "", unreadable(err, "reading PNG chunk at %d", off)
	}
	ln := int64(binary.BigEndian.Uint32(buf[:4]))
	typ := string(buf[4:8])
	if ln > 1<<31-1 || off+8+ln+4 > size {
		return 0, "", unreadable(nil, "PNG chunk %q at %d runs past the end of the file", typ, off)
	}
	return ln, typ, nil
}

// pngState is what the chunks before the image data set.
type pngState struct {
	width, height int
	depth, colour int
	interlaced    bool
	palette       [256][4]float32 // linear RGB and alpha; entries past PLTE are opaque black
	havePalette   bool
	trns          []byte
}

// streamPNG decodes every row of the PNG into emit as linear samples with c channels
// (3, or 4 with alpha), converting through the header's profile. It reads the whole
// file: a damaged or truncated one fails as unreadable.
func streamPNG(r io.ReaderAt, size int64, h *header, c int, emit pngPixels) error {
	if int64(h.width)*int64(c)*4 > maxRowBytes {
		return rowTooWide(h.width)
	}
	var st pngState
	var hdr [8]byte
	buf := make([]byte, 32<<10)
	off := int64(8)
	seenIHDR, seenImage := false, false
	for {
		ln, typ, err := pngChunkHeader(r, size, off, hdr[:])
		if err != nil {
			return err
		}
		if !seenIHDR && typ != "IHDR" {
			return unreadable(nil, "PNG does not start with an IHDR chunk")
		}
		if typ == "IDAT" && !seenImage {
			if st.colour == 3 && !st.havePalette {
				return unreadable(nil, "palette PNG has no PLTE chunk before its image data")
			}
			idat := &idatReader{r: r, size: size, off: off + 8, remain: ln,
				crc: crc32.Update(0, crc32.IEEETable, hdr[4:8])}
			if err := st.decode(idat, h, c, emit); err != nil {
				return err
			}
			// Skip (and checksum) what is left of the IDAT run.
			if _, err := io.CopyBuffer(io.Discard, idat, buf); err != nil {
				return err
			}
			seenImage = true
			off = idat.next
			continue
		}
		// Any other chunk: checksum it, keeping the data of the few that matter.
		var keep []byte
		switch typ {
		case "IHDR", "PLTE", "tRNS":
			if ln > 768 {
				return unreadable(nil, "PNG %s chunk of %d bytes", typ, ln)
			}
			keep = make([]byte, ln)
		}
		crc := crc32.Update(0, crc32.IEEETable, hdr[4:8])
		for p := int64(0); p < ln; {
			n := int(min(ln-p, int64(len(buf))))
			if _, err := r.ReadAt(buf[:n], off+8+p); err != nil {
				return unreadable(err, "reading PNG chunk %q", typ)
			}
			crc = crc32.Update(crc, crc32.IEEETable, buf[:n])
			if keep != nil {
				copy(keep[p:], buf[:n])
			}
			p += int64(n)
		}
		if _, err := r.ReadAt(hdr[:4], off+8+ln); err != nil {
			return unreadable(err, "reading PNG chunk checksum")
		}
		if binary.BigEndian.Uint32(hdr[:4]) != crc {
			return unreadable(nil, "PNG chunk %q at %d has a bad checksum", typ, off)
		}
		switch typ {
		case "IHDR":
			if seenIHDR || len(keep) != 13 {
				return unreadable(nil, "PNG has a malformed IHDR chunk")
			}
			seenIHDR = true
			st.width, st.height = int(binary.BigEndian.Uint32(keep[0:4])), int(binary.BigEndian.Uint32(keep[4:8]))
			st.depth, st.colour = int(keep[8]), int(keep[9])
			if keep[10] != 0 || keep[11] != 0 || keep[12] > 1 {
				return unreadable(nil, "PNG IHDR has an unknown compression, filter or interlace method")
			}
			st.interlaced = keep[12] == 1
			if st.width != h.width || st.height != h.height {
				return unreadable(nil, "PNG IHDR changed while reading")
			}
			if !validPNGDepth(st.colour, st.depth) {
				return unreadable(nil, "PNG colour type %d cannot have bit depth %d", st.colour, st.depth)
			}
		case "PLTE":
			if len(keep)%3 != 0 || len(keep) == 0 {
				return unreadable(nil, "PNG palette of %d bytes", len(keep))
			}
			st.setPalette(keep, h)
		case "tRNS":
			st.trns = keep
			if st.havePalette {
				st.setPaletteAlpha()
			}
		case "IEND":
			if !seenImage {
				return unreadable(nil, "PNG has no image data")
			}
			return nil
		}
		off += 8 + ln + 4
	}
}

func validPNGDepth(colour, depth int) bool {
	switch colour {
	case 0:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16
	case 3:
		return depth == 1 || depth == 2 || depth == 4 || depth == 8
	case 2, 4, 6:
		return depth == 8 || depth == 16
	}
	return false
}

func (st *pngState) setPalette(b []byte, h *header) {
	lut := linearLUT8(fitting(h))
	for i := range st.palette {
		st.palette[i] = [4]float32{0, 0, 0, 1}
	}
	for i := 0; i < len(b)/3 && i < 256; i++ {
		st.palette[i] = [4]float32{lut[0][b[3*i]], lut[1][b[3*i+1]], lut[2][b[3*i+2]], 1}
	}
	st.havePalette = true
	if st.trns != nil {
		st.setPaletteAlpha()
	}
}

func (st *pngState) setPaletteAlpha() {
	if st.colour != 3 {
		return
	}
	for i, a := range st.trns[:min(len(st.trns), len(st.palette))] {
		st.palette[i][3] = float32(a) / 255
	}
}

// fitting is the header's profile when it describes the pixel model.
func fitting(h *header) *iccProfile {
	if h.profile != nil && profileFits(h.profile, h.model) {
		return h.profile
	}
	return nil
}

// adam7 are the interlace passes: x0, y0, dx, dy.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// decode inflates and unfilters the image data pass by pass, row by row.
func (st *pngState) decode(idat io.Reader, h *header, c int, emit pngPixels) error {
	zr, err := zlib.NewReader(bufio.NewReaderSize(idat, 64<<10))
	if err != nil {
		return pngDataError(err)
	}
	channels := map[int]int{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[st.colour]
	bitsPP := channels * st.depth
	bpp := max(1, bitsPP/8) // filter distance in bytes
	rowBytes := func(w int) int { return (w*bitsPP + 7) / 8 }
	full := rowBytes(st.width)
	cur, prev := make([]byte, full+1), make([]byte, full+1)
	px := make([]float32, st.width*c)
	conv := st.converter(h, c)
	passes := [][4]int{{0, 0, 1, 1}}
	if st.interlaced {
		passes = adam7[:]
	}
	for _, p := range passes {
		pw, ph := (st.width-p[0]+p[2]-1)/p[2], (st.height-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		n := rowBytes(pw)
		clear(prev[:n+1])
		for j := 0; j < ph; j++ {
			if _, err := io.ReadFull(zr, cur[:n+1]); err != nil {
				return pngDataError(err)
			}
			if err := unfilter(cur[0], cur[1:n+1], prev[1:n+1], bpp); err != nil {
				return err
			}
			conv(cur[1:n+1], px[:pw*c])
			emit(p[1]+j*p[3], p[0], p[2], px[:pw*c])
			cur, prev = prev, cur
		}
	}
	// The stream must end here: this also verifies the zlib checksum.
	var one [1]byte
	if n, err := io.ReadFull(zr, one[:]); n != 0 {
		return unreadable(nil, "PNG has more image data than its frame holds")
	} else if !errors.Is(err, io.EOF) {
		return pngDataError(err)
	}
	return nil
}

func pngDataError(err error) error {
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return unreadable(err, "the PNG's image data ends before its last row")
	}
	return unreadable(err, "the PNG's image data is corrupt: %v", err)
}

// unfilter reverses PNG filter ft on row cur, given the previous row.
func unfilter(ft byte, cur, prev []byte, bpp int) error {
	switch ft {
	case 0:
	case 1:
		for i := bpp; i < len(cur); i++ {
			cur[i] += cur[i-bpp]
		}
	case 2:
		for i, p := range prev {
			cur[i] += p
		}
	case 3:
		for i := 0; i < bpp && i < len(cur); i++ {
			cur[i] += prev[i] / 2
		}
		for i := bpp; i < len(cur); i++ {
			cur[i] += byte((int(cur[i-bpp]) + int(prev[i])) / 2)
		}
	case 4:
		for i := 0; i < bpp && i < len(cur); i++ {
			cur[i] += prev[i] // paeth(0, up, 0) is up
		}
		for i := bpp; i < len(cur); i++ {
			a, b, cc := int(cur[i-bpp]), int(prev[i]), int(prev[i-bpp])
			p := a + b - cc
			pa, pb, pc := abs(p-a), abs(p-b), abs(p-cc)
			switch {
			case pa <= pb && pa <= pc:
				cur[i] += byte(a)
			case pb <= pc:
				cur[i] += byte(b)
			default:
				cur[i] += byte(cc)
			}
		}
	default:
		return unreadable(nil, "PNG row has an unknown filter type %d", ft)
	}
	return nil
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// converter returns the function that turns one unfiltered row into linear samples
// with c channels, as fromGoImage would have: through the profile's tone curves, sub-byte
// gray scaled to 8 bits, tRNS colours made transparent.
func (st *pngState) converter(h *header, c int) func(src []byte, dst []float32) {
	p := fitting(h)
	lut := linearLUT8(p)
	var lut16 *[3][]float32
	if st.depth == 16 {
		lut16 = linearLUT16(p)
	}
	u16 := func(b []byte, i int) uint16 { return uint16(b[2*i])<<8 | uint16(b[2*i+1]) }
	var trnsGray = -1
	var trnsRGB [3]int
	trnsRGB[0] = -1
	switch {
	case st.colour == 0 && len(st.trns) >= 2:
		trnsGray = int(u16(st.trns, 0))
	case st.colour == 2 && len(st.trns) >= 6:
		trnsRGB = [3]int{int(u16(st.trns, 0)), int(u16(st.trns, 1)), int(u16(st.trns, 2))}
	}
	put := func(dst []float32, x int, r, g, b, a float32) {
		o := dst[x*c : x*c+c]
		o[0], o[1], o[2] = r, g, b
		if c == 4 {
			o[3] = a
		}
	}
	switch st.colour {
	case 0: // gray
		if st.depth == 16 {
			return func(src []byte, dst []float32) {
				for x := 0; x < len(dst)/c; x++ {
					v := u16(src, x)
					g, a := lut16[0][v], float32(1)
					if int(v) == trnsGray {
						a = 0
					}
					put(dst, x, g, g, g, a)
				}
			}
		}
		d := st.depth
		scale := 255 / (1<<d - 1)
		mask := 1<<d - 1
		return func(src []byte, dst []float32) {
			for x := 0; x < len(dst)/c; x++ {
				bit := x * d
				v := int(src[bit/8]>>(8-d-bit%8)) & mask
				g, a := lut[0][v*scale], float32(1)
				if v == trnsGray {
					a = 0
				}
				put(dst, x, g, g, g, a)
			}
		}
	case 2: // RGB
		if st.depth == 16 && c == 3 { // no tRNS: the common 16-bit photo, kept tight
			l0, l1, l2 := lut16[0], lut16[1], lut16[2]
			return func(src []byte, dst []float32) {
				for x := 0; x+2 < len(dst); x += 3 {
					s := src[2*x : 2*x+6 : 2*x+6]
					o := dst[x : x+3 : x+3]
					o[0] = l0[uint16(s[0])<<8|uint16(s[1])]
					o[1] = l1[uint16(s[2])<<8|uint16(s[3])]
					o[2] = l2[uint16(s[4])<<8|uint16(s[5])]
				}
			}
		}
		if st.depth == 8 && c == 3 {
			return func(src []byte, dst []float32) { row8ToLinear(src, 3, dst, 3, lut) }
		}
		if st.depth == 16 {
			return func(src []byte, dst []float32) {
				for x := 0; x < len(dst)/c; x++ {
					r, g, b := u16(src, 3*x), u16(src, 3*x+1), u16(src, 3*x+2)
					a := float32(1)
					if int(r) == trnsRGB[0] && int(g) == trnsRGB[1] && int(b) == trnsRGB[2] {
						a = 0
					}
					put(dst, x, lut16[0][r], lut16[1][g], lut16[2][b], a)
				}
			}
		}
		return func(src []byte, dst []float32) {
			for x := 0; x < len(dst)/c; x++ {
				s := src[3*x : 3*x+3 : 3*x+3]
				a := float32(1)
				if int(s[0]) == trnsRGB[0] && int(s[1]) == trnsRGB[1] && int(s[2]) == trnsRGB[2] {
					a = 0
				}
				put(dst, x, lut[0][s[0]], lut[1][s[1]], lut[2][s[2]], a)
			}
		}
	case 3: // palette
		d := st.depth
		mask := 1<<d - 1
		return func(src []byte, dst []float32) {
			for x := 0; x < len(dst)/c; x++ {
				bit := x * d
				e := &st.palette[int(src[bit/8]>>(8-d-bit%8))&mask]
				put(dst, x, e[0], e[1], e[2], e[3])
			}
		}
	case 4: // gray and alpha
		if st.depth == 16 {
			return func(src []byte, dst []float32) {
				for x := 0; x < len(dst)/c; x++ {
					g := lut16[0][u16(src, 2*x)]
					put(dst, x, g, g, g, float32(u16(src, 2*x+1))/65535)
				}
			}
		}
		return func(src []byte, dst []float32) {
			for x := 0; x < len(dst)/c; x++ {
				g := lut[0][src[2*x]]
				put(dst, x, g, g, g, float32(src[2*x+1])/255)
			}
		}
	}
	// RGBA
	if st.depth == 16 {
		return func(src []byte, dst []float32) {
			for x := 0; x < len(dst)/c; x++ {
				put(dst, x, lut16[0][u16(src, 4*x)], lut16[1][u16(src, 4*x+1)], lut16[2][u16(src, 4*x+2)],
					float32(u16(src, 4*x+3))/65535)
			}
		}
	}
	return func(src []byte, dst []float32) { row8ToLinear(src, 4, dst, c, lut) }
}
