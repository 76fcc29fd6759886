package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
	"github.com/porchlight/porchlight/internal/flowtest"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func needLensfun(t testing.TB) {
	t.Helper()
	if !lens.Available() {
		t.Skip("the lensfun database is not installed (liblensfun-data-v1)")
	}
}

// Lenses real-estate photographers use, at their wide end, as their EXIF names them.
var estateShots = []struct {
	name string
	shot lens.Shot
}{
	{"Canon EF 16-35mm f/4L", lens.Shot{Make: "Canon", Model: "Canon EOS 5D Mark III", LensModel: "EF16-35mm f/4L IS USM", Focal: 16, Aperture: 8}},
	{"Canon EF-S 10-18mm", lens.Shot{Make: "Canon", Model: "Canon EOS 80D", LensModel: "EF-S10-18mm f/4.5-5.6 IS STM", Focal: 10, Aperture: 6.3}},
	{"Sony FE 12-24mm f/4 G", lens.Shot{Make: "SONY", Model: "ILCE-7M3", LensModel: "FE 12-24mm F4 G", Focal: 12, Aperture: 8}},
	{"Nikon AF-S 14-24mm f/2.8G", lens.Shot{Make: "NIKON CORPORATION", Model: "NIKON D750", LensModel: "AF-S Zoom-Nikkor 14-24mm f/2.8G ED", Focal: 14, Aperture: 8}},
	{"Tokina 11-16mm f/2.8", lens.Shot{Make: "NIKON CORPORATION", Model: "NIKON D7200", LensModel: "Tokina AT-X 116 PRO DX 11-16mm f/2.8", Focal: 11, Aperture: 8}},
	{"Nikon Z 14-30mm f/4 S", lens.Shot{Make: "NIKON CORPORATION", Model: "NIKON Z 6_2", LensModel: "NIKKOR Z 14-30mm f/4 S", Focal: 14, Aperture: 7.1}},
}

