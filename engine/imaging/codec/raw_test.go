package codec

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

func TestRawProbeAndMeta(t *testing.T) {
	for _, c := range []struct {
		file, kind  string
		w, h        int
		make, model string
		iso         float64
		date        time.Time
	}{
		{"CRW.CRW", "crw", 2176, 1448, "Canon", "EOS D30", 100, time.Time{}},
		{"DNG.dng", "dng", 3474, 2314, "Canon", "Canon EOS 350D DIGITAL", 400, time.Date(2005, 8, 3, 18, 59, 18, 0, time.UTC)},
		{"Nikon.nef", "nef", 3039, 2014, "NIKON CORPORATION", "NIKON D70", 200, time.Date(2004, 6, 9, 16, 2, 35, 0, time.UTC)},
	} {
		b := readPhoto(t, "raw", c.file)
		if f, k := sniff(b[:min(len(b), 4096)]); f != "raw" || k != c.kind {
			t.Errorf("%s: sniffed %q %q", c.file, f, k)
		}
		in := probeBytes(t, b)
		if in.Format != "raw" || in.RawKind != c.kind || in.Width != c.w || in.Height != c.h {
			t.Errorf("%s: probe %+v", c.file, in)
		}
		m, err := ReadMeta(newReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if m.Make != c.make || m.Model != c.model || m.ISO != c.iso || (!c.date.IsZero() && !m.DateTimeOriginal.Equal(c.date)) {
			t.Errorf("%s: meta %q %q ISO %v %v", c.file, m.Make, m.Model, m.ISO, m.DateTimeOriginal)
		}
	}
}

// The metadata-only DNG and NEF must fail to decode, not develop into a blank frame.
func TestRawWithoutImageData(t *testing.T) {
	for _, f := range []string{"DNG.dng", "Nikon.nef"} {
		b := readPhoto(t, "raw", f)
		_, _, err := Decode(newReader(b), int64(len(b)), DecodeOptions{})
		if CodeOf(err) != CodeUnreadable {
			t.Errorf("%s: err = %v, want unreadable", f, err)
		}
	}
}

// Our development of the Canon CRW matches dcraw_emu (LibRaw's reference front end) run
// with the same choices: camera white balance, AHD, sRGB, linear 16-bit, no auto-bright.
func TestRawCRWMatchesDcrawEmu(t *testing.T) {
	if testing.Short() {
		t.Skip("develops a RAW twice")
	}
	src := testphotosPath(t, "raw", "CRW.CRW")
	out := t.TempDir() + "/crw.ppm"
	run(t, "dcraw_emu", "-w", "-4", "-o", "1", "-q", "3", "-Z", out, src)
	ref := parsePPM(t, readFile(t, out))
	img, _ := decodeBytes(t, readFile(t, src), DecodeOptions{})
	if !imaging.SameSize(img, ref) {
		t.Fatalf("size %s, dcraw_emu %s", dims(img), dims(ref))
	}
	s := ssim(t, img, ref)
	t.Logf("CRW %s: SSIM against dcraw_emu %.5f, mean difference %.3f codes", dims(img), s, meanAbsDiff8(t, img, ref))
	if s < 0.99 {
		t.Errorf("SSIM against dcraw_emu %.4f", s)
	}
	if d := meanAbsDiff8(t, img, ref); d > 1 {
		t.Errorf("mean difference from dcraw_emu %.2f codes", d)
	}
	// A preview decode develops at half size and fits the requested edge.
	small, _ := decodeBytes(t, readFile(t, src), DecodeOptions{ScaleToMaxEdge: 800})
	if small.W() != 800 || small.H() != 532 {
		t.Fatalf("preview %s", dims(small))
	}
	if s := ssim(t, small, imaging.Resize(img, 800, 532)); s < 0.95 {
		t.Errorf("half-size preview SSIM %.4f", s)
	}
}

// parsePPM reads a binary P6 PPM (8- or 16-bit) whose samples are linear.
func parsePPM(tb testing.TB, b []byte) *imaging.Image {
	tb.Helper()
	r := bufio.NewReader(bytes.NewReader(b))
	var magic string
	var w, h, maxv int
	if _, err := fmt.Fscan(r, &magic, &w, &h, &maxv); err != nil || magic != "P6" {
		tb.Fatalf("PPM header: %v %q", err, magic)
	}
	r.ReadByte()
	bps := 1
	if maxv > 255 {
		bps = 2
	}
	raw := make([]byte, w*h*3*bps)
	if _, err := io.ReadFull(r, raw); err != nil {
		tb.Fatal(err)
	}
	img := imaging.New(w, h, 3)
	for i := range img.Pix {
		v := int(raw[i])
		if bps == 2 {
			v = int(raw[2*i])<<8 | int(raw[2*i+1])
		}
		img.Pix[i] = float32(v) / float32(maxv)
	}
	return img
}

// mosaicDNG writes a real photo as an uncompressed 16-bit RGGB Bayer DNG whose camera
// space is linear sRGB (ColorMatrix1 = XYZ->sRGB under D65, neutral white balance), with
// the given EXIF orientation.
func mosaicDNG(img *imaging.Image, orientation int) []byte {
	w, h := img.W(), img.H()
	var d exifWriter
	d.long(0x00FE, 0)
	d.long(tagImageWidth, uint32(w))
	d.long(tagImageLength, uint32(h))
	d.short(tagBitsPerSample, 16)
	d.short(tagCompression, 1)
	d.short(tagPhotometric, 32803)
	d.ascii(tagMake, "Porchlight")
	d.ascii(tagModel, "Mosaic Test")
	d.long(0x0111, 0) // StripOffsets, patched below
	d.short(tagOrientation, uint16(orientation))
	d.short(tagSamplesPerPixel, 1)
	d.long(0x0116, uint32(h))
	d.long(0x0117, uint32(w*h*2))
	d.short(0x011C, 1)
	d.raw(33421, 3, []byte{2, 0, 2, 0})
	d.raw(33422, 1, []byte{0, 1, 1, 2})
	d.raw(50706, 1, []byte{1, 4, 0, 0})
	d.raw(50707, 1, []byte{1, 1, 0, 0})
	d.ascii(50708, "Porchlight Mosaic Test")
	d.short(50714, 0)
	d.long(50717, 65535)
	d.rationals(50721, true, 3.2406, -1.5372, -0.4986, -0.9689, 1.8758, 0.0415, 0.0557, -0.2040, 1.0570)
	d.rationals(50728, false, 1, 1, 1)
	d.short(50778, 21)
	dataOff := uint32(8 + d.size())
	for i := range d.fields {
		if d.fields[i].tag == 0x0111 {
			binary.LittleEndian.PutUint32(d.fields[i].data, dataOff)
		}
	}
	out := []byte("II*\x00\x08\x00\x00\x00")
	out = append(out, d.serialize(8, 0)...)
	pix := make([]byte, w*h*2)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := 1 // green
			switch {
			case y%2 == 0 && x%2 == 0:
				c = 0
			case y%2 == 1 && x%2 == 1:
				c = 2
			}
			v := min(max(img.At(x, y, c), 0), 1)
			binary.LittleEndian.PutUint16(pix[(y*w+x)*2:], uint16(v*65535+0.5))
		}
	}
	return append(out, pix...)
}

