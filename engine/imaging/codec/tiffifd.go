package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// tiffFile reads the IFD structure of a TIFF stream: a whole TIFF or RAW file, or the
// EXIF block of a JPEG, PNG, WebP or HEIC. Offsets inside the stream are relative to
// base; every read is bounds-checked so corrupt offsets give errors, never panics.
type tiffFile struct {
	r     io.ReaderAt
	base  int64
	size  int64 // bytes available from base
	bo    binary.ByteOrder
	magic uint16
	ifd0  uint32
}

// TIFF field types and their sizes in bytes.
var tiffTypeSize = [...]int{0, 1, 1, 2, 4, 8, 1, 1, 2, 4, 8, 4, 8, 4}

const (
	maxIFDEntries = 4096
	maxTagBytes   = 64 << 20 // refuse absurd tag payloads from corrupt counts
)

type ifdEntry struct {
	Tag, Type uint16
	Count     uint32
	Val       [4]byte // inline value or offset
}

type ifd struct {
	entries []ifdEntry
	next    uint32
}

var errNotTIFF = errors.New("not a TIFF structure")

// openTIFF reads the 8-byte header at base. Besides classic TIFF (42) it accepts the
// header variants of Olympus ORF ("RO", "RS") and Panasonic RW2 (0x55).
func openTIFF(r io.ReaderAt, base, size int64) (*tiffFile, error) {
	var h [8]byte
	if size < 8 {
		return nil, errNotTIFF
	}
	if _, err := r.ReadAt(h[:], base); err != nil {
		return nil, errNotTIFF
	}
	t := &tiffFile{r: r, base: base, size: size}
	switch string(h[:2]) {
	case "II":
		t.bo = binary.LittleEndian
	case "MM":
		t.bo = binary.BigEndian
	default:
		return nil, errNotTIFF
	}
	t.magic = t.bo.Uint16(h[2:4])
	switch t.magic {
	case 42, 0x4F52, 0x5352, 0x55:
	default:
		return nil, errNotTIFF
	}
	t.ifd0 = t.bo.Uint32(h[4:8])
	return t, nil
}

func (t *tiffFile) read(off uint32, n int) ([]byte, error) {
	if n < 0 || int64(off)+int64(n) > t.size {
		return nil, fmt.Errorf("tiff: %d bytes at offset %d run past the end (%d)", n, off, t.size)
	}
	b := make([]byte, n)
	if _, err := t.r.ReadAt(b, t.base+int64(off)); err != nil && !(err == io.EOF && n == len(b)) {
		return nil, fmt.Errorf("tiff: reading %d bytes at %d: %w", n, off, err)
	}
	return b, nil
}

func (t *tiffFile) readIFD(off uint32) (ifd, error) {
	if off < 8 {
		return ifd{}, fmt.Errorf("tiff: IFD offset %d inside the header", off)
	}
	cb, err := t.read(off, 2)
	if err != nil {
		return ifd{}, err
	}
	n := int(t.bo.Uint16(cb))
	if n > maxIFDEntries {
		return ifd{}, fmt.Errorf("tiff: IFD at %d claims %d entries", off, n)
	}
	b, err := t.read(off+2, n*12+4)
	if err != nil {
		// Some writers omit the next-IFD pointer of the last IFD.
		if b, err = t.read(off+2, n*12); err != nil {
			return ifd{}, err
		}
		b = append(b, 0, 0, 0, 0)
	}
	d := ifd{entries: make([]ifdEntry, n), next: t.bo.Uint32(b[n*12:])}
	for i := range d.entries {
		e := b[i*12:]
		d.entries[i] = ifdEntry{Tag: t.bo.Uint16(e), Type: t.bo.Uint16(e[2:]), Count: t.bo.Uint32(e[4:])}
		copy(d.entries[i].Val[:], e[8:12])
	}
	return d, nil
}

func (d ifd) find(tag uint16) (ifdEntry, bool) {
	for _, e := range d.entries {
		if e.Tag == tag {
			return e, true
		}
	}
	return ifdEntry{}, false
}

