package codec

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/hostile"
)

func scanBytes(tb testing.TB, b []byte, edge int) *Scanned {
	tb.Helper()
	s, err := Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{MaxEdge: edge})
	if err != nil {
		tb.Fatalf("scan: %v", err)
	}
	return s
}

// scanFixtures are the test photo in every layout ingest meets, made by ImageMagick
// (and exiftool for a rotated JPEG).
func scanFixtures(t *testing.T) map[string][]byte {
	t.Helper()
	needTool(t, "convert")
	src := testphotosPath(t, "brackets", "house_interior_kim", "D.jpg")
	dir := t.TempDir()
	out := map[string][]byte{}
	for name, args := range map[string][]string{
		"baseline.jpg":    {"-quality", "90"},
		"progressive.jpg": {"-interlace", "JPEG", "-quality", "90"},
		"gray.jpg":        {"-colorspace", "Gray"},
		"cmyk.jpg":        {"-colorspace", "CMYK", "-quality", "95"},
		"rgb8.png":        {},
		"rgb16.png":       {"-depth", "16"},
		"gray8.png":       {"-colorspace", "Gray", "-define", "png:color-type=0"},
		"gray1.png":       {"-colorspace", "Gray", "-threshold", "50%", "-define", "png:bit-depth=1", "-define", "png:color-type=0"},
		"palette.png":     {"-colors", "200", "PNG8:"},
		"interlaced.png":  {"-interlace", "PNG"},
		"alpha.png":       {"-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel"},
		"alpha16.png":     {"-depth", "16", "-alpha", "set", "-channel", "A", "-fx", "j/h", "+channel"},
		"8-deflate.tif":   {"-compress", "zip"},
		"16-lzw.tif":      {"-depth", "16", "-compress", "lzw"},
		"16-none.tif":     {"-depth", "16", "-compress", "none"},
		"packbits.tif":    {"-compress", "RLE"},
		"tiled.tif":       {"-define", "tiff:tile-geometry=128x128", "-compress", "zip"},
		"predictor.tif":   {"-compress", "lzw", "-define", "tiff:predictor=2"},
		"gray.tif":        {"-colorspace", "Gray", "-compress", "lzw"},
		"alpha.tif":       {"-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel", "-compress", "zip"},
		"lossy.webp":      {"-quality", "85"},
		"lossless.webp":   {"-define", "webp:lossless=true", "-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel"},
		"photo.heic":      {"-quality", "90"},
	} {
		p := filepath.Join(dir, name)
		a := append([]string{src}, args...)
		if strings.HasSuffix(a[len(a)-1], ":") { // an output format prefix
			a[len(a)-1] += p
		} else {
			a = append(a, p)
		}
		run(t, "convert", a...)
		out[name] = readFile(t, p)
	}
	if _, err := os.Stat(testphotosPath(t, "raw", "CRW.CRW")); err == nil {
		out["raw.crw"] = readPhoto(t, "raw", "CRW.CRW")
	}
	return out
}

// A scan's preview is the full decode resized: same size, same channels, the same
// pixels up to the order of averaging (and libwebp's own scaling step for WebP).
func TestScanMatchesFullDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ImageMagick")
	}
	for name, b := range scanFixtures(t) {
		full, _ := decodeBytes(t, b, DecodeOptions{})
		// At 90 pixels the streamed formats box-reduce by 4 before the final resize.
		s := scanBytes(t, b, 90)
		w, h := imaging.FitWithin(full.W(), full.H(), 90)
		if s.Preview.W() != w || s.Preview.H() != h || s.Preview.C != full.C {
			t.Errorf("%s: preview %s x%d, want %dx%d x%d", name, dims(s.Preview), s.Preview.C, w, h, full.C)
			continue
		}
		if s.Info.Width != full.W() || s.Info.Height != full.H() {
			t.Errorf("%s: scan says %dx%d, decode %s", name, s.Info.Width, s.Info.Height, dims(full))
		}
		ref := imaging.Resize(full, w, h)
		limit := 1.0
		switch {
		case strings.HasSuffix(name, ".jpg"):
			limit = 1.5 // libjpeg's DCT scaling stands in for part of the resize
		case strings.HasSuffix(name, ".crw"):
			limit = 3.5 // a preview develops at half size, without demosaicing
		}
		d := meanAbsDiff8(t, s.Preview, ref)
		t.Logf("%-16s %s x%d: %.3f codes from the resized full decode", name, dims(s.Preview), s.Preview.C, d)
		if d > limit {
			t.Errorf("%s: preview differs from the resized full decode by %.2f codes on average", name, d)
		}
		if s.Mask {
			t.Errorf("%s: a photo taken for a mask", name)
		}
	}
}