func TestRawMosaicDNG(t *testing.T) {
	photo, _ := decodeBytes(t, readPhoto(t, "brackets", "house_interior_kim", "C.jpg"), DecodeOptions{})
	for _, o := range []int{1, 6} {
		b := mosaicDNG(photo, o)
		in := probeBytes(t, b)
		want := Orient(photo, o)
		if in.Format != "raw" || in.RawKind != "dng" || in.Width != want.W() || in.Height != want.H() {
			t.Fatalf("orientation %d: probe %+v, want %s", o, in, dims(want))
		}
		img, m := decodeBytes(t, b, DecodeOptions{})
		if m.Make != "Porchlight" || m.Model != "Mosaic Test" {
			t.Errorf("meta %q %q", m.Make, m.Model)
		}
		if !imaging.SameSize(img, want) {
			t.Fatalf("orientation %d: developed %s, want %s", o, dims(img), dims(want))
		}
		t.Logf("orientation %d: SSIM %.4f, colour difference %.2f codes", o, ssim(t, img, want), meanAbsDiff8(t, img, want))
		if s := ssim(t, img, want); s < 0.97 {
			t.Errorf("orientation %d: SSIM of the demosaiced DNG against the photo %.4f", o, s)
		}
		if d := meanAbsDiff8(t, img, want); d > 3 {
			t.Errorf("orientation %d: colours differ by %.2f codes", o, d)
		}
	}
}

