package raw

import (
	"errors"
	"os"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

func TestProbeAndDevelopCRW(t *testing.T) {
	b, err := os.ReadFile(testphotos.Path(t, "raw", "CRW.CRW"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := Probe(b)
	if err != nil {
		t.Fatal(err)
	}
	if in.Width != 2176 || in.Height != 1448 || in.Make != "Canon" || in.Model != "EOS D30" || in.ISO != 100 || in.ThumbW != 1440 {
		t.Fatalf("probe %+v", in)
	}
	img, _, err := Develop(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 1088 || img.Height != 724 || len(img.Pix) != img.Width*img.Height*3 {
		t.Fatalf("half-size development %dx%d, %d samples", img.Width, img.Height, len(img.Pix))
	}
	// Linear output of a dim scene: mostly dark, some lights near white, not blank.
	var lo, hi int
	for _, v := range img.Pix {
		if v < 6554 {
			lo++
		}
		if v > 52428 {
			hi++
		}
	}
	if lo < len(img.Pix)/2 || hi == 0 || lo == len(img.Pix) {
		t.Errorf("implausible development: %d dark, %d bright of %d samples", lo, hi, len(img.Pix))
	}
	th, err := Thumbnail(b)
	if err != nil || len(th) < 1000 || th[0] != 0xFF || th[1] != 0xD8 {
		t.Fatalf("thumbnail %d bytes, %v", len(th), err)
	}
}

func TestRejectsNonRaw(t *testing.T) {
	for _, b := range [][]byte{nil, []byte("not a raw file at all, just some text to read"), make([]byte, 4096)} {
		_, err := Probe(b)
		var le *Error
		if !errors.As(err, &le) {
			t.Errorf("Probe(%d bytes): err = %v, want *Error", len(b), err)
		}
		if _, _, err := Develop(b, false); err == nil {
			t.Errorf("Develop(%d bytes) succeeded", len(b))
		}
	}
}

// A malformed DNG (found by fuzzing) that makes LibRaw 0.20 segfault in its TIFF parser
// when reading from memory: the crash stays in the worker process.
func TestLibRawCrashIsContained(t *testing.T) {
	b, err := os.ReadFile("testdata/libraw-segfault.dng")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Probe(b); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Probe: err = %v, want ErrCrashed", err)
	}
	if _, _, err := Develop(b, false); !errors.Is(err, ErrCrashed) {
		t.Fatalf("Develop: err = %v, want ErrCrashed", err)
	}
}

func BenchmarkDevelopCRW(b *testing.B) {
	data, err := os.ReadFile(testphotos.Path(b, "raw", "CRW.CRW"))
	if err != nil {
		b.Fatal(err)
	}
	b.Run("worker", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := Develop(data, false); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("in-process", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := developLocal(data, false, func(_ Info, w, h, nc int, pix []uint16) error {
				toImage(w, h, nc, pix)
				return nil
			}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
