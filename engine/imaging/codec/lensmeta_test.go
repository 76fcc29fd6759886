package codec

import (
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
