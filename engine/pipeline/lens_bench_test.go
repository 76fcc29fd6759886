package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// officeFrames are three of the office set's 21 MP brackets.
var officeFrames = []string{"IMG_6961.JPG", "IMG_6963.JPG", "IMG_6965.JPG"}

// officeShot is a calibrated lens on the office set's camera, written into copies of
// its frames: the fisheye it was shot with matches no calibrated profile.
var officeShot = lens.Shot{Make: "Canon", Model: "Canon EOS 5D Mark II", LensModel: "EF16-35mm f/4L IS USM", Focal: 16, Aperture: 8}

// calibratedOffice writes copies of the office frames that name officeShot's lens:
// the camera's own JPEG data (so brackets decode to their 8-bit codes, as camera
// files do) with its EXIF segment replaced by one that names the lens.
func calibratedOffice(b testing.TB) []string {
	b.Helper()
	meta := codec.Meta{Make: officeShot.Make, Model: officeShot.Model, LensModel: officeShot.LensModel,
		FocalLength: officeShot.Focal, FNumber: officeShot.Aperture, ISO: 100}
	dir := b.TempDir()
	var paths []string
	for _, name := range officeFrames {
		data, err := os.ReadFile(testphotos.Path(b, "brackets", "office_fisheye_5dmk2", name))
		if err != nil {
			b.Fatal(err)
		}
		old := jpegSegment(data, 0xE1, "Exif\x00\x00")
		if old == nil {
			b.Fatalf("%s has no EXIF segment", name)
		}
		// Keep each frame's own exposure: alignment and fusion read it.
		f, _ := os.Open(testphotos.Path(b, "brackets", "office_fisheye_5dmk2", name))
		st, _ := f.Stat()
		m, err := codec.ReadMeta(f, st.Size())
		f.Close()
		if err != nil {
			b.Fatal(err)
		}
		fm := meta
		fm.ExposureTime = m.ExposureTime
		var enc bytes.Buffer
		if err := codec.Encode(&enc, imaging.New(8, 8, 3), codec.EncodeOptions{Format: "jpeg", Meta: &fm}); err != nil {
			b.Fatal(err)
		}
		seg := jpegSegment(enc.Bytes(), 0xE1, "Exif\x00\x00")
		if seg == nil {
			b.Fatal("the encoder wrote no EXIF segment")
		}
		out := append(append(append([]byte(nil), data[:bytes.Index(data, old)]...), seg...), data[bytes.Index(data, old)+len(old):]...)
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, out, 0o600); err != nil {
			b.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// jpegSegment returns the first marker segment of kind marker whose payload starts
// with prefix, marker and length included.
func jpegSegment(data []byte, marker byte, prefix string) []byte {
	for i := 2; i+4 <= len(data) && data[i] == 0xFF; {
		m, n := data[i+1], int(data[i+2])<<8|int(data[i+3])
		if m == 0xDA || i+2+n > len(data) {
			return nil
		}
		if m == marker && bytes.HasPrefix(data[i+4:i+2+n], []byte(prefix)) {
			return data[i : i+2+n]
		}
		i += 2 + n
	}
	return nil
}

// BenchmarkLensStep3x21MP is the lens step on three 21 MP brackets held as 8-bit
// codes, as the pipeline has them before alignment: the map once, the three frames
// resampled together.
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
		if _, err := c.ApplyAll(context.Background(), frames); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/op")
}

// BenchmarkDevelopLens3x21MP develops a 3 x 21 MP set whose lens is calibrated four
// ways in one run: both corrections off, lens only, colour only and both on, for the
// share of develop's time they take (at most 25 % together). Each reports its steps'
// times (ms per develop, the "-ms" metrics), the process's CPU time per develop
// (cpu-ms/op, which other work on a shared machine disturbs less than the wall
// time) and, after "off", the ratios of both to off's measured in the same run
// (x-off, cpu-x-off): only figures of one run compare. The set is shot from a
// tripod, so the lens step only prepares the map and the merge step resamples the
// merge (with the colour correction when it is on: then the colour step's own time
// is nil).
func BenchmarkDevelopLens3x21MP(b *testing.B) {
	if !lens.Available() {
		b.Skip("the lensfun database is not installed (liblensfun-data-v1)")
	}
	paths := calibratedOffice(b)
	cases := []struct {
		name        string
		lens, color bool
	}{{"off", false, false}, {"lens", true, false}, {"color", false, true}, {"both", true, true}}
	msPerOp, cpuPerOp := map[string]float64{}, map[string]float64{}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := New(Config{Logger: quiet(), MaxEdge: 1 << 14})
			fa := &fileAssets{paths: map[string]string{}}
			ids := []string{"in0", "in1", "in2"}
			for i, id := range ids {
				fa.paths[id] = paths[i]
			}
			opts := resolved(b, core.Options{LensCorrection: ptr(c.lens), ColorCorrection: ptr(c.color)})
			// A step runs from its first progress report to the next step's.
			steps := map[string]float64{}
			var cur string
			var at time.Time
			report := func(pr Progress) {
				if pr.Step != cur {
					now := time.Now()
					if cur != "" {
						steps[cur] += float64(now.Sub(at).Microseconds()) / 1000
					}
					cur, at = pr.Step, now
				}
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := imagingtest.ProcessCPU()
			for i := range b.N {
				order := c.name + string(rune('a'+i%26))
				delete(fa.out, order)
				cur = ""
				res, err := p.Run(context.Background(), Request{OrderID: order, Inputs: ids, Options: opts, Assets: fa}, report)
				if err != nil {
					b.Fatal(err)
				}
				steps[cur] += float64(time.Since(at).Microseconds()) / 1000
				if c.lens != hasNote(res.Notes, "lens correction: corrected") {
					b.Fatalf("notes %q", res.Notes)
				}
			}
			cpu := float64((imagingtest.ProcessCPU() - cpu0).Microseconds()) / 1000 / float64(b.N)
			ms := float64(b.Elapsed().Microseconds()) / 1000 / float64(b.N)
			msPerOp[c.name], cpuPerOp[c.name] = ms, cpu
			b.ReportMetric(ms, "ms/op")
			b.ReportMetric(cpu, "cpu-ms/op")
			for _, step := range []string{StepDecode, StepLens, StepAlign, StepMerge, StepColor, StepEncode} {
				if v, ok := steps[step]; ok {
					b.ReportMetric(v/float64(b.N), step+"-ms")
				}
			}
			if off, ok := msPerOp["off"]; ok && c.name != "off" {
				b.ReportMetric(ms/off, "x-off")
				b.ReportMetric(cpu/cpuPerOp["off"], "cpu-x-off")
			}
		})
	}
}
