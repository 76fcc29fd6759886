package codec

import (
	"encoding/binary"
	"math"
	"unicode/utf16"
)

// buildICC writes a compact ICC v4.3 RGB display profile from a linear RGB -> XYZ (D50)
// matrix and one parametric tone curve shared by the three channels. It is how outputs
// are tagged sRGB, and how tests build Adobe RGB and Display P3 profiles from their
// published primaries.
func buildICC(desc, copyright string, toXYZ [9]float64, curve iccCurve) []byte {
	be := binary.BigEndian
	s15 := func(v float64) []byte {
		b := make([]byte, 4)
		be.PutUint32(b, uint32(int32(math.Round(v*65536))))
		return b
	}
	mluc := func(s string) []byte {
		u := utf16.Encode([]rune(s))
		b := make([]byte, 28+2*len(u))
		copy(b, "mluc")
		be.PutUint32(b[8:], 1)
		be.PutUint32(b[12:], 12)
		copy(b[16:], "enUS")
		be.PutUint32(b[20:], uint32(2*len(u)))
		be.PutUint32(b[24:], 28)
		for i, c := range u {
			be.PutUint16(b[28+2*i:], c)
		}
		return b
	}
	xyz := func(x, y, z float64) []byte {
		b := append([]byte("XYZ \x00\x00\x00\x00"), s15(x)...)
		return append(append(b, s15(y)...), s15(z)...)
	}
	para := []byte("para\x00\x00\x00\x00")
	ft := curve.ptype
	if curve.para == nil {
		ft = 0
	}
	para = append(para, byte(ft>>8), byte(ft), 0, 0)
	np := [...]int{1, 3, 4, 5, 7}[ft]
	for i := 0; i < np; i++ {
		v := curve.gamma
		if curve.para != nil {
			v = curve.para[i]
		}
		para = append(para, s15(v)...)
	}
	chad := []byte("sf32\x00\x00\x00\x00")
	for _, v := range bradford(d65, d50) {
		chad = append(chad, s15(v)...)
	}
	type tag struct {
		sig  string
		data []byte
	}
	m := toXYZ
	tags := []tag{
		{"desc", mluc(desc)},
		{"cprt", mluc(copyright)},
		{"wtpt", xyz(d50[0], d50[1], d50[2])},
		{"chad", chad},
		{"rXYZ", xyz(m[0], m[3], m[6])},
		{"gXYZ", xyz(m[1], m[4], m[7])},
		{"bXYZ", xyz(m[2], m[5], m[8])},
		{"rTRC", para},
	}
	n := len(tags) + 2 // gTRC and bTRC share rTRC's data
	off := 128 + 4 + 12*n
	table := make([]byte, 4, 4+12*n)
	be.PutUint32(table, uint32(n))
	var data []byte
	entry := func(sig string, o, ln int) {
		e := make([]byte, 12)
		copy(e, sig)
		be.PutUint32(e[4:], uint32(o))
		be.PutUint32(e[8:], uint32(ln))
		table = append(table, e...)
	}
	for _, t := range tags {
		o := off + len(data)
		entry(t.sig, o, len(t.data))
		if t.sig == "rTRC" {
			entry("gTRC", o, len(t.data))
			entry("bTRC", o, len(t.data))
		}
		data = append(data, t.data...)
		for len(data)%4 != 0 {
			data = append(data, 0)
		}
	}
	h := make([]byte, 128)
	total := 128 + len(table) + len(data)
	be.PutUint32(h[0:], uint32(total))
	be.PutUint32(h[8:], 0x04300000)
	copy(h[12:], "mntrRGB XYZ ")
	be.PutUint16(h[24:], 2024)
	be.PutUint16(h[26:], 1)
	be.PutUint16(h[28:], 1)
	copy(h[36:], "acsp")
	copy(h[68:], s15(d50[0]))
	copy(h[72:], s15(d50[1]))
	copy(h[76:], s15(d50[2]))
	out := append(h, table...)
	return append(out, data...)
}

// srgbCurve is the IEC 61966-2-1 tone curve as an ICC parametric curve of type 3.
var srgbCurve = iccCurve{para: []float64{2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045, 0, 0}, ptype: 3}

// srgbICC is the profile embedded in every JPEG and WebP output.
var srgbICC = buildICC("sRGB IEC61966-2.1", "No copyright, use freely", srgbToXYZD50, srgbCurve)
