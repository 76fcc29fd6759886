package codec

import (
	"bufio"
	"compress/zlib"
	"errors"
	"io"

	"github.com/porchlight/porchlight/engine/imaging"
	"golang.org/x/image/ccitt"
	"golang.org/x/image/tiff/lzw"
)

// A TIFF is scanned strip by strip (or tile by tile), each decompressed as a stream
// and read a row at a time, so only one row of the file's samples is held. It reads
// what x/image/tiff reads (gray, palette and RGB with 1, 8 or 16 bits; no compression,
// LZW, Deflate, PackBits, CCITT group 3 and 4; the horizontal predictor), plus gray
// with alpha and more depths for gray and palette.

// More TIFF tags, beside those the probe reads.
const (
	tagStripOffsets    = 0x0111
	tagRowsPerStrip    = 0x0116
	tagStripByteCounts = 0x0117
	tagPlanarConfig    = 0x011C
	tagPredictor       = 0x013D
	tagColorMap        = 0x0140
	tagTileWidth       = 0x0142
	tagTileLength      = 0x0143
	tagTileOffsets     = 0x0144
	tagTileByteCounts  = 0x0145
	tagSampleFormat    = 0x0153
	tagFillOrder       = 0x010A
)

// maxTIFFBlocks bounds the strip and tile tables a TIFF may list (a few MB each); a
// one-row strip per row of a 65535-row image needs 65535 entries.
const maxTIFFBlocks = 1 << 20

// tiffLayout is what decoding IFD0's image needs.
type tiffLayout struct {
	t               *tiffFile
	width, height   int
	bps, spp        int
	photometric     int
	compression     int
	predictor       int
	fillOrder       int
	alpha           int // index of the alpha sample, -1 for none
	premultiplied   bool
	colours         int // colour samples used: 1 gray or palette, 3 RGB
	blockW, blockH  int
	across, down    int
	offsets, counts []uint32
	palette         [][3]float32
	tiled           bool
	rowBytes        int
	maxSample       uint32
	inflate         io.ReadCloser // reused across Deflate strips
}

