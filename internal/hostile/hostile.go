// Package hostile writes image files that cost little to send and a lot to decode
// carelessly: huge frames of one colour whose data is complete but compresses to
// almost nothing, and frames whose data ends long before their last row. Tests and
// scripts/bench-hostile.sh use them to check that ingest stays within bounded memory
// and refuses broken files cheaply.
package hostile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// PNG colour types written here.
const (
	pngRGB  = 2
	pngRGBA = 6
)

// chunkWriter buffers IDAT data and writes it as chunks of at most 1 MB.
type chunkWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func writeChunk(w io.Writer, typ string, data []byte) error {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
	b = append(b, typ...)
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	if _, err := w.Write(b); err != nil {
		return err
	}
	if _, err := w.Write(data); err != nil {
		return err
	}
	_, err := w.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	return err
}

func (c *chunkWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 && c.err == nil {
		k := min(len(p), 1<<20-len(c.buf))
		c.buf = append(c.buf, p[:k]...)
		p = p[k:]
		if len(c.buf) == 1<<20 {
			c.flush()
		}
	}
	return n, c.err
}

func (c *chunkWriter) flush() {
	if c.err == nil && len(c.buf) > 0 {
		c.err = writeChunk(c.w, "IDAT", c.buf)
	}
	c.buf = c.buf[:0]
}

// writePNG writes a non-interlaced PNG whose rows row(y, buf) fills (unfiltered
// samples, without the filter byte).
func writePNG(w io.Writer, width, height, depth, colour int, row func(y int, buf []byte)) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	if _, err := bw.WriteString("\x89PNG\r\n\x1a\n"); err != nil {
		return err
	}
	ihdr := binary.BigEndian.AppendUint32(nil, uint32(width))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(height))
	ihdr = append(ihdr, byte(depth), byte(colour), 0, 0, 0)
	if err := writeChunk(bw, "IHDR", ihdr); err != nil {
		return err
	}
	channels := 3
	if colour == pngRGBA {
		channels = 4
	}
	cw := &chunkWriter{w: bw}
	z, err := zlib.NewWriterLevel(cw, zlib.BestSpeed)
	if err != nil {
		return err
	}
	buf := make([]byte, 1+width*channels*depth/8) // filter byte 0: none
	for y := 0; y < height; y++ {
		row(y, buf[1:])
		if _, err := z.Write(buf); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	cw.flush()
	if cw.err != nil {
		return cw.err
	}
	if err := writeChunk(bw, "IEND", nil); err != nil {
		return err
	}
	return bw.Flush()
}

// PNGZeros writes a complete 16-bit RGB PNG of width×height black pixels. At
// 10950×10950 it is under 1 MB, and its decoded samples are 720 MB.
func PNGZeros(w io.Writer, width, height int) error {
	return writePNG(w, width, height, 16, pngRGB, func(int, []byte) {})
}

// PNGMask writes a complete 8-bit white-on-transparent mask: transparent, with an
// opaque white rectangle over the middle third. It is a valid magic-eraser mask
// that compresses to almost nothing.
func PNGMask(w io.Writer, width, height int) error {
	return writePNG(w, width, height, 8, pngRGBA, func(y int, buf []byte) {
		clear(buf)
		if y < height/3 || y >= 2*height/3 {
			return
		}
		for x := width / 3; x < 2*width/3; x++ {
			copy(buf[x*4:], []byte{255, 255, 255, 255})
		}
	})
}

// TIFFZeros writes a complete 16-bit RGB TIFF of width×height black pixels in one
// Deflate-compressed strip: under 1 MB at 10950×10950, 720 MB of samples.
func TIFFZeros(w io.Writer, width, height int) error {
	var data bytes.Buffer
	z, err := zlib.NewWriterLevel(&data, zlib.BestSpeed)
	if err != nil {
		return err
	}
	row := make([]byte, width*6)
	for y := 0; y < height; y++ {
		if _, err := z.Write(row); err != nil {
			return err
		}
	}
	if err := z.Close(); err != nil {
		return err
	}
	le := binary.LittleEndian
	const entries = 10
	bitsOff := 8 + 2 + entries*12 + 4
	dataOff := bitsOff + 6
	b := []byte("II*\x00")
	b = le.AppendUint32(b, 8)
	b = le.AppendUint16(b, entries)
	entry := func(tag, typ uint16, count, value uint32) {
		b = le.AppendUint16(b, tag)
		b = le.AppendUint16(b, typ)
		b = le.AppendUint32(b, count)
		if typ == 3 && count == 1 {
			b = le.AppendUint16(b, uint16(value))
			b = le.AppendUint16(b, 0)
			return
		}
		b = le.AppendUint32(b, value)
	}
	const short, long = 3, 4
	entry(256, long, 1, uint32(width))
	entry(257, long, 1, uint32(height))
	entry(258, short, 3, uint32(bitsOff))
	entry(259, short, 1, 8) // Deflate
	entry(262, short, 1, 2) // RGB
	entry(273, long, 1, uint32(dataOff))
	entry(277, short, 1, 3)
	entry(278, long, 1, uint32(height))
	entry(279, long, 1, uint32(data.Len()))
	entry(284, short, 1, 1)
	b = le.AppendUint32(b, 0)
	b = le.AppendUint16(b, 16)
	b = le.AppendUint16(b, 16)
	b = le.AppendUint16(b, 16)
	if _, err := w.Write(b); err != nil {
		return err
	}
	_, err = data.WriteTo(w)
	return err
}