// The rotated JPEG's preview is upright.
func TestScanAppliesOrientation(t *testing.T) {
	needTool(t, "exiftool")
	p := t.TempDir() + "/o6.jpg"
	run(t, "exiftool", "-q", "-Orientation#=6", "-o", p, testphotosPath(t, "brackets", "house_interior_kim", "C.jpg"))
	b := readFile(t, p)
	full, _ := decodeBytes(t, b, DecodeOptions{})
	s := scanBytes(t, b, 120)
	if s.Preview.W() != 80 || s.Preview.H() != 120 || s.Info.Width != 500 || full.W() != 500 {
		t.Fatalf("preview %s of a %dx%d upright photo", dims(s.Preview), s.Info.Width, s.Info.Height)
	}
	if d := meanAbsDiff8(t, s.Preview, imaging.Resize(full, 80, 120)); d > 1.5 {
		t.Errorf("rotated preview differs by %.2f codes", d)
	}
}

// Cut files of every format fail as unreadable, as Decode fails them.
func TestScanRefusesTruncatedFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ImageMagick")
	}
	for name, b := range scanFixtures(t) {
		cut := b[:len(b)*6/10]
		_, err := Scan(bytes.NewReader(cut), int64(len(cut)), ScanOptions{})
		if strings.HasSuffix(name, ".crw") && CodeOf(err) != "" {
			continue // LibRaw no longer recognises a cut CRW at all: unsupported_format
		}
		if CodeOf(err) != CodeUnreadable {
			t.Errorf("%s cut to 60%%: err = %v, want unreadable", name, err)
		}
	}
}

// One flipped bit in the middle of a PNG's image data fails its chunk checksum.
func TestScanRefusesCorruptPNG(t *testing.T) {
	b := readPhoto(t, "brackets", "memorial_church_debevec", "memorial0063.png")
	bad := append([]byte{}, b...)
	bad[len(bad)/2] ^= 0x10
	if _, err := Scan(bytes.NewReader(bad), int64(len(bad)), ScanOptions{}); CodeOf(err) != CodeUnreadable {
		t.Fatalf("corrupt PNG: err = %v, want unreadable", err)
	}
	var buf bytes.Buffer
	if err := hostile.PNGMask(&buf, 300, 200); err != nil {
		t.Fatal(err)
	}
	noEnd := buf.Bytes()[:buf.Len()-12] // without its IEND chunk
	if _, err := Scan(bytes.NewReader(noEnd), int64(len(noEnd)), ScanOptions{}); CodeOf(err) != CodeUnreadable {
		t.Fatalf("PNG without IEND: err = %v, want unreadable", err)
	}
}

// Masks are told from photos on the streamed rows: white on transparent is a mask,
// also when interlaced or 16-bit; a gray or coloured one is not.
func TestScanFindsMasks(t *testing.T) {
	encode := func(m image.Image, interlace bool) []byte {
		var buf bytes.Buffer
		if err := png.Encode(&buf, m); err != nil {
			t.Fatal(err)
		}
		if !interlace {
			return buf.Bytes()
		}
		p := writeTemp(t, "m.png", buf.Bytes())
		return run(t, "convert", p, "-interlace", "PNG", "png:-")
	}
	rect := image.Rect(0, 0, 301, 203)
	white := image.NewNRGBA(rect)
	grey := image.NewNRGBA(rect)
	deep := image.NewNRGBA64(rect)
	for y := 50; y < 150; y++ {
		for x := 40; x < 250; x++ {
			a := uint8(255)
			if x == 40 || x == 249 {
				a = 128 // anti-aliased edge
			}
			white.SetNRGBA(x, y, color.NRGBA{255, 255, 255, a})
			grey.SetNRGBA(x, y, color.NRGBA{128, 128, 128, a})
			deep.SetNRGBA64(x, y, color.NRGBA64{0xFFFF, 0xFFFF, 0xFFFF, uint16(a) * 257})
		}
	}
	grey.SetNRGBA(0, 0, color.NRGBA{255, 255, 255, 255})
	for _, c := range []struct {
		name string
		b    []byte
		mask bool
	}{
		{"white", encode(white, false), true},
		{"white-interlaced", encode(white, true), true},
		{"white-16", encode(deep, false), true},
		{"grey", encode(grey, false), false},
		{"photo", readPhoto(t, "sky", "masks", "ADE_val_00000219.png"), false},
	} {
		s := scanBytes(t, c.b, 64)
		if s.Mask != c.mask {
			t.Errorf("%s: mask %v, want %v", c.name, s.Mask, c.mask)
		}
	}
}

