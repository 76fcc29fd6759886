package codec

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

func sampleMeta() *Meta {
	return &Meta{
		Make: "Canon", Model: "Canon EOS 5D Mark II", LensModel: "EF8-15mm f/4L FISHEYE USM",
		Artist: "Jane Doe", Copyright: "© 2024 Jane Doe Photography", Software: "Porchlight",
		DateTimeOriginal: time.Date(2024, 5, 6, 7, 8, 9, 120_000_000, time.FixedZone("", 2*3600)),
		ExposureTime:     1.0 / 320, FNumber: 5.6, ISO: 200, ExposureBias: -2.0 / 3, FocalLength: 8,
		HasGPS: true, Latitude: 48.858222, Longitude: -2.2945, Altitude: 35.5, HasAltitude: true,
	}
}

func checkMetaRoundTrip(t *testing.T, got Meta, want *Meta, gps bool) {
	t.Helper()
	if got.Make != want.Make || got.Model != want.Model || got.LensModel != want.LensModel ||
		got.Artist != want.Artist || got.Copyright != want.Copyright || got.Software != want.Software {
		t.Errorf("strings: %+v", got)
	}
	if !got.DateTimeOriginal.Equal(want.DateTimeOriginal) {
		t.Errorf("date %v, want %v", got.DateTimeOriginal, want.DateTimeOriginal)
	}
	if math.Abs(got.ExposureTime-want.ExposureTime) > 1e-9 || got.FNumber != want.FNumber || got.ISO != want.ISO ||
		math.Abs(got.ExposureBias-want.ExposureBias) > 1e-4 || got.FocalLength != want.FocalLength {
		t.Errorf("exposure: %v %v %v %v %v", got.ExposureTime, got.FNumber, got.ISO, got.ExposureBias, got.FocalLength)
	}
	if got.HasGPS != gps {
		t.Fatalf("HasGPS = %v, want %v", got.HasGPS, gps)
	}
	if gps && (math.Abs(got.Latitude-want.Latitude) > 1e-6 || math.Abs(got.Longitude-want.Longitude) > 1e-6 ||
		math.Abs(got.Altitude-want.Altitude) > 1e-3) {
		t.Errorf("gps %v %v %v", got.Latitude, got.Longitude, got.Altitude)
	}
	if got.Orientation != 1 {
		t.Errorf("orientation %d", got.Orientation)
	}
}

func TestEncodeFormatsRoundTrip(t *testing.T) {
	src, _ := decodeBytes(t, readPhoto(t, "brackets", "house_interior_kim", "C.jpg"), DecodeOptions{})
	for _, c := range []struct {
		format string
		q      int
		ssim   float64
	}{
		{"jpeg", 92, 0.97}, {"webp", 80, 0.93}, {"png", 0, 0.999},
	} {
		for _, gps := range []bool{false, true} {
			b := encodeBytes(t, src, EncodeOptions{Format: c.format, Quality: c.q, Meta: sampleMeta(), KeepGPS: gps})
			if Sniff(b) != c.format {
				t.Fatalf("%s: sniffed %q", c.format, Sniff(b))
			}
			img, m := decodeBytes(t, b, DecodeOptions{})
			checkMetaRoundTrip(t, m, sampleMeta(), gps)
			// PNG is tagged by its sRGB chunk; JPEG and WebP carry the profile.
			if c.format != "png" && m.ICCName != "sRGB IEC61966-2.1" {
				t.Errorf("%s: ICC %q", c.format, m.ICCName)
			}
			if s := ssim(t, img, src); s < c.ssim {
				t.Errorf("%s: SSIM %.4f < %.3f", c.format, s, c.ssim)
			}
		}
	}
}

// exiftool, an independent reader, sees the tags and the sRGB profile we write.
func TestEncodedMetadataReadByExiftool(t *testing.T) {
	if testing.Short() {
		t.Skip("runs exiftool")
	}
	src, _ := decodeBytes(t, readPhoto(t, "brackets", "house_interior_kim", "A.jpg"), DecodeOptions{})
	for _, f := range []string{"jpeg", "webp", "png"} {
		p := writeTemp(t, "out."+f, encodeBytes(t, src, EncodeOptions{Format: f, Quality: 90, Meta: sampleMeta()}))
		var got []map[string]any
		out := run(t, "exiftool", "-j", "-n", "-Make", "-Model", "-LensModel", "-Artist", "-Copyright",
			"-ExposureTime", "-FNumber", "-ISO", "-ColorSpace", "-GPSLatitude", "-ProfileDescription",
			"-DateTimeOriginal", "-SRGBRendering", p)
		if err := json.Unmarshal(out, &got); err != nil || len(got) != 1 {
			t.Fatalf("%s: exiftool output %s", f, out)
		}
		g := got[0]
		if g["Artist"] != "Jane Doe" || g["Copyright"] != "© 2024 Jane Doe Photography" || g["Make"] != "Canon" ||
			g["LensModel"] != "EF8-15mm f/4L FISHEYE USM" || g["ISO"] != 200.0 || g["FNumber"] != 5.6 ||
			g["DateTimeOriginal"] != "2024:05:06 07:08:09" {
			t.Errorf("%s: exiftool read %v", f, g)
		}
		if g["GPSLatitude"] != nil {
			t.Errorf("%s: GPS written without KeepGPS", f)
		}
		if f != "png" && g["ProfileDescription"] != "sRGB IEC61966-2.1" {
			t.Errorf("%s: profile %v", f, g["ProfileDescription"])
		}
		if f == "png" && g["SRGBRendering"] == nil {
			t.Errorf("png: no sRGB chunk")
		}
		if g["ColorSpace"] != 1.0 {
			t.Errorf("%s: EXIF ColorSpace %v", f, g["ColorSpace"])
		}
	}
}