func readTIFFLayout(r io.ReaderAt, size int64, h *header) (*tiffLayout, error) {
	t, d, err := openTIFFIFD0(r, size)
	if err != nil {
		return nil, err
	}
	num := func(tag uint16, def int) int {
		if e, ok := d.find(tag); ok {
			if v, ok := t.uint(e); ok {
				return int(v)
			}
		}
		return def
	}
	l := &tiffLayout{t: t, width: h.width, height: h.height, alpha: -1,
		spp: max(1, num(tagSamplesPerPixel, 1)), photometric: num(tagPhotometric, 1),
		compression: num(tagCompression, 1), predictor: num(tagPredictor, 1), fillOrder: num(tagFillOrder, 1)}
	l.bps = 1
	if e, ok := d.find(tagBitsPerSample); ok {
		bits := t.uints(e)
		if len(bits) == 0 {
			return nil, unreadable(nil, "TIFF BitsPerSample is empty")
		}
		l.bps = int(bits[0])
		for _, b := range bits {
			if int(b) != l.bps {
				return nil, unsupported("TIFF with samples of different depths is not supported")
			}
		}
	}
	if e, ok := d.find(tagSampleFormat); ok {
		for _, f := range t.uints(e) {
			if f != 1 {
				return nil, unsupported("TIFF with floating-point or signed samples is not supported")
			}
		}
	}
	switch l.photometric {
	case 0, 1:
		l.colours = 1
		if l.bps != 1 && l.bps != 2 && l.bps != 4 && l.bps != 8 && l.bps != 16 {
			return nil, unsupported("%d-bit gray TIFF is not supported", l.bps)
		}
	case 2:
		l.colours = 3
		if l.bps != 8 && l.bps != 16 {
			return nil, unsupported("%d-bit RGB TIFF is not supported", l.bps)
		}
	case 3:
		l.colours = 1
		if l.bps > 8 || (l.bps != 1 && l.bps != 2 && l.bps != 4 && l.bps != 8) {
			return nil, unsupported("%d-bit palette TIFF is not supported", l.bps)
		}
	case 5:
		return nil, unsupported("CMYK TIFF is not supported; convert it to RGB first")
	default:
		return nil, unsupported("TIFF photometric interpretation %d is not supported", l.photometric)
	}
	if l.spp < l.colours {
		return nil, unreadable(nil, "TIFF has %d samples per pixel for %d colours", l.spp, l.colours)
	}
	if l.spp > l.colours {
		if e, ok := d.find(tagExtraSamples); ok {
			if ex := t.uints(e); len(ex) > 0 && (ex[0] == 1 || ex[0] == 2) {
				l.alpha, l.premultiplied = l.colours, ex[0] == 1
			}
		}
	}
	if l.spp > 1 && num(tagPlanarConfig, 1) == 2 {
		return nil, unsupported("planar TIFF (one plane per sample) is not supported")
	}
	switch l.predictor {
	case 1:
	case 2:
		if l.bps != 8 && l.bps != 16 {
			return nil, unsupported("TIFF horizontal predictor with %d-bit samples is not supported", l.bps)
		}
	default:
		return nil, unsupported("TIFF predictor %d is not supported", l.predictor)
	}
	switch l.compression {
	case 1, 3, 4, 5, 8, 32946, 32773:
	default:
		return nil, unsupported("TIFF with compression %d is not supported", l.compression)
	}
	if (l.compression == 3 || l.compression == 4) && (l.bps != 1 || l.spp != 1) {
		return nil, unsupported("CCITT-compressed TIFF must be 1-bit")
	}
	l.maxSample = 1<<l.bps - 1
	if l.photometric == 3 {
		e, ok := d.find(tagColorMap)
		cm := t.uints(e)
		n := 1 << l.bps
		if !ok || len(cm) != 3*n {
			return nil, unreadable(nil, "TIFF palette has %d entries, want %d", len(cm), 3*n)
		}
		lut := linearLUT16(fitting(h))
		l.palette = make([][3]float32, n)
		for i := range l.palette {
			l.palette[i] = [3]float32{lut[0][uint16(cm[i])], lut[1][uint16(cm[n+i])], lut[2][uint16(cm[2*n+i])]}
		}
	}
	offTag, cntTag := uint16(tagStripOffsets), uint16(tagStripByteCounts)
	if tw := num(tagTileWidth, 0); tw != 0 {
		l.tiled = true
		l.blockW, l.blockH = tw, num(tagTileLength, 0)
		if l.blockW < 8 || l.blockH < 8 {
			return nil, unreadable(nil, "TIFF tiles of %dx%d are too small", l.blockW, l.blockH)
		}
		if (l.blockW > l.width+16 || l.blockH > l.height+16) && (l.blockW > 1024 || l.blockH > 1024) {
			return nil, unreadable(nil, "TIFF tiles of %dx%d exceed the %dx%d image", l.blockW, l.blockH, l.width, l.height)
		}
		offTag, cntTag = tagTileOffsets, tagTileByteCounts
	} else {
		l.blockW, l.blockH = l.width, l.height
		if rps := num(tagRowsPerStrip, 0); rps > 0 && rps < l.height {
			l.blockH = rps
		}
	}
	l.across, l.down = ceilDiv(l.width, l.blockW), ceilDiv(l.height, l.blockH)
	if n := int64(l.across) * int64(l.down); n > maxTIFFBlocks {
		return nil, unreadable(nil, "TIFF is split into %d strips or tiles, more than this program reads (%d)", n, maxTIFFBlocks)
	}
	l.rowBytes = int((int64(l.blockW)*int64(l.spp)*int64(l.bps) + 7) / 8)
	if int64(l.blockW)*16 > maxRowBytes || l.rowBytes > maxRowBytes {
		return nil, rowTooWide(l.blockW)
	}
	oe, ok1 := d.find(offTag)
	ce, ok2 := d.find(cntTag)
	if !ok1 || !ok2 {
		return nil, unreadable(nil, "TIFF has no strip or tile offsets")
	}
	if oe.Count > maxTIFFBlocks || ce.Count > maxTIFFBlocks {
		return nil, unreadable(nil, "TIFF lists more than %d strips or tiles", maxTIFFBlocks)
	}
	l.offsets, l.counts = t.uints(oe), t.uints(ce)
	if n := l.across * l.down; len(l.offsets) < n || len(l.counts) < n {
		return nil, unreadable(nil, "TIFF lists %d blocks of image data, its size needs %d", min(len(l.offsets), len(l.counts)), n)
	}
	return l, nil
}