// libjpeg's warnings: truncation in either case of its message and corruption make
// a JPEG unreadable for Decode and Scan alike; padding before a marker, which camera
// files carry, does not.
func TestJPEGWarnings(t *testing.T) {
	camera := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	// Padding between two segments of the header ("extraneous bytes before marker").
	app := bytes.Index(camera[2:], []byte{0xFF}) + 2
	seg := int(camera[app+2])<<8 | int(camera[app+3])
	padded := append(append(append([]byte{}, camera[:app+2+seg]...), 0, 0, 0), camera[app+2+seg:]...)
	// Padding after the scan, before the end-of-image marker.
	eoi := bytes.LastIndex(camera, []byte{0xFF, 0xD9})
	tailPad := append(append(append([]byte{}, camera[:eoi]...), 0x12, 0x34), camera[eoi:]...)
	// The same padding, then the data cut at 70 %.
	paddedCut := padded[:len(padded)*7/10]
	for _, c := range []struct {
		name string
		b    []byte
		ok   bool
		why  string
	}{
		{"camera", camera, true, ""},
		{"padded", padded, true, ""},
		{"tail-padded", tailPad, true, ""},
		{"padded-then-cut", paddedCut, false, "truncated"},
		{"scan-ends-at-EOI", hostile.JPEGTruncated(10900, 10900), false, "premature end of data segment"},
		{"cut-mid-scan", hostile.JPEGCut(4000, 3000, 0.5), false, "Premature end of JPEG file"},
	} {
		_, _, derr := Decode(bytes.NewReader(c.b), int64(len(c.b)), DecodeOptions{ScaleToMaxEdge: 256})
		_, serr := Scan(bytes.NewReader(c.b), int64(len(c.b)), ScanOptions{})
		for what, err := range map[string]error{"decode": derr, "scan": serr} {
			switch {
			case c.ok && err != nil:
				t.Errorf("%s: %s failed: %v", c.name, what, err)
			case !c.ok && (CodeOf(err) != CodeUnreadable || !strings.Contains(err.Error(), c.why)):
				t.Errorf("%s: %s err = %v, want unreadable naming %q", c.name, what, err, c.why)
			}
		}
	}
}

// A scan of a 10950×10950 16-bit PNG or TIFF (720 MB of samples, under 1 MB of file)
// never makes a full-frame buffer: the Go heap it allocates in all stays far below one
// frame of 16-bit samples, and it reports the frame's real size.
func TestScanHugeFramesAllocateNoFrame(t *testing.T) {
	for name, write := range map[string]func(*bytes.Buffer) error{
		"png":  func(b *bytes.Buffer) error { return hostile.PNGZeros(b, 10950, 10950) },
		"tiff": func(b *bytes.Buffer) error { return hostile.TIFFZeros(b, 10950, 10950) },
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		b := buf.Bytes()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s, err := Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{})
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		alloc := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s of %d bytes, 10950x10950: scan allocated %.1f MB, declared need %.1f MB", name, len(b), float64(alloc)/1e6, float64(s.Need)/1e6)
		if alloc > 64<<20 {
			t.Errorf("%s: scan allocated %d bytes", name, alloc)
		}
		if s.Info.Format != name || s.Info.Width != 10950 || s.Preview.W() != 512 || s.Preview.At(256, 256, 0) != 0 {
			t.Errorf("%s: scan %+v, preview %s", name, s.Info, dims(s.Preview))
		}
	}
}

// The memory cap given to libjpeg holds: a progressive frame whose coefficients do
// not fit fails as too large rather than taking the memory.
func TestProgressiveJPEGCoefficientsCounted(t *testing.T) {
	b := hostile.JPEGFlat(10900, 10900, 3, true)
	h, err := readHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	coef := jpegCoefBytes(h.jpeg)
	// 4:2:0: luma 1363x1363 blocks (rounded to 1364 for 2x2 MCUs), chroma 682x682 each.
	if want := int64(1364*1364+2*682*682) * 128; coef != want {
		t.Fatalf("coefficient buffer %d, want %d", coef, want)
	}
	if _, err := openJPEG(b, 8, coef/2); CodeOf(err) != CodeResolutionTooLarge {
		t.Fatalf("decode under half the coefficient memory: %v", err)
	}
	if jpegCoefBytes(mustHeader(t, hostile.JPEGFlat(10900, 10900, 3, false)).jpeg) != 0 {
		t.Fatal("a baseline single-scan JPEG counted a coefficient buffer")
	}
	s := scanBytes(t, b, 256)
	if s.Need < coef || s.Preview.W() != 256 {
		t.Fatalf("scan need %d (coefficients %d), preview %s", s.Need, coef, dims(s.Preview))
	}
}

func mustHeader(t *testing.T, b []byte) *header {
	h, err := readHeader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
