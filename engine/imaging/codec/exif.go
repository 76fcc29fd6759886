package codec

import (
	"bytes"
	"io"
	"strings"
	"time"
)

// EXIF and TIFF tags read into Meta.
const (
	tagMake             = 0x010F
	tagModel            = 0x0110
	tagOrientation      = 0x0112
	tagSoftware         = 0x0131
	tagDateTime         = 0x0132
	tagArtist           = 0x013B
	tagCopyright        = 0x8298
	tagExifIFD          = 0x8769
	tagGPSIFD           = 0x8825
	tagThumbOffset      = 0x0201
	tagThumbLength      = 0x0202
	tagExposureTime     = 0x829A
	tagFNumber          = 0x829D
	tagISO              = 0x8827
	tagDateTimeOriginal = 0x9003
	tagOffsetTimeOrig   = 0x9011
	tagExposureBias     = 0x9204
	tagFlash            = 0x9209
	tagFocalLength      = 0x920A
	tagSubSecTimeOrig   = 0x9291
	tagColorSpace       = 0xA001
	tagLensMake         = 0xA433
	tagLensModel        = 0xA434
	tagGPSLatRef        = 0x0001
	tagGPSLat           = 0x0002
	tagGPSLonRef        = 0x0003
	tagGPSLon           = 0x0004
	tagGPSAltRef        = 0x0005
	tagGPSAlt           = 0x0006
)

// maxThumbnail bounds the embedded thumbnail copied into Meta.
const maxThumbnail = 4 << 20

// exifMeta fills m from a TIFF/EXIF stream: IFD0, its EXIF and GPS IFDs, and IFD1's
// JPEG thumbnail. Values already set in m are overwritten only by values present here.
// It reports whether the stream parsed at all.
func exifMeta(r io.ReaderAt, base, size int64, m *Meta) bool {
	t, err := openTIFF(r, base, size)
	if err != nil {
		return false
	}
	d0, err := t.readIFD(t.ifd0)
	if err != nil {
		return false
	}
	setStr := func(d ifd, tag uint16, dst *string) {
		if e, ok := d.find(tag); ok {
			if s := t.str(e); s != "" {
				*dst = s
			}
		}
	}
	setStr(d0, tagMake, &m.Make)
	setStr(d0, tagModel, &m.Model)
	setStr(d0, tagSoftware, &m.Software)
	setStr(d0, tagArtist, &m.Artist)
	setStr(d0, tagCopyright, &m.Copyright)
	if e, ok := d0.find(tagOrientation); ok {
		if v, ok := t.uint(e); ok && v >= 1 && v <= 8 {
			m.Orientation = int(v)
		}
	}
	var dateTime string
	setStr(d0, tagDateTime, &dateTime)

	if e, ok := d0.find(tagExifIFD); ok {
		if off, ok := t.uint(e); ok {
			if ex, err := t.readIFD(off); err == nil {
				exifSubIFD(t, ex, m)
			}
		}
	}
	if m.DateTimeOriginal.IsZero() && dateTime != "" {
		m.DateTimeOriginal = parseExifTime(dateTime, "", "")
	}
	if e, ok := d0.find(tagGPSIFD); ok {
		if off, ok := t.uint(e); ok {
			if g, err := t.readIFD(off); err == nil {
				gpsIFD(t, g, m)
			}
		}
	}
	if d0.next != 0 && d0.next != t.ifd0 && m.Thumbnail == nil {
		if d1, err := t.readIFD(d0.next); err == nil {
			eo, ok1 := d1.find(tagThumbOffset)
			el, ok2 := d1.find(tagThumbLength)
			if ok1 && ok2 {
				off, _ := t.uint(eo)
				n, _ := t.uint(el)
				if n > 4 && n <= maxThumbnail {
					if b, err := t.read(off, int(n)); err == nil && b[0] == 0xFF && b[1] == 0xD8 {
						m.Thumbnail = b
					}
				}
			}
		}
	}
	return true
}