// data returns the payload bytes of an entry.
func (t *tiffFile) data(e ifdEntry) ([]byte, error) {
	if int(e.Type) >= len(tiffTypeSize) || e.Type == 0 {
		return nil, fmt.Errorf("tiff: tag %#x has unknown type %d", e.Tag, e.Type)
	}
	n := int64(tiffTypeSize[e.Type]) * int64(e.Count)
	if n > maxTagBytes {
		return nil, fmt.Errorf("tiff: tag %#x claims %d bytes", e.Tag, n)
	}
	if n <= 4 {
		return e.Val[:n], nil
	}
	return t.read(t.bo.Uint32(e.Val[:]), int(n))
}

// uints returns the values of an integer entry (BYTE, SHORT, LONG, IFD and signed kinds).
func (t *tiffFile) uints(e ifdEntry) []uint32 {
	b, err := t.data(e)
	if err != nil {
		return nil
	}
	out := make([]uint32, 0, e.Count)
	for i := 0; i < int(e.Count); i++ {
		switch e.Type {
		case 1, 6, 7:
			out = append(out, uint32(b[i]))
		case 3, 8:
			out = append(out, uint32(t.bo.Uint16(b[i*2:])))
		case 4, 9, 13:
			out = append(out, t.bo.Uint32(b[i*4:]))
		default:
			return out
		}
	}
	return out
}

func (t *tiffFile) uint(e ifdEntry) (uint32, bool) {
	v := t.uints(e)
	if len(v) == 0 {
		return 0, false
	}
	return v[0], true
}

// floats returns the values of a RATIONAL, SRATIONAL, FLOAT, DOUBLE or integer entry.
func (t *tiffFile) floats(e ifdEntry) []float64 {
	b, err := t.data(e)
	if err != nil {
		return nil
	}
	var out []float64
	for i := 0; i < int(e.Count); i++ {
		switch e.Type {
		case 5, 10:
			n, d := t.bo.Uint32(b[i*8:]), t.bo.Uint32(b[i*8+4:])
			if d == 0 {
				out = append(out, 0)
				continue
			}
			if e.Type == 10 {
				out = append(out, float64(int32(n))/float64(int32(d)))
			} else {
				out = append(out, float64(n)/float64(d))
			}
		case 11:
			out = append(out, float64(math.Float32frombits(t.bo.Uint32(b[i*4:]))))
		case 12:
			out = append(out, math.Float64frombits(t.bo.Uint64(b[i*8:])))
		case 8:
			out = append(out, float64(int16(t.bo.Uint16(b[i*2:]))))
		case 9:
			out = append(out, float64(int32(t.bo.Uint32(b[i*4:]))))
		default:
			for _, v := range t.uints(e) {
				out = append(out, float64(v))
			}
			return out
		}
	}
	return out
}

func (t *tiffFile) float(e ifdEntry) (float64, bool) {
	v := t.floats(e)
	if len(v) == 0 || math.IsNaN(v[0]) || math.IsInf(v[0], 0) {
		return 0, false
	}
	return v[0], true
}

// str returns an ASCII (or UNDEFINED text) entry with NULs and padding trimmed.
func (t *tiffFile) str(e ifdEntry) string {
	if e.Type != 2 && e.Type != 7 && e.Type != 1 {
		return ""
	}
	b, err := t.data(e)
	if err != nil {
		return ""
	}
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return strings.TrimSpace(strings.ToValidUTF8(string(b), ""))
}

// Photometric interpretations and compressions that only camera RAW files use.
func isRawIFD(t *tiffFile, d ifd) bool {
	if e, ok := d.find(0x0106); ok { // PhotometricInterpretation
		if v, _ := t.uint(e); v == 32803 || v == 34892 { // CFA, LinearRaw
			return true
		}
	}
	if e, ok := d.find(0x0103); ok { // Compression
		switch v, _ := t.uint(e); v {
		case 32767, 32769, 32770, 32772, 34713, 65000: // Sony, Epson/Samsung, Nikon NEF, Kodak
			return true
		}
	}
	return false
}

