package codec

import (
	"sync"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Decoders turn integer codes into linear light with per-channel tables: the sRGB curve
// by default, or the embedded profile's own tone curves, so a profile conversion costs
// a table lookup plus one 3x3 matrix.

type lut8 = [3][256]float32

var srgbLUT8 = func() *lut8 {
	var t lut8
	for i := 0; i < 256; i++ {
		v := imaging.Decode8(uint8(i))
		t[0][i], t[1][i], t[2][i] = v, v, v
	}
	return &t
}()

func linearLUT8(p *iccProfile) *lut8 {
	if p == nil || !p.converts() {
		return srgbLUT8
	}
	l := p.lut(256)
	var t lut8
	for c := 0; c < 3; c++ {
		copy(t[c][:], l[c])
	}
	return &t
}

var srgbLUT16 = sync.OnceValue(func() *[3][]float32 {
	t := make([]float32, 65536)
	for i := range t {
		t[i] = imaging.Decode16(uint16(i))
	}
	return &[3][]float32{t, t, t}
})

// linearIdentity16 maps 16-bit codes that are already linear (developed RAW) to 0..1.
var linearIdentity16 = sync.OnceValue(func() *[3][]float32 {
	t := make([]float32, 65536)
	for i := range t {
		t[i] = float32(i) / 65535
	}
	return &[3][]float32{t, t, t}
})

func linearLUT16(p *iccProfile) *[3][]float32 {
	if p == nil || !p.converts() {
		return srgbLUT16()
	}
	l := p.lut(65536)
	return &l
}

// bytesToLinear converts interleaved 8-bit samples with nch channels (1 gray, 2 gray +
// alpha, 3 RGB, 4 RGBA) into img (3 or 4 channels). Alpha stays linear in 0..1.
func bytesToLinear(pix []byte, nch int, img *imaging.Image, t *lut8) {
	w := img.W()
	imaging.Bands(img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row8ToLinear(pix[y*w*nch:(y+1)*w*nch], nch, img.Row(y), img.C, t)
		}
	})
}

// row8ToLinear converts one row of bytesToLinear.
func row8ToLinear(src []byte, nch int, row []float32, c int, t *lut8) {
	w := len(row) / c
	switch nch {
	case 3:
		if c == 3 {
			for x := 0; x < w; x++ {
				s := src[x*3 : x*3+3 : x*3+3]
				o := row[x*3 : x*3+3 : x*3+3]
				o[0], o[1], o[2] = t[0][s[0]], t[1][s[1]], t[2][s[2]]
			}
			return
		}
		for x := 0; x < w; x++ {
			s := src[x*3 : x*3+3 : x*3+3]
			o := row[x*c : x*c+c]
			o[0], o[1], o[2] = t[0][s[0]], t[1][s[1]], t[2][s[2]]
			if c == 4 {
				o[3] = 1
			}
		}
	case 4:
		for x := 0; x < w; x++ {
			s := src[x*4 : x*4+4 : x*4+4]
			o := row[x*c : x*c+c]
			o[0], o[1], o[2] = t[0][s[0]], t[1][s[1]], t[2][s[2]]
			if c == 4 {
				o[3] = float32(s[3]) / 255
			}
		}
	case 1, 2:
		for x := 0; x < w; x++ {
			g := t[0][src[x*nch]]
			o := row[x*c : x*c+c]
			o[0], o[1], o[2] = g, g, g
			if c == 4 {
				o[3] = 1
				if nch == 2 {
					o[3] = float32(src[x*2+1]) / 255
				}
			}
		}
	}
}

// shortsToLinear is bytesToLinear for 16-bit samples (native uint16 values).
func shortsToLinear(pix []uint16, nch int, img *imaging.Image, t *[3][]float32) {
	w, c := img.W(), img.C
	imaging.Bands(img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src := pix[y*w*nch : (y+1)*w*nch]
			row := img.Row(y)
			for x := 0; x < w; x++ {
				o := row[x*c : x*c+c]
				switch nch {
				case 3, 4:
					s := src[x*nch : x*nch+nch]
					o[0], o[1], o[2] = t[0][s[0]], t[1][s[1]], t[2][s[2]]
					if c == 4 {
						o[3] = 1
						if nch == 4 {
							o[3] = float32(s[3]) / 65535
						}
					}
				case 1, 2:
					g := t[0][src[x*nch]]
					o[0], o[1], o[2] = g, g, g
					if c == 4 {
						o[3] = 1
						if nch == 2 {
							o[3] = float32(src[x*2+1]) / 65535
						}
					}
				}
			}
		}
	})
}

// encode8Steps matches the resolution of imaging.Encode8's table, so enc8 returns
// exactly what imaging.Encode8 does, with one lookup instead of two and a division.
const encode8Steps = 1 << 14

var srgbEncode8 = func() *[encode8Steps + 1]uint8 {
	var t [encode8Steps + 1]uint8
	for i := range t {
		t[i] = imaging.Encode8(float32(i) / encode8Steps)
	}
	return &t
}()

// enc8 maps linear light to an 8-bit sRGB code, clamping (NaN gives 0).
func enc8(v float32) uint8 {
	if !(v > 0) {
		return 0
	}
	if v >= 1 {
		return 255
	}
	return srgbEncode8[int(v*encode8Steps+0.5)]
}
