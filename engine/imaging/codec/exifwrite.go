package codec

import (
	"encoding/binary"
	"math"
	"sort"
	"time"
)

type exifField struct {
	tag, typ uint16
	count    uint32
	data     []byte
}

// exifWriter collects fields for one IFD.
type exifWriter struct{ fields []exifField }

var le = binary.LittleEndian

func (w *exifWriter) ascii(tag uint16, s string) {
	if s == "" {
		return
	}
	b := append([]byte(s), 0)
	w.fields = append(w.fields, exifField{tag, 2, uint32(len(b)), b})
}

func (w *exifWriter) short(tag uint16, v uint16) {
	b := make([]byte, 2)
	le.PutUint16(b, v)
	w.fields = append(w.fields, exifField{tag, 3, 1, b})
}

func (w *exifWriter) long(tag uint16, v uint32) {
	b := make([]byte, 4)
	le.PutUint32(b, v)
	w.fields = append(w.fields, exifField{tag, 4, 1, b})
}

func (w *exifWriter) rationals(tag uint16, signed bool, vs ...float64) {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		n, d := toRational(v, signed)
		b = le.AppendUint32(b, n)
		b = le.AppendUint32(b, d)
	}
	typ := uint16(5)
	if signed {
		typ = 10
	}
	w.fields = append(w.fields, exifField{tag, typ, uint32(len(vs)), b})
}

func (w *exifWriter) raw(tag, typ uint16, b []byte) {
	w.fields = append(w.fields, exifField{tag, typ, uint32(len(b)), b})
}

// toRational approximates v by n/d: exact reciprocals for shutter speeds, else
// a continued fraction with denominators up to 100000.
func toRational(v float64, signed bool) (uint32, uint32) {
	if math.IsNaN(v) || math.IsInf(v, 0) || (!signed && v < 0) {
		return 0, 1
	}
	if v > 0 && v < 1 {
		if r := math.Round(1 / v); math.Abs(1/v-r) < 1e-3*r {
			return 1, uint32(r)
		}
	}
	neg := v < 0
	a := math.Abs(v)
	if a > 1e6 {
		a = 1e6
	}
	// Continued fraction convergents.
	h0, h1, k0, k1 := 0.0, 1.0, 1.0, 0.0
	x := a
	for i := 0; i < 20; i++ {
		ai := math.Floor(x)
		h0, h1 = h1, ai*h1+h0
		k0, k1 = k1, ai*k1+k0
		if k1 > 100000 {
			h1, k1 = h0, k0
			break
		}
		if math.Abs(h1/k1-a) < 1e-9 || x-ai < 1e-12 {
			break
		}
		x = 1 / (x - ai)
	}
	if k1 == 0 {
		return 0, 1
	}
	n := uint32(h1)
	if neg {
		n = uint32(int32(-int64(h1)))
	}
	return n, uint32(k1)
}

// serialize writes the IFD at offset base of a TIFF stream, returning its bytes
// (entries, next pointer, then out-of-line data). next is the next-IFD offset.
func (w *exifWriter) serialize(base uint32, next uint32) []byte {
	sort.Slice(w.fields, func(i, j int) bool { return w.fields[i].tag < w.fields[j].tag })
	n := len(w.fields)
	head := 2 + 12*n + 4
	out := make([]byte, head)
	le.PutUint16(out, uint16(n))
	for i, f := range w.fields {
		e := out[2+12*i:]
		le.PutUint16(e, f.tag)
		le.PutUint16(e[2:], f.typ)
		le.PutUint32(e[4:], f.count)
		if len(f.data) <= 4 {
			copy(e[8:12], f.data)
			continue
		}
		le.PutUint32(e[8:], base+uint32(len(out)))
		out = append(out, f.data...)
		if len(out)%2 == 1 {
			out = append(out, 0)
		}
	}
	le.PutUint32(out[2+12*n:], next)
	return out
}

func (w *exifWriter) size() int {
	s := 2 + 12*len(w.fields) + 4
	for _, f := range w.fields {
		if len(f.data) > 4 {
			s += len(f.data) + len(f.data)&1
		}
	}
	return s
}

