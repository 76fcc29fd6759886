package codec

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// bigJPEG is the 21-megapixel camera original used by the hot-path benchmarks.
func bigJPEG(tb testing.TB) []byte {
	tb.Helper()
	b, err := os.ReadFile(testphotos.Path(tb, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkDecodeJPEG21MP(b *testing.B) {
	data := bigJPEG(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, _, err := Decode(bytes.NewReader(data), int64(len(data)), DecodeOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJPEG21MPScaled2048(b *testing.B) {
	data := bigJPEG(b)
	b.ReportAllocs()
	for b.Loop() {
		img, _, err := Decode(bytes.NewReader(data), int64(len(data)), DecodeOptions{ScaleToMaxEdge: 2048})
		if err != nil || max(img.W(), img.H()) != 2048 {
			b.Fatal(err)
		}
	}
}

func decodedBig(b *testing.B) *imaging.Image {
	data := bigJPEG(b)
	img, _, err := Decode(bytes.NewReader(data), int64(len(data)), DecodeOptions{})
	if err != nil {
		b.Fatal(err)
	}
	return img
}

func BenchmarkResize21MPTo2048(b *testing.B) {
	img := decodedBig(b)
	w, h := imaging.FitWithin(img.W(), img.H(), 2048)
	b.ReportAllocs()
	for b.Loop() {
		imaging.Resize(img, w, h)
	}
}

func BenchmarkEncodeWebP2048Q80(b *testing.B) {
	img := decodedBig(b)
	w, h := imaging.FitWithin(img.W(), img.H(), 2048)
	small := imaging.Resize(img, w, h)
	b.ReportAllocs()
	for b.Loop() {
		if err := Encode(io.Discard, small, EncodeOptions{Format: FormatWebP, Quality: 80}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeJPEG21MPQ92(b *testing.B) {
	img := decodedBig(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Encode(io.Discard, img, EncodeOptions{Format: FormatJPEG, Quality: 92}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExport2048WebP is the export path end to end: decode a 21 MP JPEG with DCT
// scaling, fit to 2048 with Lanczos, encode WebP q80.
func BenchmarkExport2048WebP(b *testing.B) {
	data := bigJPEG(b)
	b.ReportAllocs()
	for b.Loop() {
		img, _, err := Decode(bytes.NewReader(data), int64(len(data)), DecodeOptions{ScaleToMaxEdge: 2048})
		if err != nil {
			b.Fatal(err)
		}
		if err := Encode(io.Discard, img, EncodeOptions{Format: FormatWebP, Quality: 80}); err != nil {
			b.Fatal(err)
		}
	}
}
