package codec

import (
	"bytes"
	"os"
	"testing"
)

const ghostscriptICC = "/usr/share/color/icc/ghostscript/"

func readICCFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(ghostscriptICC + name)
	if err != nil {
		t.Skipf("ICC profile %s not installed: %v", name, err)
	}
	return b
}

func TestParseRealProfiles(t *testing.T) {
	for _, c := range []struct {
		file   string
		isSRGB bool
	}{
		{"srgb.icc", true},
		{"a98.icc", false},
		{"rommrgb.icc", false},
	} {
		p, err := parseICC(readICCFile(t, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if !p.hasMatrix || p.isSRGB() != c.isSRGB || p.Description == "" {
			t.Errorf("%s: %q matrix %v sRGB %v", c.file, p.Description, p.hasMatrix, p.isSRGB())
		}
	}
	// Our own output profile parses back as sRGB.
	p, err := parseICC(srgbICC)
	if err != nil || !p.isSRGB() || p.Description != "sRGB IEC61966-2.1" {
		t.Fatalf("built sRGB profile: %v %+v", err, p)
	}
	// Published Adobe RGB (1998) primaries, D65, gamma 563/256, match the real profile.
	a98, _ := parseICC(readICCFile(t, "a98.icc"))
	m := primariesD50(0.64, 0.33, 0.21, 0.71, 0.15, 0.06, 0.3127, 0.3290)
	for i := range m {
		if d := m[i] - a98.toXYZ[i]; d > 0.002 || d < -0.002 {
			t.Fatalf("Adobe RGB colorants from primaries %v differ from a98.icc %v", m, a98.toXYZ)
		}
	}
}

// withICC inserts an APP2 ICC_PROFILE segment after a JPEG's SOI.
func withICC(jpegData, icc []byte) []byte {
	out := append([]byte{}, jpegData[:2]...)
	out = append(out, jpegSegment(0xE2, []byte("ICC_PROFILE\x00\x01\x01"), icc)...)
	return append(out, jpegData[2:]...)
}

// Photos tagged with wide-gamut profiles must come out as LittleCMS (through
// ImageMagick) converts them to sRGB.
func TestICCConversionMatchesLittleCMS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ImageMagick")
	}
	srgb := ghostscriptICC + "srgb.icc"
	readICCFile(t, "srgb.icc")
	photo := readPhoto(t, "brackets", "house_interior_kim", "C.jpg")
	p3 := buildICC("Display P3", "test", primariesD50(0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290), srgbCurve)
	type iccCase struct {
		name, wantName string
		data           []byte
	}
	cases := []iccCase{
		{"a98", "", withICC(photo, readICCFile(t, "a98.icc"))},
		{"prophoto", "", withICC(photo, readICCFile(t, "rommrgb.icc"))},
		{"p3", "Display P3", withICC(photo, p3)},
		{"png-adobe", "Adobe RGB (1998)", readPhoto(t, "brackets", "living_room_windows", "DSC_0084.png")},
	}
	// The same Adobe RGB photo as WebP (ICCP chunk) and as 16-bit TIFF (ICC tag).
	adobePNG := testphotosPath(t, "brackets", "living_room_windows", "DSC_0084.png")
	dir := t.TempDir()
	run(t, "convert", adobePNG, "-define", "webp:lossless=true", dir+"/adobe.webp")
	run(t, "convert", adobePNG, "-depth", "16", dir+"/adobe16.tif")
	cases = append(cases,
		iccCase{"webp-adobe", "Adobe RGB (1998)", readFile(t, dir+"/adobe.webp")},
		iccCase{"tiff16-adobe", "Adobe RGB (1998)", readFile(t, dir+"/adobe16.tif")})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := probeBytes(t, c.data)
			if in.ColorSpace == "sRGB" || (c.wantName != "" && in.ColorSpace != c.wantName) {
				t.Errorf("ColorSpace = %q", in.ColorSpace)
			}
			img, m := decodeBytes(t, c.data, DecodeOptions{})
			if m.ICCName != in.ColorSpace {
				t.Errorf("ICCName %q vs ColorSpace %q", m.ICCName, in.ColorSpace)
			}
			p := writeTemp(t, "in", c.data)
			ref := magickPAM(t, p, "-profile", srgb)
			if d := meanAbsDiff8(t, img, ref); d > 1.5 {
				t.Errorf("differs from LittleCMS by %.2f codes", d)
			}
			// And the conversion did something: the untagged pixels differ.
			plain := magickPAM(t, p, "+profile", "*")
			if d := meanAbsDiff8(t, img, plain); d < 1 {
				t.Errorf("conversion changed almost nothing (%.2f codes)", d)
			}
		})
	}
}

func TestICCGarbageIsIgnored(t *testing.T) {
	photo := readPhoto(t, "brackets", "house_interior_kim", "C.jpg")
	bad := bytes.Repeat([]byte{0x41}, 300)
	img, m := decodeBytes(t, withICC(photo, bad), DecodeOptions{})
	ref, _ := decodeBytes(t, photo, DecodeOptions{})
	if m.ICCName != "" || meanAbsDiff8(t, img, ref) != 0 {
		t.Fatalf("a malformed profile changed the decode (name %q)", m.ICCName)
	}
}

// A camera in Adobe RGB mode marks the JPEG by EXIF alone (ColorSpace uncalibrated,
// interoperability index R03); it must decode like the same JPEG tagged with a real
// Adobe RGB profile.
func TestDCFAdobeRGBWithoutProfile(t *testing.T) {
	needTool(t, "exiftool")
	src := testphotosPath(t, "brackets", "house_interior_kim", "C.jpg")
	out := t.TempDir() + "/dcf.jpg"
	run(t, "exiftool", "-q", "-ExifIFD:ColorSpace=Uncalibrated", "-InteropIndex=R03 - DCF option file (Adobe RGB)", "-o", out, src)
	b := readFile(t, out)
	if in := probeBytes(t, b); in.ColorSpace != "Adobe RGB (1998)" {
		t.Fatalf("ColorSpace %q", in.ColorSpace)
	}
	img, _ := decodeBytes(t, b, DecodeOptions{})
	ref, _ := decodeBytes(t, withICC(readFile(t, src), readICCFile(t, "a98.icc")), DecodeOptions{})
	if d := meanAbsDiff8(t, img, ref); d > 0.3 {
		t.Errorf("differs from the a98.icc-tagged decode by %.2f codes", d)
	}
}