// JPEG markers and the one table every file here uses.
func segment(marker byte, payload []byte) []byte {
	out := []byte{0xFF, marker}
	out = binary.BigEndian.AppendUint16(out, uint16(len(payload)+2))
	return append(out, payload...)
}

// jpegHead is SOI, one quantisation table of ones and two Huffman tables with a
// single one-bit code each: DC difference category 0 and AC end-of-block. With them
// every block of a flat grey frame is coded in two zero bits (one in each scan of a
// progressive file), so the entropy data is all zero bytes.
func jpegHead(sof byte, width, height, comps int) []byte {
	out := []byte{0xFF, 0xD8}
	dqt := append([]byte{0}, make([]byte, 64)...)
	for i := 1; i < len(dqt); i++ {
		dqt[i] = 1
	}
	out = append(out, segment(0xDB, dqt)...)
	counts := make([]byte, 16)
	counts[0] = 1
	out = append(out, segment(0xC4, append(append([]byte{0x00}, counts...), 0))...) // DC 0: category 0
	out = append(out, segment(0xC4, append(append([]byte{0x10}, counts...), 0))...) // AC 0: EOB
	sof0 := []byte{8}
	sof0 = binary.BigEndian.AppendUint16(sof0, uint16(height))
	sof0 = binary.BigEndian.AppendUint16(sof0, uint16(width))
	sof0 = append(sof0, byte(comps))
	for c := 1; c <= comps; c++ {
		samp := byte(0x11)
		if comps == 3 && c == 1 {
			samp = 0x22 // 4:2:0
		}
		sof0 = append(sof0, byte(c), samp, 0)
	}
	return append(out, segment(sof, sof0)...)
}

// sos is a start-of-scan header over components comps (1-based ids) for spectral
// band ss..se.
func sos(comps []int, ss, se byte) []byte {
	p := []byte{byte(len(comps))}
	for _, c := range comps {
		p = append(p, byte(c), 0x00)
	}
	return segment(0xDA, append(p, ss, se, 0))
}

// zeroBits returns entropy data of n zero bits, padded with one bits to a byte.
func zeroBits(n int64) []byte {
	out := make([]byte, (n+7)/8)
	if r := n % 8; r != 0 {
		out[len(out)-1] = byte(0xFF >> r)
	}
	return out
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// blocks is the number of 8×8 blocks of each component in a scan of its own, and the
// number of blocks in one interleaved MCU row times rows.
func blocks(width, height, comps int) (perComp []int64, interleaved int64) {
	if comps == 1 {
		n := int64(ceilDiv(width, 8)) * int64(ceilDiv(height, 8))
		return []int64{n}, n
	}
	mcus := int64(ceilDiv(width, 16)) * int64(ceilDiv(height, 16))
	y := int64(ceilDiv(width, 8)) * int64(ceilDiv(height, 8))
	c := int64(ceilDiv(ceilDiv(width, 2), 8)) * int64(ceilDiv(ceilDiv(height, 2), 8))
	return []int64{y, c, c}, mcus * 6
}

// JPEGFlat returns a complete mid-grey JPEG of width×height (at most 65535 each),
// with 1 (gray) or 3 (YCbCr 4:2:0) components, baseline or progressive. Its size is
// about a quarter of a byte per block: 10900×10900 in colour is under 1 MB.
func JPEGFlat(width, height, comps int, progressive bool) []byte {
	ids := []int{1}
	if comps == 3 {
		ids = []int{1, 2, 3}
	}
	per, inter := blocks(width, height, comps)
	if !progressive {
		out := jpegHead(0xC0, width, height, comps)
		out = append(out, sos(ids, 0, 63)...)
		out = append(out, zeroBits(2*inter)...)
		return append(out, 0xFF, 0xD9)
	}
	out := jpegHead(0xC2, width, height, comps)
	out = append(out, sos(ids, 0, 0)...) // DC of every component, interleaved
	out = append(out, zeroBits(inter)...)
	for i, id := range ids { // then each component's AC band on its own
		out = append(out, sos([]int{id}, 1, 63)...)
		out = append(out, zeroBits(per[i])...)
	}
	return append(out, 0xFF, 0xD9)
}

// JPEGTruncated returns a gray JPEG whose frame header claims width×height but
// whose scan holds the data of only the first 64 blocks (a 64×64 frame's worth)
// before the end-of-image marker.
func JPEGTruncated(width, height int) []byte {
	out := jpegHead(0xC0, width, height, 1)
	out = append(out, sos([]int{1}, 0, 63)...)
	out = append(out, zeroBits(2*64)...)
	return append(out, 0xFF, 0xD9)
}

// JPEGCut returns the first fraction of a complete flat colour JPEG's bytes (no
// end-of-image marker): a file cut off in transfer.
func JPEGCut(width, height int, fraction float64) []byte {
	b := JPEGFlat(width, height, 3, false)
	return b[:int(float64(len(b))*fraction)]
}