func TestEncodePNG16KeepsPrecision(t *testing.T) {
	// A smooth 16-bit gradient survives only with 16-bit samples.
	img := imaging.New(300, 20, 3)
	for y := 0; y < 20; y++ {
		for x := 0; x < 300; x++ {
			v := float32(x) / 299 * 0.02 // deep shadows, where 8 bits band
			img.Set(x, y, 0, v)
			img.Set(x, y, 1, v*0.5)
			img.Set(x, y, 2, v*0.25)
		}
	}
	b16 := encodeBytes(t, img, EncodeOptions{Format: "png", Bits16: true})
	b8 := encodeBytes(t, img, EncodeOptions{Format: "png"})
	if probeBytes(t, b16).BitDepth != 16 || probeBytes(t, b8).BitDepth != 8 {
		t.Fatal("bit depths not as requested")
	}
	got16, _ := decodeBytes(t, b16, DecodeOptions{})
	got8, _ := decodeBytes(t, b8, DecodeOptions{})
	if d := maxDiff16(t, got16, img); d > 1 {
		t.Errorf("16-bit PNG round trip off by %d codes", d)
	}
	if d := maxDiff16(t, got8, img); d < 64 {
		t.Errorf("8-bit PNG unexpectedly precise (%d): the test does not measure anything", d)
	}
}

func TestEncodeQualityAndAlpha(t *testing.T) {
	src, _ := decodeBytes(t, readPhoto(t, "brackets", "house_interior_kim", "D.jpg"), DecodeOptions{})
	for _, f := range []string{"jpeg", "webp"} {
		lo := len(encodeBytes(t, src, EncodeOptions{Format: f, Quality: 30}))
		hi := len(encodeBytes(t, src, EncodeOptions{Format: f, Quality: 95}))
		if lo*2 > hi {
			t.Errorf("%s: q30 %d bytes, q95 %d bytes: quality not honoured", f, lo, hi)
		}
	}
	// RGBA: WebP and PNG keep alpha, JPEG drops it.
	rgba := imaging.New(src.W(), src.H(), 4)
	for y := 0; y < src.H(); y++ {
		for x := 0; x < src.W(); x++ {
			for c := 0; c < 3; c++ {
				rgba.Set(x, y, c, src.At(x, y, c))
			}
			rgba.Set(x, y, 3, float32(x)/float32(src.W()-1))
		}
	}
	for _, f := range []string{"webp", "png", "jpeg"} {
		img, _ := decodeBytes(t, encodeBytes(t, rgba, EncodeOptions{Format: f, Quality: 90}), DecodeOptions{})
		want := 4
		if f == "jpeg" {
			want = 3
		}
		if img.C != want {
			t.Errorf("%s: %d channels, want %d", f, img.C, want)
		}
		if want == 4 && math.Abs(float64(img.At(img.W()/2, 10, 3))-0.5) > 0.02 {
			t.Errorf("%s: alpha at the middle %v", f, img.At(img.W()/2, 10, 3))
		}
	}
}

func TestEncodeRejectsBadInput(t *testing.T) {
	img := imaging.New(4, 4, 3)
	for _, opt := range []EncodeOptions{{Format: "gif"}, {Format: "jpeg", Quality: 101}, {Format: "webp", Quality: -3}} {
		if err := Encode(&bytes.Buffer{}, img, opt); err == nil {
			t.Errorf("%+v accepted", opt)
		}
	}
	if err := Encode(&bytes.Buffer{}, imaging.New(0, 0, 3), EncodeOptions{Format: "png"}); err == nil {
		t.Error("empty image accepted")
	}
	if err := Encode(&bytes.Buffer{}, imaging.New(20000, 2, 3), EncodeOptions{Format: "webp"}); err == nil {
		t.Error("WebP over 16383 px accepted")
	}
}

func TestEnc8MatchesImaging(t *testing.T) {
	for i := -10; i <= 70000; i++ {
		v := float32(i) / 65536
		if enc8(v) != imaging.Encode8(v) {
			t.Fatalf("enc8(%v) = %d, imaging.Encode8 = %d", v, enc8(v), imaging.Encode8(v))
		}
	}
	if enc8(float32(math.NaN())) != 0 || enc8(float32(math.Inf(1))) != 255 {
		t.Fatal("enc8 does not clamp NaN and +Inf")
	}
}
