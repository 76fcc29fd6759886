package backends

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"image"
)

// encodeRGBA writes n as an 8-bit RGBA PNG (colour type 6) even when it is opaque:
// Go's encoder writes an opaque image as RGB, which endpoints that need an alpha
// channel (dall-e-2's edits) refuse.
func encodeRGBA(n *image.NRGBA, level int) ([]byte, error) {
	w, h := n.Rect.Dx(), n.Rect.Dy()
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		var l [4]byte
		binary.BigEndian.PutUint32(l[:], uint32(len(data)))
		out.Write(l[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		out.WriteString(typ)
		out.Write(data)
		binary.BigEndian.PutUint32(l[:], crc.Sum32())
		out.Write(l[:])
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = 8, 6 // 8 bits a sample, RGBA
	chunk("IHDR", ihdr)

	var idat bytes.Buffer
	zw, err := zlib.NewWriterLevel(&idat, level)
	if err != nil {
		return nil, err
	}
	stride := 4 * w
	prev := make([]byte, stride) // the row above the first is zeros
	cand := [5][]byte{}
	for f := range cand {
		cand[f] = make([]byte, 1+stride)
		cand[f][0] = byte(f)
	}
	for y := 0; y < h; y++ {
		row := n.Pix[(y)*n.Stride : (y)*n.Stride+stride]
		// Each filter of the PNG spec; the row whose bytes are smallest as signed
		// values usually compresses best (the spec's suggested heuristic).
		best, bestSum := 0, -1
		for f := 0; f < 5; f++ {
			c := cand[f][1:]
			sum := 0
			for i := 0; i < stride; i++ {
				var a, b, up byte
				if i >= 4 {
					a, up = row[i-4], prev[i-4]
				}
				b = prev[i]
				var p byte
				switch f {
				case 1:
					p = a
				case 2:
					p = b
				case 3:
					p = byte((int(a) + int(b)) / 2)
				case 4:
					p = paeth(a, b, up)
				}
				c[i] = row[i] - p
				if v := int(int8(c[i])); v < 0 {
					sum -= v
				} else {
					sum += v
				}
			}
			if bestSum < 0 || sum < bestSum {
				best, bestSum = f, sum
			}
		}
		if _, err := zw.Write(cand[best]); err != nil {
			return nil, err
		}
		prev = append(prev[:0], row...)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
	return out.Bytes(), nil
}

func paeth(a, b, c byte) byte {
	p := int(a) + int(b) - int(c)
	pa, pb, pc := abs(p-int(a)), abs(p-int(b)), abs(p-int(c))
	switch {
	case pa <= pb && pa <= pc:
		return a
	case pb <= pc:
		return b
	}
	return c
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