// buildEXIF writes a little-endian TIFF stream (no "Exif\0\0" prefix) carrying the
// photographer's metadata from m for an upright w×h sRGB image. GPS is written only
// when keepGPS is set.
func buildEXIF(m *Meta, w, h int, keepGPS bool) []byte {
	var ifd0, exif, gps exifWriter
	if m != nil {
		ifd0.ascii(tagMake, m.Make)
		ifd0.ascii(tagModel, m.Model)
		ifd0.ascii(tagSoftware, m.Software)
		ifd0.ascii(tagArtist, m.Artist)
		ifd0.ascii(tagCopyright, m.Copyright)
		if m.ExposureTime > 0 {
			exif.rationals(tagExposureTime, false, m.ExposureTime)
		}
		if m.FNumber > 0 {
			exif.rationals(tagFNumber, false, m.FNumber)
		}
		if m.ISO > 0 {
			exif.short(tagISO, uint16(min(m.ISO, 65535)))
		}
		if !m.DateTimeOriginal.IsZero() {
			t := m.DateTimeOriginal
			exif.ascii(tagDateTimeOriginal, t.Format("2006:01:02 15:04:05"))
			if ns := t.Nanosecond(); ns > 0 {
				exif.ascii(tagSubSecTimeOrig, trimZeros(ns))
			}
			if t.Location() != time.UTC {
				exif.ascii(tagOffsetTimeOrig, t.Format("-07:00"))
			}
		}
		if m.ExposureBias != 0 {
			exif.rationals(tagExposureBias, true, m.ExposureBias)
		}
		if m.FocalLength > 0 {
			exif.rationals(tagFocalLength, false, m.FocalLength)
		}
		exif.ascii(tagLensModel, m.LensModel)
		if keepGPS && m.HasGPS {
			gps.raw(0x0000, 1, []byte{2, 3, 0, 0})
			lat, lon := m.Latitude, m.Longitude
			gps.ascii(tagGPSLatRef, map[bool]string{true: "S", false: "N"}[lat < 0])
			gps.rationals(tagGPSLat, false, dms(math.Abs(lat))...)
			gps.ascii(tagGPSLonRef, map[bool]string{true: "W", false: "E"}[lon < 0])
			gps.rationals(tagGPSLon, false, dms(math.Abs(lon))...)
			if m.HasAltitude {
				ref := byte(0)
				if m.Altitude < 0 {
					ref = 1
				}
				gps.raw(tagGPSAltRef, 1, []byte{ref})
				gps.rationals(tagGPSAlt, false, math.Abs(m.Altitude))
			}
		}
	}
	ifd0.short(tagOrientation, 1)
	exif.raw(0x9000, 7, []byte("0232")) // ExifVersion
	exif.short(tagColorSpace, 1)        // sRGB
	exif.long(0xA002, uint32(w))        // PixelXDimension
	exif.long(0xA003, uint32(h))        // PixelYDimension

	ifd0.long(tagExifIFD, 0) // offsets patched below
	if len(gps.fields) > 0 {
		ifd0.long(tagGPSIFD, 0)
	}
	exifOff := uint32(8 + ifd0.size())
	gpsOff := exifOff + uint32(exif.size())
	for i := range ifd0.fields {
		switch ifd0.fields[i].tag {
		case tagExifIFD:
			le.PutUint32(ifd0.fields[i].data, exifOff)
		case tagGPSIFD:
			le.PutUint32(ifd0.fields[i].data, gpsOff)
		}
	}
	out := []byte("II*\x00\x08\x00\x00\x00")
	out = append(out, ifd0.serialize(8, 0)...)
	out = append(out, exif.serialize(exifOff, 0)...)
	if len(gps.fields) > 0 {
		out = append(out, gps.serialize(gpsOff, 0)...)
	}
	return out
}

func dms(v float64) []float64 {
	d := math.Floor(v)
	m := math.Floor((v - d) * 60)
	s := (v - d - m/60) * 3600
	return []float64{d, m, math.Round(s*10000) / 10000}
}

func trimZeros(ns int) string {
	s := []byte{}
	for i, d := 0, 100000000; i < 9; i, d = i+1, d/10 {
		s = append(s, byte('0'+ns/d%10))
	}
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return string(s)
}