func exifSubIFD(t *tiffFile, d ifd, m *Meta) {
	get := func(tag uint16) (ifdEntry, bool) { return d.find(tag) }
	if e, ok := get(tagExposureTime); ok {
		if v, ok := t.float(e); ok && v > 0 {
			m.ExposureTime = v
		}
	}
	if e, ok := get(tagFNumber); ok {
		if v, ok := t.float(e); ok && v > 0 {
			m.FNumber = v
		}
	}
	if e, ok := get(tagISO); ok {
		if v, ok := t.float(e); ok && v > 0 {
			m.ISO = v
		}
	}
	if e, ok := get(tagExposureBias); ok {
		if v, ok := t.float(e); ok {
			m.ExposureBias = v
		}
	}
	if e, ok := get(tagFocalLength); ok {
		if v, ok := t.float(e); ok && v > 0 {
			m.FocalLength = v
		}
	}
	// Flash: bit 0 says whether the flash fired (the other bits are its mode and
	// return light).
	if e, ok := get(tagFlash); ok {
		if v, ok := t.uint(e); ok {
			m.FlashFired = v&1 != 0
		}
	}
	if e, ok := get(tagLensModel); ok {
		if s := t.str(e); s != "" {
			m.LensModel = s
		}
	}
	if e, ok := get(tagColorSpace); ok {
		if v, ok := t.uint(e); ok {
			m.exifColorSpace = int(v)
		}
	}
	// DCF cameras shooting Adobe RGB write no ICC profile: ColorSpace is "uncalibrated"
	// and the interoperability index says "R03".
	if e, ok := get(0xA005); ok {
		if off, ok := t.uint(e); ok {
			if d, err := t.readIFD(off); err == nil {
				if ie, ok := d.find(0x0001); ok && t.str(ie) == "R03" {
					m.adobeRGBInterop = true
				}
			}
		}
	}
	var dto, sub, off string
	if e, ok := get(tagDateTimeOriginal); ok {
		dto = t.str(e)
	}
	if e, ok := get(tagSubSecTimeOrig); ok {
		sub = t.str(e)
	}
	if e, ok := get(tagOffsetTimeOrig); ok {
		off = t.str(e)
	}
	if dto != "" {
		if tm := parseExifTime(dto, sub, off); !tm.IsZero() {
			m.DateTimeOriginal = tm
		}
	}
}

func gpsIFD(t *tiffFile, d ifd, m *Meta) {
	coord := func(valTag, refTag uint16, neg string) (float64, bool) {
		e, ok := d.find(valTag)
		if !ok {
			return 0, false
		}
		v := t.floats(e)
		if len(v) == 0 {
			return 0, false
		}
		deg := v[0]
		if len(v) >= 3 {
			deg += v[1]/60 + v[2]/3600
		}
		if r, ok := d.find(refTag); ok && strings.EqualFold(t.str(r), neg) {
			deg = -deg
		}
		return deg, true
	}
	lat, ok1 := coord(tagGPSLat, tagGPSLatRef, "S")
	lon, ok2 := coord(tagGPSLon, tagGPSLonRef, "W")
	if !ok1 || !ok2 {
		return
	}
	m.HasGPS = true
	m.Latitude, m.Longitude = lat, lon
	if e, ok := d.find(tagGPSAlt); ok {
		if v, ok := t.float(e); ok {
			if r, ok := d.find(tagGPSAltRef); ok {
				if ref, _ := t.uint(r); ref == 1 {
					v = -v
				}
			}
			m.Altitude, m.HasAltitude = v, true
		}
	}
}

// parseExifTime reads "2006:01:02 15:04:05" with optional sub-seconds ("123") and
// offset ("+02:00"). Without an offset the wall-clock time is returned in UTC.
func parseExifTime(s, sub, off string) time.Time {
	s = strings.TrimSpace(s)
	if len(s) < 19 {
		return time.Time{}
	}
	loc := time.UTC
	if len(off) == 6 && (off[0] == '+' || off[0] == '-') {
		if ot, err := time.Parse("-07:00", off); err == nil {
			loc = ot.Location()
		}
	}
	tm, err := time.ParseInLocation("2006:01:02 15:04:05", s[:19], loc)
	if err != nil {
		return time.Time{}
	}
	sub = strings.TrimSpace(sub)
	if sub != "" && len(sub) <= 9 && strings.Trim(sub, "0123456789") == "" {
		ns := 0
		for i := 0; i < 9; i++ {
			ns *= 10
			if i < len(sub) {
				ns += int(sub[i] - '0')
			}
		}
		tm = tm.Add(time.Duration(ns))
	}
	return tm
}

// exifFromBlock parses an EXIF block as found in JPEG APP1, PNG eXIf, WebP EXIF or a
// HEIC Exif item: a TIFF stream, optionally preceded by "Exif\0\0".
func exifFromBlock(b []byte, m *Meta) bool {
	if i := bytes.Index(b[:min(len(b), 16)], []byte("Exif\x00\x00")); i >= 0 {
		b = b[i+6:]
	}
	return exifMeta(bytes.NewReader(b), 0, int64(len(b)), m)
}
