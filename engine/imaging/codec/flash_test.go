package codec

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// The flambient pairs: every flash frame says its flash fired (EXIF Flash 13), no
// ambient frame does (Flash 16, "off, did not fire").
func TestReadMetaFlashFired(t *testing.T) {
	dir := filepath.Join(testphotos.Dir(t), "flambient")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".jpg") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		m, err := ReadMeta(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.Contains(e.Name(), "_flash_")
		if m.FlashFired != want {
			t.Errorf("%s: FlashFired %v, want %v", e.Name(), m.FlashFired, want)
		}
		n++
	}
	if n != 8 {
		t.Fatalf("%d flambient photos, want 8", n)
	}
	// A photo without a fired flash, from another camera.
	b := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	if m, err := ReadMeta(bytes.NewReader(b), int64(len(b))); err != nil || m.FlashFired {
		t.Errorf("Canon bracket: FlashFired %v, %v", m.FlashFired, err)
	}
}
