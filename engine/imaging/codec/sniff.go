package codec

import (
	"bytes"
	"encoding/binary"
)

// Format names returned by Sniff and carried in Info.Format.
const (
	FormatJPEG = "jpeg"
	FormatPNG  = "png"
	FormatWebP = "webp"
	FormatTIFF = "tiff"
	FormatHEIC = "heic"
	FormatRaw  = "raw"
)

// Sniff names the format of a file from its first bytes ("" when unknown). Pass at
// least the first 4 KiB: telling a camera RAW from a plain TIFF reads the first IFD,
// and the more of the file head holds, the surer the answer.
func Sniff(head []byte) string {
	f, _ := sniff(head)
	return f
}

// SniffRaw names the camera RAW flavour (dng cr2 cr3 nef arw raf orf rw2 crw, or
// "raw" for another TIFF-based RAW) and "" when head is not a RAW file.
func SniffRaw(head []byte) string {
	f, k := sniff(head)
	if f != FormatRaw {
		return ""
	}
	return k
}

func sniff(h []byte) (format, rawKind string) {
	switch {
	case len(h) >= 3 && h[0] == 0xFF && h[1] == 0xD8 && h[2] == 0xFF:
		return FormatJPEG, ""
	case bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n")):
		return FormatPNG, ""
	case len(h) >= 12 && string(h[:4]) == "RIFF" && string(h[8:12]) == "WEBP":
		return FormatWebP, ""
	case bytes.HasPrefix(h, []byte("FUJIFILMCCD-RAW")):
		return FormatRaw, "raf"
	case len(h) >= 14 && (string(h[:2]) == "II" || string(h[:2]) == "MM") && string(h[6:14]) == "HEAPCCDR":
		return FormatRaw, "crw"
	case bytes.HasPrefix(h, []byte("IIRO")), bytes.HasPrefix(h, []byte("IIRS")), bytes.HasPrefix(h, []byte("MMOR")):
		return FormatRaw, "orf"
	case bytes.HasPrefix(h, []byte("IIU\x00")):
		return FormatRaw, "rw2"
	case bytes.HasPrefix(h, []byte("II*\x00")), bytes.HasPrefix(h, []byte("MM\x00*")):
		if len(h) >= 12 && string(h[8:11]) == "CR\x02" {
			return FormatRaw, "cr2"
		}
		if k := tiffRawKind(bytes.NewReader(h), int64(len(h))); k != "" {
			return FormatRaw, k
		}
		return FormatTIFF, ""
	case len(h) >= 12 && string(h[4:8]) == "ftyp":
		return sniffFtyp(h)
	}
	return "", ""
}

// sniffFtyp tells HEIC and CR3 apart from other ISO BMFF files (MP4, AVIF...).
func sniffFtyp(h []byte) (string, string) {
	n := int(binary.BigEndian.Uint32(h[:4]))
	if n < 16 || n > len(h) {
		n = min(len(h), 64)
	}
	major := string(h[8:12])
	if major == "crx " {
		return FormatRaw, "cr3"
	}
	brands := []string{major}
	for i := 16; i+4 <= n; i += 4 {
		brands = append(brands, string(h[i:i+4]))
	}
	heic := false
	for _, b := range brands {
		switch b {
		case "avif", "avis":
			return "", "" // AV1 still images are not accepted
		case "heic", "heix", "hevc", "hevx", "heim", "heis":
			heic = true
		}
	}
	if heic {
		return FormatHEIC, ""
	}
	return "", ""
}
