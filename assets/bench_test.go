package assets

import (
	"bytes"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// BenchmarkIngest21MP runs the whole ingest of a 21 MP camera JPEG (5616x3744):
// upload, header validation, full decode, thumbnail, through the queue to ready.
func BenchmarkIngest21MP(b *testing.B) {
	data := photo(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	ready := make(chan core.Asset, 4)
	e := newEnv(b, Config{OnChange: func(a core.Asset) {
		if a.Status == core.AssetReady || a.Status == core.AssetFailed {
			ready <- a
		}
	}})
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.s.Add(owner, "IMG_6963.JPG", "image/jpeg", bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		if a := <-ready; a.Status != core.AssetReady || a.Width != 5616 {
			b.Fatalf("ingest: %+v", a)
		}
	}
}

// BenchmarkExportWebP2048 makes a WebP export with max_edge 2048 of a 21 MP JPEG:
// DCT-scaled decode, Lanczos downscale, WebP encode with metadata.
func BenchmarkExportWebP2048(b *testing.B) {
	data := photo(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	e := newEnv(b, Config{})
	a, err := e.s.Add(owner, "IMG_6963.JPG", "image/jpeg", bytes.NewReader(data))
	if err != nil {
		b.Fatal(err)
	}
	src := e.wait(a.ID)
	r, err := e.s.getRecord(src.ID)
	if err != nil || r == nil {
		b.Fatalf("record of %s: %v", src.ID, err)
	}
	opt := core.ExportOptions{Format: "webp", Quality: 92, MaxEdge: 2048}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		w, width, height, err := e.s.encodeExport(r, opt)
		if err != nil || width != 2048 || height != 1365 {
			b.Fatalf("export %dx%d: %v", width, height, err)
		}
		b.ReportMetric(float64(w.Size())/1e6, "MB/export")
		w.Abort()
	}
}
