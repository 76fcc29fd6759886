package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// officeFrames are three of the office set's 21 MP brackets.
var officeFrames = []string{"IMG_6961.JPG", "IMG_6963.JPG", "IMG_6965.JPG"}

// officeShot is a calibrated lens on the office set's camera, written into copies of
// its frames: the fisheye it was shot with matches no calibrated profile.
var officeShot = lens.Shot{Make: "Canon", Model: "Canon EOS 5D Mark II", LensModel: "EF16-35mm f/4L IS USM", Focal: 16, Aperture: 8}

// calibratedOffice writes copies of the office frames that name officeShot's lens.
func calibratedOffice(b *testing.B) []string {
	b.Helper()
	dir := b.TempDir()
	var paths []string
	for _, name := range officeFrames {
		img := decodeFile(b, testphotos.Path(b, "brackets", "office_fisheye_5dmk2", name))
		path := filepath.Join(dir, name)
		writeShot(b, path, img, officeShot)
		paths = append(paths, path)
	}
	return paths
}

// BenchmarkLensStep3x21MP is the lens step on three 21 MP brackets held as 8-bit
// codes, as the pipeline has them before alignment: the map once, three frames
// resampled.
func BenchmarkLensStep3x21MP(b *testing.B) {
	if !lens.Available() {
		b.Skip("the lensfun database is not installed (liblensfun-data-v1)")
	}
	var frames []*imaging.Image
	for _, name := range officeFrames {
		f, err := os.Open(testphotos.Path(b, "brackets", "office_fisheye_5dmk2", name))
		if err != nil {
			b.Fatal(err)
		}
		st, _ := f.Stat()
		img, _, err := codec.Decode(f, st.Size(), codec.DecodeOptions{Narrow: true})
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, img)
	}
	w, h := frames[0].W(), frames[0].H()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := lens.Prepare(officeShot, w, h)
		if err != nil {
			b.Fatal(err)
		}
		for _, f := range frames {
			if _, err := c.Apply(f); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// BenchmarkDevelopLens3x21MP develops a 3 x 21 MP set whose lens is calibrated, with
// lens correction off and on, for the share of develop's time the step takes.
func BenchmarkDevelopLens3x21MP(b *testing.B) {
	if !lens.Available() {
		b.Skip("the lensfun database is not installed (liblensfun-data-v1)")
	}
	paths := calibratedOffice(b)
	p := New(Config{Logger: quiet(), MaxEdge: 1 << 14})
	for _, on := range []bool{false, true} {
		name := "lens_off"
		if on {
			name = "lens_on"
		}
		b.Run(name, func(b *testing.B) {
			fa := &fileAssets{paths: map[string]string{}}
			ids := []string{"in0", "in1", "in2"}
			for i, id := range ids {
				fa.paths[id] = paths[i]
			}
			opts := resolved(b, core.Options{LensCorrection: ptr(on), ColorCorrection: ptr(false)})
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				order := name + string(rune('a'+i%26))
				delete(fa.out, order)
				res, err := p.Run(context.Background(), Request{OrderID: order, Inputs: ids, Options: opts, Assets: fa}, nil)
				if err != nil {
					b.Fatal(err)
				}
				if on != hasNote(res.Notes, "lens correction: corrected") {
					b.Fatalf("notes %q", res.Notes)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
		})
	}
}
