package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"
)

func box(typ string, payload ...[]byte) []byte {
	n := 8
	for _, p := range payload {
		n += len(p)
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(n))
	out = append(out, typ...)
	for _, p := range payload {
		out = append(out, p...)
	}
	return out
}

func u32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// Headers that claim enormous images, one per format, with no pixel data behind them.
func bombs() map[string][]byte {
	jpeg := []byte{0xFF, 0xD8}
	jpeg = append(jpeg, jpegSegment(0xC0, []byte{8, 0xEA, 0x60, 0xEA, 0x60, 3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1})...)
	jpeg = append(jpeg, jpegSegment(0xDA, []byte{3, 1, 0, 2, 0x11, 3, 0x11, 0, 63, 0})...)
	jpeg = append(jpeg, 0xFF, 0xD9)

	ihdr := append(u32(100000), u32(100000)...)
	ihdr = append(ihdr, 8, 2, 0, 0, 0)
	png := append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IHDR", ihdr)...)
	png = append(png, pngChunk("IEND", nil)...)

	vp8x := []byte{0, 0, 0, 0, 0xFF, 0x3F, 0, 0xFF, 0x3F, 0} // 16384 x 16384
	webp := []byte("RIFF\x00\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00")
	webp = append(webp, vp8x...)
	binary.LittleEndian.PutUint32(webp[4:], uint32(len(webp)-8))

	var d exifWriter
	d.long(tagImageWidth, 100000)
	d.long(tagImageLength, 100000)
	d.short(tagBitsPerSample, 8)
	d.short(tagPhotometric, 2)
	d.short(tagSamplesPerPixel, 3)
	tiff := append([]byte("II*\x00\x08\x00\x00\x00"), d.serialize(8, 0)...)

	ftyp := box("ftyp", []byte("heic"), u32(0), []byte("mif1heic"))
	hdlr := box("hdlr", u32(0), u32(0), []byte("pict"), make([]byte, 13))
	pitm := box("pitm", u32(0), []byte{0, 1})
	ispe := box("ispe", u32(0), u32(60000), u32(60000))
	ipma := box("ipma", u32(0), u32(1), []byte{0, 1, 1, 0x81})
	iprp := box("iprp", box("ipco", ispe), ipma)
	heic := append(ftyp, box("meta", u32(0), hdlr, pitm, iprp)...)

	return map[string][]byte{"jpeg": jpeg, "png": png, "webp": webp, "tiff": tiff, "heic": heic}
}