// writeShot encodes img as a camera JPEG with the shot's EXIF.
func writeShot(t testing.TB, path string, img *imaging.Image, s lens.Shot) {
	t.Helper()
	var buf bytes.Buffer
	meta := codec.Meta{Make: s.Make, Model: s.Model, LensModel: s.LensModel, FocalLength: s.Focal, FNumber: s.Aperture}
	if err := codec.Encode(&buf, img, codec.EncodeOptions{Format: "jpeg", Quality: 97, Meta: &meta}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func developFiles(t testing.TB, p *Pipeline, order string, paths ...string) (*imaging.Image, Result) {
	t.Helper()
	fa := &fileAssets{paths: map[string]string{}}
	var ids []string
	for i, path := range paths {
		id := "in" + string(rune('0'+i))
		fa.paths[id] = path
		ids = append(ids, id)
	}
	opts := resolved(t, core.Options{LensCorrection: ptr(true), Format: ptr("png")})
	res, err := p.Run(context.Background(), Request{OrderID: order, Inputs: ids, Options: opts, Assets: fa}, nil)
	if err != nil {
		t.Fatalf("%s: %v", order, err)
	}
	out, _, err := codec.Decode(bytes.NewReader(fa.out[order]), int64(len(fa.out[order])), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func hasNote(notes []string, sub string) bool {
	for _, n := range notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

// TestLensCorrectionStraightensLenses renders what each lens makes of straight
// photos (lensfun's own models of its distortion, TCA and vignetting), writes them as
// that camera's JPEGs and develops them: the displacement left after an affine
// registration to the straight photo is at most a fifth of the uncorrected one's.
func TestLensCorrectionStraightensLenses(t *testing.T) {
	needLensfun(t)
	p := New(Config{Logger: quiet()})
	dir := t.TempDir()
	for _, rel := range [][]string{
		{"interiors", "houses_109_bedroom.jpg"},
		{"exteriors", "houses_112_frontal.jpg"},
	} {
		straight := decodeFile(t, testphotos.Path(t, rel...))
		for i, l := range estateShots {
			sim, err := lens.Simulate(l.shot, straight.W(), straight.H())
			if err != nil {
				t.Fatalf("%s: %v", l.name, err)
			}
			bent, err := sim.Apply(context.Background(), straight)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, strings.TrimSuffix(rel[1], ".jpg")+"_"+string(rune('a'+i))+".jpg")
			writeShot(t, path, bent, l.shot)
			in := decodeFile(t, path)
			out, res := developFiles(t, p, path, path)
			if !hasNote(res.Notes, "lens correction: corrected distortion") {
				t.Fatalf("%s: notes %q", l.name, res.Notes)
			}
			before, after := flowtest.Residual(straight, in), flowtest.Residual(straight, out)
			t.Logf("%-26s %-24s p95 %.3f%% -> %.3f%% of the diagonal (median %.3f%% -> %.3f%%)",
				rel[1], l.name, before.P95, after.P95, before.Median, after.Median)
			if after.P95 > 0.2*before.P95 {
				t.Errorf("%s %s: %.3f%% of the diagonal left, %.3f%% before", rel[1], l.name, after.P95, before.P95)
			}
			if i == 0 {
				// As brackets: held as 8-bit codes, corrected before alignment and merged.
				out, res := developFiles(t, p, path+"-brackets", path, path, path)
				merged := flowtest.Residual(straight, out)
				t.Logf("%-26s %-24s as 3 brackets: p95 %.3f%% of the diagonal, notes %q", rel[1], l.name, merged.P95, res.Notes)
				if merged.P95 > 0.2*before.P95 {
					t.Errorf("%s %s as brackets: %.3f%% left, %.3f%% before", rel[1], l.name, merged.P95, before.P95)
				}
				// Hand-held: one bracket moved by a few pixels, which alignment must
				// warp, so the brackets are corrected before it registers them.
				moved := filepath.Join(dir, "moved_"+rel[1])
				writeShot(t, moved, shifted(bent, 5, 3), l.shot)
				out, res = developFiles(t, p, path+"-handheld", path, moved, path)
				held := flowtest.Residual(straight, out)
				t.Logf("%-26s %-24s as 3 hand-held brackets: p95 %.3f%% of the diagonal, notes %q", rel[1], l.name, held.P95, res.Notes)
				if held.P95 > 0.2*before.P95 {
					t.Errorf("%s %s as hand-held brackets: %.3f%% left, %.3f%% before", rel[1], l.name, held.P95, before.P95)
				}
			}
		}
	}
}

// shifted returns img moved right by dx and down by dy pixels, the edges repeated.
func shifted(img *imaging.Image, dx, dy int) *imaging.Image {
	out := imaging.New(img.W(), img.H(), img.C)
	for y := range img.H() {
		src := img.Row(min(max(y-dy, 0), img.H()-1))
		dst := out.Row(y)
		for x := range img.W() {
			sx := min(max(x-dx, 0), img.W()-1)
			copy(dst[x*img.C:(x+1)*img.C], src[sx*img.C:(sx+1)*img.C])
		}
	}
	return out
}

// TestLensCorrectionLeavesDeveloperExports: the flambient photos are Capture One
// exports of a lens lensfun knows; the developer corrected them, so develop leaves
// their geometry as it is and says why.
func TestLensCorrectionLeavesDeveloperExports(t *testing.T) {
	needLensfun(t)
	p := New(Config{Logger: quiet()})
	ents, err := os.ReadDir(filepath.Join(testphotos.Dir(t), "flambient"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), "_ambient__clean-edge-0017.jpg") && !strings.HasSuffix(e.Name(), "_ambient__clean-edge-0004.jpg") {
			continue
		}
		n++
		path := testphotos.Path(t, "flambient", e.Name())
		in := decodeFile(t, path)
		out, res := developFiles(t, p, e.Name(), path)
		if !hasNote(res.Notes, "exported by Capture One") || hasNote(res.Notes, "corrected distortion") {
			t.Errorf("%s: notes %q", e.Name(), res.Notes)
		}
		if !imaging.SameSize(in, out) {
			t.Fatalf("%s: %dx%d became %dx%d", e.Name(), in.W(), in.H(), out.W(), out.H())
		}
		// Measured at a quarter of the size: any resampling would show there too.
		r := flowtest.Residual(imagingtest.Shrink(in, 4), imagingtest.Shrink(out, 4))
		f := r.Fit
		t.Logf("%s: p95 %.4f%% of the diagonal, fit %.5f %.5f %.3f / %.5f %.5f %.3f", e.Name(), r.P95, f[0], f[1], f[2], f[3], f[4], f[5])
		if r.P95 > 0.01 || abs(f[0]-1) > 1e-4 || abs(f[4]-1) > 1e-4 || abs(f[2]) > 0.05 || abs(f[5]) > 0.05 {
			t.Errorf("%s: geometry changed: %+v", e.Name(), r)
		}
	}
	if n == 0 {
		t.Fatal("no flambient photos")
	}
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestLensCorrectionWithoutProfile: the office set's fisheye has no calibrated
// profile to match (its EXIF names no lens), so the notes say so and the photo goes
// on as shot.
func TestLensCorrectionWithoutProfile(t *testing.T) {
	needLensfun(t)
	p := New(Config{Logger: quiet(), MaxEdge: 1 << 14})
	path := testphotos.Path(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	in := decodeFile(t, path)
	out, res := developFiles(t, p, "office", path)
	if !hasNote(res.Notes, "lens correction: no calibrated lens profile") {
		t.Fatalf("notes %q", res.Notes)
	}
	if !imaging.SameSize(in, out) {
		t.Fatalf("%dx%d became %dx%d", in.W(), in.H(), out.W(), out.H())
	}
	t.Logf("notes: %q", res.Notes)
}