// scanTIFF streams IFD0's image through a box reduction.
func scanTIFF(r io.ReaderAt, size int64, h *header, tw, th int) (*imaging.Image, error) {
	if h.model == "cmyk" {
		return nil, unsupported("CMYK TIFF is not supported; convert it to RGB first")
	}
	l, err := readTIFFLayout(r, size, h)
	if err != nil {
		return nil, err
	}
	c := 3
	if l.alpha >= 0 {
		c = 4
	}
	red := newReducer(l.width, l.height, tw, th, c == 4)
	raw := make([]byte, l.rowBytes)
	line := make([]float32, l.blockW*c)
	conv := l.converter(h, c)
	var br *bufio.Reader
	for j := 0; j < l.down; j++ {
		for i := 0; i < l.across; i++ {
			k := j*l.across + i
			off, n := int64(l.offsets[k]), int64(l.counts[k])
			if off+n > size || n < 0 {
				return nil, unreadable(nil, "TIFF block %d (%d bytes at %d) runs past the end of the file", k, n, off)
			}
			rows := l.blockH
			if !l.tiled {
				rows = min(l.blockH, l.height-j*l.blockH)
			}
			src, closeFn, err := l.blockReader(io.NewSectionReader(r, off, n), rows)
			if err != nil {
				return nil, err
			}
			if br == nil {
				br = bufio.NewReaderSize(src, 64<<10)
			} else {
				br.Reset(src)
			}
			x0, y0 := i*l.blockW, j*l.blockH
			vis := min(l.blockW, l.width-x0)
			for y := 0; y < rows; y++ {
				if _, err := io.ReadFull(br, raw); err != nil {
					if closeFn != nil {
						closeFn()
					}
					return nil, tiffDataError(err, k)
				}
				if y0+y >= l.height {
					continue // padding rows of a bottom tile
				}
				l.unpredict(raw)
				conv(raw, line[:vis*c])
				red.add(y0+y, x0, 1, line[:vis*c])
			}
			if closeFn != nil {
				closeFn()
			}
		}
	}
	img := red.image()
	profileMatrix(img, h)
	return img, nil
}

func tiffDataError(err error, block int) error {
	var ce *Error
	if errors.As(err, &ce) {
		return err
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return unreadable(err, "TIFF image data ends early (block %d)", block)
	}
	return unreadable(err, "TIFF image data is corrupt (block %d): %v", block, err)
}

// blockReader decompresses one strip or tile of rows rows.
func (l *tiffLayout) blockReader(src io.Reader, rows int) (io.Reader, func(), error) {
	switch l.compression {
	case 5:
		z := lzw.NewReader(src, lzw.MSB, 8)
		return z, func() { z.Close() }, nil
	case 8, 32946:
		var err error
		if l.inflate == nil {
			l.inflate, err = zlib.NewReader(src)
		} else {
			err = l.inflate.(zlib.Resetter).Reset(src, nil) // one inflater for every strip
		}
		if err != nil {
			return nil, nil, tiffDataError(err, 0)
		}
		return l.inflate, nil, nil
	case 32773:
		return &packBits{r: bufio.NewReaderSize(src, 16<<10)}, nil, nil
	case 3, 4:
		order := ccitt.MSB
		if l.fillOrder == 2 {
			order = ccitt.LSB
		}
		sf := ccitt.Group3
		if l.compression == 4 {
			sf = ccitt.Group4
		}
		return ccitt.NewReader(src, order, sf, l.blockW, rows, &ccitt.Options{Invert: l.photometric == 0}), nil, nil
	}
	return src, nil, nil
}

// packBits decodes PackBits as a stream.
type packBits struct {
	r       *bufio.Reader
	literal int  // literal bytes left to copy
	repeat  int  // copies of rb left to emit
	rb      byte // the repeated byte
}