func TestDecompressionBombsRefusedWithoutAllocating(t *testing.T) {
	for name, b := range bombs() {
		in, err := Probe(bytes.NewReader(b), int64(len(b)))
		if err != nil || in.Format != name || int64(in.Width)*int64(in.Height) < 200_000_000 {
			t.Fatalf("%s: probe %+v %v", name, in, err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err = Decode(bytes.NewReader(b), int64(len(b)), DecodeOptions{})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrResolutionTooLarge) {
			t.Errorf("%s: err = %v, want resolution_too_large", name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
			t.Errorf("%s: refusing the bomb allocated %d bytes", name, grew)
		}
	}
}

// Real files over a caller's MaxPixels are refused before decoding, whatever the format.
func TestMaxPixelsOnRealFiles(t *testing.T) {
	for _, rel := range [][]string{
		{"brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"},
		{"brackets", "memorial_church_debevec", "memorial0063.png"},
		{"raw", "CRW.CRW"},
	} {
		b := readPhoto(t, rel...)
		_, _, err := Decode(bytes.NewReader(b), int64(len(b)), DecodeOptions{MaxPixels: 300_000})
		if CodeOf(err) != CodeResolutionTooLarge || !strings.Contains(err.Error(), "megapixels") {
			t.Errorf("%s: err = %v", rel[len(rel)-1], err)
		}
	}
	b := mosaicDNG(newRGB(64, 64), 1)
	if _, _, err := Decode(bytes.NewReader(b), int64(len(b)), DecodeOptions{MaxPixels: 1000}); CodeOf(err) != CodeResolutionTooLarge {
		t.Errorf("dng: err = %v", err)
	}
}

func TestIngestErrorCodes(t *testing.T) {
	photo := readPhoto(t, "brackets", "memorial_church_debevec", "memorial0063.png")
	// A PNG cut inside its image data: the header probes, the decode fails.
	cut := photo[:len(photo)/2]
	crcBroken := append([]byte{}, photo...)
	crcBroken[40] ^= 0xFF
	cases := []struct {
		name, code string
		data       []byte
	}{
		{"empty", CodeEmptyFile, nil},
		{"text", CodeUnsupportedFormat, []byte("hello, this is not an image at all")},
		{"gif", CodeUnsupportedFormat, []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")},
		{"avif", CodeUnsupportedFormat, append(box("ftyp", []byte("avif"), u32(0), []byte("mif1avif")), make([]byte, 64)...)},
		{"truncated-png", CodeUnreadable, cut},
		{"corrupt-png", CodeUnreadable, crcBroken},
		{"jpeg-soi-only", CodeUnreadable, []byte{0xFF, 0xD8, 0xFF, 0xD9, 0, 0}},
		{"png-no-ihdr", CodeUnreadable, append([]byte("\x89PNG\r\n\x1a\n"), pngChunk("IEND", nil)...)},
	}
	for _, c := range cases {
		_, _, err := Decode(bytes.NewReader(c.data), int64(len(c.data)), DecodeOptions{})
		if CodeOf(err) != c.code {
			t.Errorf("%s: err = %v, want %s", c.name, err, c.code)
		}
		var ce *Error
		if !errors.As(err, &ce) || ce.Reason == "" {
			t.Errorf("%s: no reason in %v", c.name, err)
		}
	}
}

func TestSniff(t *testing.T) {
	tiffHead := []byte("II*\x00\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00")
	cases := map[string]struct{ format, raw string }{
		"\xFF\xD8\xFF\xE0":                                 {"jpeg", ""},
		"\x89PNG\r\n\x1a\n":                                {"png", ""},
		"RIFF\x10\x00\x00\x00WEBPVP8 ":                     {"webp", ""},
		string(tiffHead):                                   {"tiff", ""},
		"MM\x00*\x00\x00\x00\x08":                          {"tiff", ""},
		"II*\x00\x10\x00\x00\x00CR\x02\x00":                {"raw", "cr2"},
		"FUJIFILMCCD-RAW 0201FF383501":                     {"raw", "raf"},
		"IIRO\x08\x00\x00\x00":                             {"raw", "orf"},
		"IIRS\x08\x00\x00\x00":                             {"raw", "orf"},
		"IIU\x00\x08\x00\x00\x00":                          {"raw", "rw2"},
		"II\x1a\x00\x00\x00HEAPCCDR":                       {"raw", "crw"},
		"\x00\x00\x00\x18ftypcrx \x00\x00\x00\x01crx isom": {"raw", "cr3"},
		"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic": {"heic", ""},
		"\x00\x00\x00\x18ftypmif1\x00\x00\x00\x00mif1heic": {"heic", ""},
		"\x00\x00\x00\x18ftypavif\x00\x00\x00\x00mif1avif": {"", ""},
		"\x00\x00\x00\x18ftypisom\x00\x00\x00\x00isommp41": {"", ""},
		"GIF89a": {"", ""},
		"":       {"", ""},
		"\xFF":   {"", ""},
	}
	for head, want := range cases {
		if f := Sniff([]byte(head)); f != want.format {
			t.Errorf("Sniff(%q) = %q, want %q", head, f, want.format)
		}
		if k := SniffRaw([]byte(head)); k != want.raw {
			t.Errorf("SniffRaw(%q) = %q, want %q", head, k, want.raw)
		}
	}
	// A DNG is a TIFF with a DNGVersion tag; our mosaic fixture has one.
	if k := SniffRaw(mosaicDNG(newRGB(8, 8), 1)); k != "dng" {
		t.Errorf("mosaic DNG sniffed as %q", k)
	}
}
