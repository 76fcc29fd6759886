package codec

import (
	"bytes"
	"os"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

func readLensInfo(t *testing.T, rel ...string) LensInfo {
	t.Helper()
	f, err := os.Open(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	li, err := ReadLensInfo(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return li
}

func TestReadLensInfo(t *testing.T) {
	// A Capture One export names its developer in XMP and its lens maker in EXIF.
	li := readLensInfo(t, "flambient", "kitchenE_14mm_ambient__clean-edge-0017.jpg")
	if li.Format != FormatJPEG || li.CreatorTool != "Capture One Macintosh" || li.LensMake != "NIKON" || li.LensProfile != "" {
		t.Errorf("flambient: %+v", li)
	}
	// A Canon camera JPEG whose maker notes record distortion correction off.
	li = readLensInfo(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	if li.CreatorTool != "" || li.CameraCorrected != "" {
		t.Errorf("office: %+v", li)
	}
}

func TestXMPValue(t *testing.T) {
	x := []byte(`<x:xmpmeta><rdf:Description xmp:CreatorTool="Adobe Photoshop Lightroom Classic 12.0" crs:LensProfileEnable="0"/></x:xmpmeta>`)
	if v := xmpValue(x, "xmp:CreatorTool"); v != "Adobe Photoshop Lightroom Classic 12.0" {
		t.Errorf("CreatorTool %q", v)
	}
	if v := xmpValue(x, "crs:LensProfileEnable"); v != "0" {
		t.Errorf("LensProfileEnable %q", v)
	}
	x = []byte(`<x:xmpmeta><xmp:CreatorTool>darktable 4.2</xmp:CreatorTool></x:xmpmeta>`)
	if v := xmpValue(x, "xmp:CreatorTool"); v != "darktable 4.2" {
		t.Errorf("element CreatorTool %q", v)
	}
}

// TestCanonMakerNoteDistortion turns the office frame's in-camera distortion
// correction on in a copy (Canon's VignettingCorr record) and reads it back.
func TestCanonMakerNoteDistortion(t *testing.T) {
	data, err := os.ReadFile(testphotos.Path(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"))
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(data)
	h, err := readHeader(r, int64(len(data)))
	if err != nil || h.jpeg == nil || h.jpeg.exifOff == 0 {
		t.Fatalf("no EXIF: %v", err)
	}
	tf, err := openTIFF(r, h.jpeg.exifOff, h.jpeg.exifLen)
	if err != nil {
		t.Fatal(err)
	}
	d0, _ := tf.readIFD(tf.ifd0)
	e, _ := d0.find(tagExifIFD)
	off, _ := tf.uint(e)
	ex, _ := tf.readIFD(off)
	mn, ok := ex.find(0x927C)
	if !ok {
		t.Fatal("no maker notes")
	}
	d, err := tf.readIFD(tf.bo.Uint32(mn.Val[:]))
	if err != nil {
		t.Fatal(err)
	}
	vc, ok := d.find(0x4015)
	if !ok {
		t.Fatal("no VignettingCorr record")
	}
	at := h.jpeg.exifOff + int64(tf.bo.Uint32(vc.Val[:])) + 6
	if data[at] != 0 || data[at+1] != 0 {
		t.Fatalf("DistortionCorrection already set: % x", data[at:at+2])
	}
	if li, _ := ReadLensInfo(r, int64(len(data))); li.CameraCorrected != "" {
		t.Fatalf("as shot: %+v", li)
	}
	on := append([]byte(nil), data...)
	tf.bo.PutUint16(on[at:], 1)
	li, err := ReadLensInfo(bytes.NewReader(on), int64(len(on)))
	if err != nil || li.CameraCorrected != "Canon DistortionCorrection" {
		t.Fatalf("with correction on: %+v, %v", li, err)
	}
}
