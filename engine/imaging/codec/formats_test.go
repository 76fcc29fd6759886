package codec

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// maxDiff16 is the largest difference of two images in 16-bit sRGB codes over all
// channels they share (alpha compared on its linear 0..1 scale).
func maxDiff16(t *testing.T, a, b *imaging.Image) int {
	t.Helper()
	if !imaging.SameSize(a, b) || a.C != b.C {
		t.Fatalf("shapes differ: %s×%d vs %s×%d", dims(a), a.C, dims(b), b.C)
	}
	worst := 0
	for i := range a.Pix {
		var d int
		if a.C == 4 && i%4 == 3 {
			d = int(math.Abs(float64(a.Pix[i]-b.Pix[i])) * 65535)
		} else {
			d = int(imaging.Encode16(a.Pix[i])) - int(imaging.Encode16(b.Pix[i]))
		}
		worst = max(worst, d, -d)
	}
	return worst
}

func TestPNG(t *testing.T) {
	src := testphotosPath(t, "brackets", "memorial_church_debevec", "memorial0066.png")
	b := readFile(t, src)
	in := probeBytes(t, b)
	if in.Format != "png" || in.Width != 512 || in.Height != 768 || in.BitDepth != 8 || in.HasAlpha {
		t.Fatalf("probe %+v", in)
	}
	img, _ := decodeBytes(t, b, DecodeOptions{})
	if d := maxDiff16(t, img, magickPAM(t, src)); d > 1 {
		t.Errorf("8-bit PNG differs from ImageMagick by %d (16-bit codes)", d)
	}
	if testing.Short() {
		return
	}
	dir := t.TempDir()
	// 16-bit with a real alpha ramp: precision and alpha are kept.
	p16 := dir + "/rgba16.png"
	run(t, "convert", src, "-alpha", "set", "-channel", "A", "-fx", "j/h", "+channel", "-depth", "16", "PNG64:"+p16)
	b = readFile(t, p16)
	in = probeBytes(t, b)
	if in.BitDepth != 16 || !in.HasAlpha {
		t.Fatalf("16-bit probe %+v", in)
	}
	img, _ = decodeBytes(t, b, DecodeOptions{})
	if img.C != 4 {
		t.Fatalf("alpha dropped: %d channels", img.C)
	}
	ref := magickPAM(t, p16)
	if d := maxDiff16(t, img, ref); d > 2 {
		t.Errorf("16-bit PNG differs from ImageMagick by %d (16-bit codes)", d)
	}
	// Gray 16-bit.
	g16 := dir + "/gray16.png"
	run(t, "convert", src, "-colorspace", "Gray", "-depth", "16", "-define", "png:bit-depth=16", "-define", "png:color-type=0", g16)
	if in := probeBytes(t, readFile(t, g16)); in.BitDepth != 16 || in.ColorSpace != "Gray" {
		t.Fatalf("gray 16 probe %+v", in)
	}
	img, _ = decodeBytes(t, readFile(t, g16), DecodeOptions{})
	if d := maxDiff16(t, img, magickPAM(t, g16)); d > 2 {
		t.Errorf("16-bit gray PNG differs by %d", d)
	}
	// Palette with transparency.
	pal := dir + "/pal.png"
	run(t, "convert", src, "-resize", "25%", "-transparent", "black", "-fuzz", "5%", "-colors", "64", "PNG8:"+pal)
	img, _ = decodeBytes(t, readFile(t, pal), DecodeOptions{})
	if d := meanAbsDiff8(t, img, magickPAM(t, pal)); d > 0.5 {
		t.Errorf("palette PNG differs by %.2f codes", d)
	}
}

func TestWebPDecode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "B.jpg")
	dir := t.TempDir()
	lossy := dir + "/lossy.webp"
	run(t, "convert", src, "-quality", "85", lossy)
	b := readFile(t, lossy)
	if in := probeBytes(t, b); in.Format != "webp" || in.Width != 752 || in.Height != 500 {
		t.Fatalf("probe %+v", in)
	}
	img, _ := decodeBytes(t, b, DecodeOptions{})
	if d := meanAbsDiff8(t, img, magickPAM(t, lossy)); d > 0.6 {
		t.Errorf("lossy WebP differs from ImageMagick (libwebp) by %.2f codes", d)
	}
	lossless := dir + "/alpha.webp"
	run(t, "convert", src, "-alpha", "set", "-channel", "A", "-fx", "i/w", "+channel",
		"-define", "webp:lossless=true", lossless)
	b = readFile(t, lossless)
	if in := probeBytes(t, b); !in.HasAlpha {
		t.Fatalf("lossless alpha probe %+v", in)
	}
	img, _ = decodeBytes(t, b, DecodeOptions{})
	ref := magickPAM(t, lossless)
	if img.C != 4 || maxDiff16(t, img, ref) > 300 { // 8-bit source: one code is 257
		t.Errorf("lossless WebP with alpha: %d channels, max diff %d", img.C, maxDiff16(t, img, ref))
	}
}

func TestTIFF(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "D.jpg")
	dir := t.TempDir()
	for _, c := range []struct{ name, depth, compress string }{
		{"8-deflate", "8", "zip"}, {"16-lzw", "16", "lzw"}, {"16-none", "16", "none"},
	} {
		p := dir + "/" + c.name + ".tif"
		run(t, "convert", src, "-depth", c.depth, "-compress", c.compress, p)
		b := readFile(t, p)
		in := probeBytes(t, b)
		if in.Format != "tiff" || in.Width != 752 || in.Height != 500 || in.BitDepth != map[string]int{"8": 8, "16": 16}[c.depth] {
			t.Fatalf("%s: probe %+v", c.name, in)
		}
		img, _ := decodeBytes(t, b, DecodeOptions{})
		if d := maxDiff16(t, img, magickPAM(t, p)); d > 2 {
			t.Errorf("%s: differs from ImageMagick by %d (16-bit codes)", c.name, d)
		}
	}
	cmyk := dir + "/cmyk.tif"
	run(t, "convert", src, "-colorspace", "CMYK", cmyk)
	b := readFile(t, cmyk)
	if in := probeBytes(t, b); in.ColorSpace != "CMYK" {
		t.Errorf("CMYK TIFF probe %+v", in)
	}
	if _, _, err := Decode(newReader(b), int64(len(b)), DecodeOptions{}); CodeOf(err) == "" {
		t.Errorf("CMYK TIFF: err = %v, want a coded error", err)
	}
}

func TestHEIC(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes HEIC with ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "B.jpg")
	p := t.TempDir() + "/b.heic"
	run(t, "convert", src, "-quality", "90", p)
	b := readFile(t, p)
	if Sniff(b) != "heic" {
		t.Fatalf("sniffed %q", Sniff(b))
	}
	in := probeBytes(t, b)
	if in.Format != "heic" || in.Width != 752 || in.Height != 500 {
		t.Fatalf("probe %+v", in)
	}
	img, _ := decodeBytes(t, b, DecodeOptions{})
	orig, _ := decodeBytes(t, readFile(t, src), DecodeOptions{})
	if s := ssim(t, img, orig); s < 0.95 {
		t.Errorf("HEIC decode SSIM against the source photo %.4f", s)
	}
}
