package codec

import (
	"bytes"
	"io"
	"regexp"
	"strings"
)

// LensInfo is what a file says about how its pixels relate to the lens: whether a
// raw developer or the camera may have corrected the lens already.
type LensInfo struct {
	Format   string // the codec's format name; raw files are developed uncorrected
	LensMake string // EXIF LensMake
	// CreatorTool is XMP xmp:CreatorTool, the program that last wrote the file.
	CreatorTool string
	// LensProfile is XMP crs:LensProfileEnable as written ("1", "0"), "" when absent:
	// Lightroom and Camera Raw record there whether they applied a lens profile.
	LensProfile string
	// CameraCorrected names the maker-note setting saying the camera corrected
	// distortion in this file ("" when none says so).
	CameraCorrected string
}

// xmpScan bounds how much of a JPEG is searched for its XMP packet: APP1 segments
// come before the image data, and each holds at most 64 KB.
const xmpScan = 512 << 10

// ReadLensInfo reads a file's lens-related metadata without decoding pixels.
func ReadLensInfo(r io.ReaderAt, size int64) (LensInfo, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return LensInfo{}, err
	}
	li := LensInfo{Format: h.format}
	var xmp []byte
	switch h.format {
	case FormatJPEG:
		if h.jpeg != nil && h.jpeg.exifOff > 0 {
			exifLens(r, h.jpeg.exifOff, h.jpeg.exifLen, &li)
		}
		b := make([]byte, min(size, xmpScan))
		n, _ := r.ReadAt(b, 0)
		xmp = xmpPacket(b[:n])
	case FormatTIFF:
		exifLens(r, 0, size, &li)
		if t, err := openTIFF(r, 0, size); err == nil {
			if d, err := t.readIFD(t.ifd0); err == nil {
				if e, ok := d.find(0x02BC); ok {
					if b, err := t.data(e); err == nil {
						xmp = xmpPacket(b)
					}
				}
			}
		}
	}
	if xmp != nil {
		li.CreatorTool = xmpValue(xmp, "xmp:CreatorTool")
		li.LensProfile = xmpValue(xmp, "crs:LensProfileEnable")
	}
	return li, nil
}

func xmpPacket(b []byte) []byte {
	i := bytes.Index(b, []byte("<x:xmpmeta"))
	if i < 0 {
		return nil
	}
	b = b[i:]
	if j := bytes.Index(b, []byte("</x:xmpmeta>")); j >= 0 {
		return b[:j]
	}
	return b
}

// xmpValue finds a simple property written as an attribute (name="v") or an element
// (<name>v</name>, or its rdf:Alt's first rdf:li).
func xmpValue(x []byte, name string) string {
	q := regexp.QuoteMeta(name)
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(q + `\s*=\s*"([^"]*)"`),
		regexp.MustCompile(`<` + q + `>\s*([^<]*?)\s*</` + q + `>`),
		regexp.MustCompile(`<` + q + `>\s*<rdf:(?:Alt|Seq|Bag)>\s*<rdf:li[^>]*>([^<]*)</rdf:li>`),
	} {
		if m := re.FindSubmatch(x); m != nil {
			return strings.TrimSpace(string(m[1]))
		}
	}
	return ""
}

// exifLens reads LensMake and the maker notes' distortion settings of a TIFF/EXIF
// stream.
func exifLens(r io.ReaderAt, base, size int64, li *LensInfo) {
	t, err := openTIFF(r, base, size)
	if err != nil {
		return
	}
	d0, err := t.readIFD(t.ifd0)
	if err != nil {
		return
	}
	var mk string
	if e, ok := d0.find(tagMake); ok {
		mk = strings.ToLower(t.str(e))
	}
	e, ok := d0.find(tagExifIFD)
	if !ok {
		return
	}
	off, ok := t.uint(e)
	if !ok {
		return
	}
	ex, err := t.readIFD(off)
	if err != nil {
		return
	}
	if e, ok := ex.find(tagLensMake); ok {
		li.LensMake = t.str(e)
	}
	if e, ok := ex.find(0x927C); ok && e.Count > 16 {
		li.CameraCorrected = makerNoteDistortion(t, e, mk)
	}
}

// makerNoteDistortion reads the maker notes' record of in-camera distortion
// correction, for the makers whose notes say it plainly: Canon (VignettingCorr and
// VignettingCorr2), Nikon (DistortInfo's AutoDistortionControl) and Sony
// (DistortionCorrectionSetting).
func makerNoteDistortion(t *tiffFile, e ifdEntry, maker string) string {
	mn := t.bo.Uint32(e.Val[:])
	head, err := t.read(mn, 16)
	if err != nil {
		return ""
	}
	switch {
	case strings.HasPrefix(maker, "canon"):
		d, err := t.readIFD(mn)
		if err != nil {
			return ""
		}
		if e, ok := d.find(0x4015); ok {
			if b, err := t.data(e); err == nil && len(b) >= 8 && b[0] == 0 && t.bo.Uint16(b[6:]) != 0 {
				return "Canon DistortionCorrection"
			}
		}
		if e, ok := d.find(0x4016); ok {
			if b, err := t.data(e); err == nil && len(b) >= 32 && t.bo.Uint32(b[28:]) == 1 {
				return "Canon DistortionCorrectionSetting"
			}
		}
	case strings.HasPrefix(maker, "nikon") && bytes.HasPrefix(head, []byte("Nikon\x00\x02")):
		nt, err := openTIFF(t.r, t.base+int64(mn)+10, t.size-int64(mn)-10)
		if err != nil {
			return ""
		}
		d, err := nt.readIFD(nt.ifd0)
		if err != nil {
			return ""
		}
		if e, ok := d.find(0x002B); ok {
			if b, err := nt.data(e); err == nil && len(b) >= 5 && (b[4] == 1 || b[4] == 2) {
				return "Nikon AutoDistortionControl"
			}
		}
	case strings.HasPrefix(maker, "sony") && bytes.HasPrefix(head, []byte("SONY DSC ")):
		d, err := t.readIFD(mn + 12)
		if err != nil {
			return ""
		}
		if e, ok := d.find(0x2013); ok {
			if v, ok := t.uint(e); ok && v == 2 {
				return "Sony DistortionCorrectionSetting"
			}
		}
	}
	return ""
}
