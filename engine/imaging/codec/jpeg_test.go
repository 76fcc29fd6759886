package codec

import (
	"bytes"
	"image/jpeg"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

func TestProbeRealJPEG(t *testing.T) {
	b := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	in := probeBytes(t, b)
	want := Info{Format: "jpeg", Width: 5616, Height: 3744, Orientation: 1, BitDepth: 8, ColorSpace: "sRGB"}
	if in != want {
		t.Fatalf("probe = %+v, want %+v", in, want)
	}
	in = probeBytes(t, readPhoto(t, "brackets", "handheld_indoor_phone", "exp1.jpg"))
	if in.Width != 3024 || in.Height != 4032 {
		t.Fatalf("portrait phone JPEG probed as %dx%d", in.Width, in.Height)
	}
}

func TestReadMetaCanon(t *testing.T) {
	b := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	m, err := ReadMeta(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Make != "Canon" || m.Model != "Canon EOS 5D Mark II" {
		t.Errorf("camera = %q %q", m.Make, m.Model)
	}
	if m.ExposureTime != 0.05 || m.FNumber != 5.6 || m.ISO != 100 || m.FocalLength != 8 {
		t.Errorf("exposure = %v s f/%v ISO %v %v mm", m.ExposureTime, m.FNumber, m.ISO, m.FocalLength)
	}
	want := time.Date(2017, 7, 13, 15, 45, 20, 970_000_000, time.UTC)
	if !m.DateTimeOriginal.Equal(want) {
		t.Errorf("DateTimeOriginal = %v, want %v", m.DateTimeOriginal, want)
	}
	if len(m.Thumbnail) < 1000 || m.Thumbnail[0] != 0xFF || m.Thumbnail[1] != 0xD8 {
		t.Errorf("thumbnail = %d bytes", len(m.Thumbnail))
	}
	if m.Orientation != 1 || m.HasGPS {
		t.Errorf("orientation %d, gps %v", m.Orientation, m.HasGPS)
	}
	// The phone brackets record the EV compensation the manifest lists.
	b = readPhoto(t, "brackets", "library_phone", "20240401_184958.JPG")
	m, err = ReadMeta(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if m.ExposureBias != 2 || m.ISO != 1000 || m.ExposureTime != 0.25 {
		t.Errorf("library phone: bias %v ISO %v time %v", m.ExposureBias, m.ISO, m.ExposureTime)
	}
}

// TurboJPEG and the Go decoder implement the same standard; their outputs differ only
// by IDCT and upsampling rounding.
func TestDecodeJPEGMatchesStdlib(t *testing.T) {
	for _, rel := range [][]string{
		{"brackets", "house_interior_kim", "A.jpg"},
		{"brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_04.jpg"},
	} {
		b := readPhoto(t, rel...)
		img, _ := decodeBytes(t, b, DecodeOptions{})
		std, err := jpeg.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		ref := imaging.FromImage(std, false)
		if d := meanAbsDiff8(t, img, ref); d > 1.0 {
			t.Errorf("%s: mean difference from image/jpeg %.2f codes", rel[len(rel)-1], d)
		}
	}
}

func TestDecodeJPEGScaled(t *testing.T) {
	b := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	if testing.Short() {
		t.Skip("decodes 21 MP several times")
	}
	full, _ := decodeBytes(t, b, DecodeOptions{})
	for _, edge := range []int{2048, 700} {
		img, _ := decodeBytes(t, b, DecodeOptions{ScaleToMaxEdge: edge})
		w, h := imaging.FitWithin(5616, 3744, edge)
		if img.W() != w || img.H() != h {
			t.Fatalf("edge %d: got %s, want %dx%d", edge, dims(img), w, h)
		}
		ref := imaging.Resize(full, w, h)
		if s := ssim(t, img, ref); s < 0.97 {
			t.Errorf("edge %d: SSIM against full decode + resize = %.4f", edge, s)
		}
	}
	if jpegScale(5616, 3744, 2048) != 2 || jpegScale(5616, 3744, 700) != 8 || jpegScale(5616, 3744, 5000) != 1 {
		t.Error("jpegScale does not pick the smallest scale at least as large as the target")
	}
}

func TestDecodeJPEGVariants(t *testing.T) {
	src := testphotosPath(t, "brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_06.jpg")
	base, _ := decodeBytes(t, readFile(t, src), DecodeOptions{})
	dir := t.TempDir()

	// Progressive: same pixels as baseline up to quantisation of the re-encode.
	prog := dir + "/prog.jpg"
	run(t, "convert", src, "-interlace", "JPEG", "-quality", "95", prog)
	pb := readFile(t, prog)
	if !jpegIsProgressive(pb) {
		t.Fatal("fixture is not progressive")
	}
	img, _ := decodeBytes(t, pb, DecodeOptions{})
	if s := ssim(t, img, base); s < 0.97 {
		t.Errorf("progressive: SSIM %.4f", s)
	}

	// Grayscale: one component, decoded to three equal channels.
	gray := dir + "/gray.jpg"
	run(t, "convert", src, "-colorspace", "Gray", gray)
	gb := readFile(t, gray)
	if in := probeBytes(t, gb); in.ColorSpace != "Gray" {
		t.Errorf("gray probe: %+v", in)
	}
	img, _ = decodeBytes(t, gb, DecodeOptions{})
	for _, p := range [][2]int{{10, 10}, {800, 600}, {1500, 1100}} {
		r, g, bl := img.At(p[0], p[1], 0), img.At(p[0], p[1], 1), img.At(p[0], p[1], 2)
		if r != g || g != bl {
			t.Fatalf("gray pixel %v is not neutral: %v %v %v", p, r, g, bl)
		}
	}

	// CMYK as Photoshop and ImageMagick write it (Adobe APP14, inverted, YCCK).
	cmyk := dir + "/cmyk.jpg"
	run(t, "convert", src, "-colorspace", "CMYK", "-quality", "95", cmyk)
	cb := readFile(t, cmyk)
	if in := probeBytes(t, cb); in.ColorSpace != "CMYK" {
		t.Errorf("cmyk probe: %+v", in)
	}
	img, _ = decodeBytes(t, cb, DecodeOptions{})
	ref := magickPAM(t, cmyk, "-colorspace", "sRGB")
	if d := meanAbsDiff8(t, img, ref); d > 2 {
		t.Errorf("CMYK: mean difference from ImageMagick %.2f codes", d)
	}
	if d := meanAbsDiff8(t, img, base); d > 4 {
		t.Errorf("CMYK: mean difference from the RGB original %.2f codes", d)
	}
}

func TestDecodeTruncatedJPEG(t *testing.T) {
	b := readPhoto(t, "brackets", "house_interior_kim", "B.jpg")
	_, _, err := Decode(bytes.NewReader(b[:len(b)/2]), int64(len(b)/2), DecodeOptions{})
	if CodeOf(err) != CodeUnreadable {
		t.Fatalf("truncated JPEG: err = %v, want unreadable", err)
	}
}

// Narrow decoding hands back a JPEG's own sRGB codes, exactly what the float decode
// holds, and only where they are exact: not for a rotated or reduced decode, nor for
// other formats.
func TestNarrowDecode(t *testing.T) {
	b := readPhoto(t, "brackets", "house_interior_kim", "C.jpg")
	full, _ := decodeBytes(t, b, DecodeOptions{})
	narrow, _ := decodeBytes(t, b, DecodeOptions{Narrow: true})
	if !narrow.IsNarrow() || narrow.Pix8 == nil {
		t.Fatal("an upright sRGB JPEG did not decode narrow")
	}
	wide := narrow.Widen()
	if !imaging.SameSize(wide, full) || wide.C != full.C {
		t.Fatalf("narrow decode is %s x%d, float decode %s x%d", dims(wide), wide.C, dims(full), full.C)
	}
	for y := 0; y < full.H(); y++ {
		a, c := full.Row(y), wide.Row(y)
		for i := range a {
			if a[i] != c[i] {
				t.Fatalf("row %d sample %d: narrow %v, float %v", y, i, c[i], a[i])
			}
		}
	}
	if small, _ := decodeBytes(t, b, DecodeOptions{Narrow: true, ScaleToMaxEdge: 300}); small.IsNarrow() || small.W() != 300 {
		t.Errorf("a reduced decode came back narrow or at %s", dims(small))
	}
	png := readPhoto(t, "brackets", "memorial_church_debevec", "memorial0066.png")
	if m, _ := decodeBytes(t, png, DecodeOptions{Narrow: true}); m.IsNarrow() {
		t.Error("a PNG came back narrow")
	}
	needTool(t, "exiftool")
	p := t.TempDir() + "/o6.jpg"
	run(t, "exiftool", "-q", "-Orientation#=6", "-o", p, testphotosPath(t, "brackets", "house_interior_kim", "C.jpg"))
	if m, _ := decodeBytes(t, readFile(t, p), DecodeOptions{Narrow: true}); m.IsNarrow() || m.W() != 500 {
		t.Errorf("a rotated JPEG came back narrow or unrotated (%s)", dims(m))
	}
}
