package perspective

import (
	"context"
	"flag"
	"image"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/quality"
)

var update = flag.Bool("update", false, "rewrite the golden images in testdata/golden")

// TestGoldenCorrections compares full corrections, shrunk 4x, with stored results:
// at most 2/255 mean difference and SSIM >= 0.98, so a shift of the estimate by a
// few hundredths of a degree passes and a different correction fails. Run with
// -update to accept a deliberate change.
func TestGoldenCorrections(t *testing.T) {
	for name, rel := range map[string][]string{
		"bedroom156": {"interiors", "houses_156_bedroom.jpg"},
		"oldhouse2":  {"brackets", "oldhouse_exterior", "OldHouse2.jpg"},
	} {
		img := loadPhoto(t, rel...)
		out, res, err := Correct(context.Background(), img, 1)
		if err != nil || !res.Applied {
			t.Fatalf("%s: %v %q", name, err, res.Reason)
		}
		got := shrink(out, 4).ToNRGBA()
		path := filepath.Join("testdata", "golden", name+".png")
		if *update {
			writePNG(t, path, got)
			continue
		}
		want := readPNG(t, path)
		if got.Bounds() != want.Bounds() {
			t.Fatalf("%s: size %v, golden %v", name, got.Bounds(), want.Bounds())
		}
		var sum float64
		n := 0
		for i := range got.Pix {
			if i%4 != 3 {
				sum += math.Abs(float64(got.Pix[i]) - float64(want.Pix[i]))
				n++
			}
		}
		ssim, err := quality.SSIM(imaging.FromImage(got, false), imaging.FromImage(want, false), quality.SSIMOptions{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: mean difference %.2f codes, SSIM %.4f", name, sum/float64(n), ssim)
		if sum/float64(n) > 2 || ssim < 0.98 {
			t.Errorf("%s: differs from golden: mean %.2f codes, SSIM %.4f", name, sum/float64(n), ssim)
		}
	}
}

// shrink box-averages f x f blocks (linear light).
func shrink(src *imaging.Image, f int) *imaging.Image {
	w, h, c := src.W()/f, src.H()/f, src.C
	out := imaging.New(w, h, c)
	for y := 0; y < h; y++ {
		row := out.Row(y)
		for sy := y * f; sy < (y+1)*f; sy++ {
			in := src.Row(sy)
			for x := 0; x < w; x++ {
				for sx := x * f; sx < (x+1)*f; sx++ {
					for k := 0; k < c; k++ {
						row[x*c+k] += in[sx*c+k]
					}
				}
			}
		}
		for i := range row {
			row[i] /= float32(f * f)
		}
	}
	return out
}

func writePNG(t *testing.T, path string, img image.Image) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		t.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func readPNG(t *testing.T, path string) *image.NRGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := m.(*image.NRGBA); ok {
		return n
	}
	b := m.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, m.At(x, y))
		}
	}
	return n
}