// The CRW embeds a 1440x960 JPEG preview; thumbnails up to that size come from it and
// still have the photo's own fitted size.
func TestRawThumbnailUsesEmbeddedPreview(t *testing.T) {
	b := readPhoto(t, "raw", "CRW.CRW")
	start := time.Now()
	th, err := Thumbnail(newReader(b), int64(len(b)), 800)
	fast := time.Since(start)
	if err != nil || th.W() != 800 || th.H() != 532 {
		t.Fatalf("thumbnail %v %v", th, err)
	}
	start = time.Now()
	dev, _ := decodeBytes(t, b, DecodeOptions{ScaleToMaxEdge: 800})
	slow := time.Since(start)
	// Same scene and orientation, though the camera's tone curve differs from our
	// linear development: compare the structure of small versions by correlation.
	if r := lumaCorrelation(imaging.Resize(th, 100, 66), imaging.Resize(dev, 100, 66)); r < 0.9 {
		t.Errorf("preview does not show the developed scene: correlation %.3f", r)
	}
	t.Logf("preview thumbnail %v, half-size development %v", fast, slow)
}

// RAF embeds a camera JPEG whose APP1 carries the EXIF; CR3 keeps IFD0 and the EXIF IFD
// as TIFF streams in CMT1 and CMT2 boxes. Both are built here around real EXIF data.
func TestRawContainerMeta(t *testing.T) {
	photo := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	raf := []byte("FUJIFILMCCD-RAW 0201FF383501")
	raf = append(raf, make([]byte, 160-len(raf))...)
	binary.BigEndian.PutUint32(raf[84:], 160)
	binary.BigEndian.PutUint32(raf[88:], uint32(len(photo)))
	raf = append(raf, photo...)
	var m Meta
	rawContainerMeta(newReader(raf), int64(len(raf)), "raf", &m)
	if m.Model != "Canon EOS 5D Mark II" || m.ExposureTime != 0.05 || m.ISO != 100 {
		t.Errorf("raf: %q %v %v", m.Model, m.ExposureTime, m.ISO)
	}

	tiffOf := func(w *exifWriter) []byte {
		return append([]byte("II*\x00\x08\x00\x00\x00"), w.serialize(8, 0)...)
	}
	var ifd0, exif exifWriter
	ifd0.ascii(tagMake, "Canon")
	ifd0.ascii(tagModel, "Canon EOS R5")
	ifd0.ascii(tagCopyright, "Jane Doe")
	exif.rationals(tagExposureTime, false, 1.0/125)
	exif.rationals(tagFNumber, false, 8)
	exif.short(tagISO, 400)
	exif.ascii(tagDateTimeOriginal, "2024:03:04 05:06:07")
	exif.ascii(tagLensModel, "RF15-35mm F2.8 L IS USM")
	uuid := []byte{0x85, 0xc0, 0xb6, 0x87, 0x82, 0x0f, 0x11, 0xe0, 0x81, 0x11, 0xf4, 0xce, 0x46, 0x2b, 0x6a, 0x48}
	cr3 := box("ftyp", []byte("crx "), u32(1), []byte("crx isom"))
	cr3 = append(cr3, box("moov", box("uuid", uuid, box("CMT1", tiffOf(&ifd0)), box("CMT2", tiffOf(&exif))))...)
	if SniffRaw(cr3) != "cr3" {
		t.Fatalf("sniffed %q", SniffRaw(cr3))
	}
	m = Meta{}
	rawContainerMeta(newReader(cr3), int64(len(cr3)), "cr3", &m)
	want := time.Date(2024, 3, 4, 5, 6, 7, 0, time.UTC)
	if m.Model != "Canon EOS R5" || m.Copyright != "Jane Doe" || m.ExposureTime != 1.0/125 || m.FNumber != 8 ||
		m.ISO != 400 || !m.DateTimeOriginal.Equal(want) || m.LensModel != "RF15-35mm F2.8 L IS USM" {
		t.Errorf("cr3: %+v", m)
	}
}
