package tone

import (
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

// goldenLooks are representative settings of the kind the presets use: a natural
// finish, a bright and airy one, a strong local tone map, and a dim room made bright
// with clarity and clean shadows.
var goldenLooks = map[string]Look{
	"natural": {Contrast: 10, Highlights: -30, Shadows: 25, Vibrance: 15, AutoLevels: true, Sharpen: true},
	"bright_airy": {
		Temperature: 6, Exposure: 0.3, Contrast: -5, Highlights: -40, Shadows: 45, Whites: 15, Blacks: 10,
		Vibrance: 10, Saturation: -5, Warmth: 5, Curve: []Point{{0.25, 0.28}, {0.75, 0.8}}, AutoLevels: true,
	},
	"dramatic": {Contrast: 35, Highlights: -80, Shadows: 70, Whites: -10, Blacks: -15, Saturation: 10, Sharpen: true},
	"clean_clarity": {
		Exposure: 0.6, Contrast: 12, Highlights: -65, Shadows: 70, Whites: 5, Blacks: -5, Vibrance: 15,
		Warmth: 3, Clarity: 45, CleanShadows: 80, Curve: []Point{{0.25, 0.3}, {0.5, 0.59}, {0.75, 0.82}},
		AutoLevels: true, Sharpen: true,
	},
}

// TestGoldenLooks renders each look on two photos shrunk 4x (256 pixels wide) and
// compares with the stored results: at most 1/255 mean and 6/255 peak difference per
// channel and SSIM >= 0.995, so harmless float reordering passes and any change of
// behaviour fails. Run with -update to accept a deliberate change.
func TestGoldenLooks(t *testing.T) {
	photos := map[string]*imaging.Image{
		"kitchen":    kitchen(t),
		"windowroom": windowRoom(t),
	}
	for pname, src := range photos {
		small := shrink(src, 4)
		for lname, look := range goldenLooks {
			name := pname + "_" + lname
			out := mustApply(t, small, look)
			path := filepath.Join("testdata", "golden", name+".png")
			if *update {
				writePNG(t, path, out.ToNRGBA())
				continue
			}
			want := readPNG(t, path)
			got := out.ToNRGBA()
			if got.Bounds() != want.Bounds() {
				t.Fatalf("%s: size %v, golden %v", name, got.Bounds(), want.Bounds())
			}
			var sum, peak float64
			n := 0
			for i := range got.Pix {
				if i%4 == 3 {
					continue
				}
				d := math.Abs(float64(got.Pix[i]) - float64(want.Pix[i]))
				sum += d
				peak = math.Max(peak, d)
				n++
			}
			ssim, err := quality.SSIM(imaging.FromImage(got, false), imaging.FromImage(want, false), quality.SSIMOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if sum/float64(n) > 1 || peak > 6 || ssim < 0.995 {
				t.Errorf("%s: differs from golden: mean %.2f, peak %.0f codes, SSIM %.4f", name, sum/float64(n), peak, ssim)
			}
		}
	}
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

// shrink box-averages f x f blocks (linear light); the golden inputs do not depend on
// any resampler elsewhere.
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