func (p *packBits) Read(b []byte) (int, error) {
	n := 0
	for n < len(b) {
		switch {
		case p.repeat > 0:
			k := min(p.repeat, len(b)-n)
			for i := 0; i < k; i++ {
				b[n+i] = p.rb
			}
			n += k
			p.repeat -= k
		case p.literal > 0:
			k, err := p.r.Read(b[n : n+min(p.literal, len(b)-n)])
			n += k
			p.literal -= k
			if err != nil {
				return n, unexpected(err)
			}
		default:
			code, err := p.r.ReadByte()
			if err != nil {
				if n > 0 && errors.Is(err, io.EOF) {
					return n, nil
				}
				return n, err
			}
			switch c := int(int8(code)); {
			case c >= 0:
				p.literal = c + 1
			case c > -128:
				rb, err := p.r.ReadByte()
				if err != nil {
					return n, unexpected(err)
				}
				p.rb, p.repeat = rb, 1-c
			}
		}
	}
	return n, nil
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// unpredict undoes the horizontal predictor on one row.
func (l *tiffLayout) unpredict(row []byte) {
	if l.predictor != 2 {
		return
	}
	s := l.spp
	if l.bps == 8 {
		for i := s; i < len(row); i++ {
			row[i] += row[i-s]
		}
		return
	}
	bo := l.t.bo
	for i := 2 * s; i+1 < len(row); i += 2 {
		bo.PutUint16(row[i:], bo.Uint16(row[i:])+bo.Uint16(row[i-2*s:]))
	}
}

// converter returns the function turning one row of samples into linear light with
// c channels, through the profile's curves as fromGoImage would.
func (l *tiffLayout) converter(h *header, c int) func(src []byte, dst []float32) {
	p := fitting(h)
	lut := linearLUT8(p)
	var lut16 *[3][]float32
	if l.bps == 16 {
		lut16 = linearLUT16(p)
	}
	bo := l.t.bo
	bps, spp, alpha := l.bps, l.spp, l.alpha
	invert := l.photometric == 0
	max := l.maxSample
	sample := func(src []byte, i int) uint32 {
		switch bps {
		case 8:
			return uint32(src[i])
		case 16:
			return uint32(bo.Uint16(src[2*i:]))
		}
		bit := i * bps
		return uint32(src[bit/8]>>(8-bps-bit%8)) & max
	}
	colours, palette, premultiplied := l.colours, l.photometric == 3, l.premultiplied
	// Tight loops for plain RGB, the common photo layouts.
	if !palette && colours == 3 && alpha < 0 && c == 3 {
		switch {
		case bps == 8 && spp == 3:
			return func(src []byte, dst []float32) { row8ToLinear(src, 3, dst, 3, lut) }
		case bps == 16:
			l0, l1, l2 := lut16[0], lut16[1], lut16[2]
			return func(src []byte, dst []float32) {
				for x, i := 0, 0; x+2 < len(dst); x, i = x+3, i+2*spp {
					s := src[i : i+6 : i+6]
					o := dst[x : x+3 : x+3]
					o[0], o[1], o[2] = l0[bo.Uint16(s)], l1[bo.Uint16(s[2:])], l2[bo.Uint16(s[4:])]
				}
			}
		}
	}
	return func(src []byte, dst []float32) {
		var v [3]uint32
		for x := 0; x < len(dst)/c; x++ {
			base := x * spp
			a := max
			if alpha >= 0 {
				a = sample(src, base+alpha)
			}
			for k := 0; k < colours; k++ {
				s := sample(src, base+k)
				if invert {
					s = max - s
				}
				if premultiplied {
					if a == 0 {
						s = 0
					} else {
						s = min(max, s*max/a)
					}
				}
				v[k] = s
			}
			o := dst[x*c : x*c+c]
			switch {
			case palette:
				e := l.palette[v[0]]
				o[0], o[1], o[2] = e[0], e[1], e[2]
			case colours == 1 && bps == 16:
				g := lut16[0][v[0]]
				o[0], o[1], o[2] = g, g, g
			case colours == 1:
				g := lut[0][v[0]*255/max]
				o[0], o[1], o[2] = g, g, g
			case bps == 16:
				o[0], o[1], o[2] = lut16[0][v[0]], lut16[1][v[1]], lut16[2][v[2]]
			default:
				o[0], o[1], o[2] = lut[0][v[0]], lut[1][v[1]], lut[2][v[2]]
			}
			if c == 4 {
				o[3] = float32(a) / float32(max)
			}
		}
	}
}