// tiffRawKind recognises TIFF-structured camera RAW files: DNG by its DNGVersion tag,
// others by a CFA or RAW-only IFD anywhere in the IFD0 chain or its SubIFDs, then named
// by the maker. It returns "" for an ordinary TIFF.
func tiffRawKind(r io.ReaderAt, size int64) string {
	t, err := openTIFF(r, 0, size)
	if err != nil || t.magic != 42 {
		return ""
	}
	d0, err := t.readIFD(t.ifd0)
	if err != nil {
		return ""
	}
	if _, ok := d0.find(0xC612); ok { // DNGVersion
		return "dng"
	}
	make := ""
	if e, ok := d0.find(0x010F); ok {
		make = strings.ToUpper(t.str(e))
	}
	raw := false
	seen := map[uint32]bool{t.ifd0: true}
	var visit func(d ifd, depth int)
	visit = func(d ifd, depth int) {
		if raw || depth > 3 {
			return
		}
		if isRawIFD(t, d) {
			raw = true
			return
		}
		if e, ok := d.find(0x014A); ok { // SubIFDs
			for _, off := range t.uints(e) {
				if seen[off] || len(seen) > 64 {
					continue
				}
				seen[off] = true
				if s, err := t.readIFD(off); err == nil {
					visit(s, depth+1)
				}
			}
		}
	}
	visit(d0, 0)
	for next, n := d0.next, 0; !raw && next != 0 && n < 8 && !seen[next]; n++ {
		seen[next] = true
		d, err := t.readIFD(next)
		if err != nil {
			break
		}
		visit(d, 1)
		next = d.next
	}
	if !raw {
		// Sony ARW and Nikon NEF keep maker-private tags in IFD0 that no plain TIFF has.
		if _, ok := d0.find(0xC634); ok && (strings.HasPrefix(make, "SONY") || strings.HasPrefix(make, "NIKON")) {
			raw = true
		}
	}
	if !raw {
		return ""
	}
	switch {
	case strings.HasPrefix(make, "NIKON"):
		return "nef"
	case strings.HasPrefix(make, "SONY"):
		return "arw"
	case strings.HasPrefix(make, "CANON"):
		return "cr2"
	case strings.HasPrefix(make, "PENTAX"), strings.HasPrefix(make, "RICOH"):
		return "pef"
	case strings.HasPrefix(make, "SAMSUNG"):
		return "srw"
	}
	return "raw"
}

// tiffRawDataMissing reports whether the largest raw (CFA or linear raw) IFD of a
// TIFF-structured RAW has strips or tiles holding far less data than its pixel count
// needs, or lying outside the file: a metadata-only or truncated file that LibRaw
// would otherwise develop into a blank frame. It returns false when it finds no raw IFD.
func tiffRawDataMissing(r io.ReaderAt, size int64) bool {
	t, err := openTIFF(r, 0, size)
	if err != nil {
		return false
	}
	var bestPixels, bestBytes int64
	seen := map[uint32]bool{}
	var visit func(off uint32, depth int)
	visit = func(off uint32, depth int) {
		for n := 0; off != 0 && n < 16 && !seen[off] && len(seen) < 64 && depth <= 3; n++ {
			seen[off] = true
			d, err := t.readIFD(off)
			if err != nil {
				return
			}
			if isRawIFD(t, d) {
				var w, h uint32
				if e, ok := d.find(tagImageWidth); ok {
					w, _ = t.uint(e)
				}
				if e, ok := d.find(tagImageLength); ok {
					h, _ = t.uint(e)
				}
				offTag, cntTag := uint16(0x0111), uint16(0x0117)
				if _, ok := d.find(0x0144); ok {
					offTag, cntTag = 0x0144, 0x0145
				}
				var total int64
				eo, ok1 := d.find(offTag)
				ec, ok2 := d.find(cntTag)
				if ok1 && ok2 {
					offs, cnts := t.uints(eo), t.uints(ec)
					for i := 0; i < len(offs) && i < len(cnts); i++ {
						end := min(int64(offs[i])+int64(cnts[i]), size)
						if end > int64(offs[i]) {
							total += end - int64(offs[i])
						}
					}
				}
				if px := int64(w) * int64(h); px > bestPixels {
					bestPixels, bestBytes = px, total
				}
			}
			if e, ok := d.find(0x014A); ok {
				for _, s := range t.uints(e) {
					visit(s, depth+1)
				}
			}
			off = d.next
		}
	}
	visit(t.ifd0, 0)
	return bestPixels > 0 && bestBytes*64 < bestPixels
}
