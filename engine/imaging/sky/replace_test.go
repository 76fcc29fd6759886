package sky

import (
	"context"
	"image"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// artifactDir is $PORCHLIGHT_ARTIFACTS when set (to keep the sheets), else a temp dir.
func artifactDir(t *testing.T) string {
	if d := os.Getenv("PORCHLIGHT_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// writePNG writes atomically: temp name, sync, rename.
func writePNG(t *testing.T, path string, m image.Image) {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(path), ".sheet-*.png")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if err := png.Encode(tmp, m); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		t.Fatal(err)
	}
}

const sheetCell = 400 // width of one contact-sheet cell

func thumb(img *imaging.Image, w int) *image.NRGBA {
	h := max(1, int(math.Round(float64(img.H())*float64(w)/float64(img.W()))))
	return imaging.Resize(img, w, h).ToNRGBA()
}

// nonSkyDrift measures how much the ground changed: pixels whose matte is below 0.05
// everywhere within erode pixels, compared in sRGB 0..1. It returns the mean and the
// 99th percentile of the per-pixel maximum channel difference.
func nonSkyDrift(t *testing.T, in, out, matte *imaging.Image, erode int) (mean, p99 float64) {
	w, h := in.W(), in.H()
	sky := make([]bool, w*h)
	for p := range sky {
		sky[p] = matte.Pix[p] >= 0.05
	}
	near := dilate(sky, w, h, erode)
	var diffs []float64
	for y := 0; y < h; y++ {
		a, b := in.Row(y), out.Row(y)
		for x := 0; x < w; x++ {
			if near[y*w+x] {
				continue
			}
			d := 0.0
			for c := 0; c < 3; c++ {
				i := x*in.C + c
				d = max(d, math.Abs(float64(imaging.Encode16(a[i]))-float64(imaging.Encode16(b[i])))/65535)
			}
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 {
		t.Fatal("no non-sky pixels")
	}
	s := 0.0
	for _, d := range diffs {
		s += d
	}
	slices.Sort(diffs)
	return s / float64(len(diffs)), diffs[len(diffs)*99/100]
}

// TestReplaceExteriors replaces the sky of every exterior photo in every style, writes
// a contact sheet (original | matte | clear | low_cloud | neutral | high_cloud) and
// checks that the ground changes only gently.
func TestReplaceExteriors(t *testing.T) {
	dir := testphotos.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "exteriors", "*.jpg"))
	if len(files) == 0 {
		t.Fatalf("no exteriors under %s", dir)
	}
	if testing.Short() {
		files = files[:1]
	}
	var rows [][]*image.NRGBA
	for _, fn := range files {
		name := filepath.Base(fn)
		img := imagingtest.LoadFile(t, fn)
		matte, res, err := Segment(context.Background(), img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !res.Found {
			t.Errorf("%s: no sky found: %s", name, res.Reason)
			continue
		}
		row := []*image.NRGBA{thumb(img, sheetCell), thumb(matte, sheetCell)}
		for _, st := range Styles() {
			out, r2, err := Replace(context.Background(), img, st)
			if err != nil {
				t.Fatalf("%s %s: %v", name, st, err)
			}
			if !r2.Found || math.Abs(r2.Fraction-res.Fraction) > 1e-3 {
				t.Errorf("%s %s: Replace found=%v fraction %.4f, Segment %.4f", name, st, r2.Found, r2.Fraction, res.Fraction)
			}
			mean, p99 := nonSkyDrift(t, img, out, matte, 4)
			t.Logf("%s %-10s sky %.3f  ground drift mean %.4f p99 %.4f", name, st, res.Fraction, mean, p99)
			if mean > 0.02 || p99 > 0.04 {
				t.Errorf("%s %s: ground changed too much (mean %.4f, p99 %.4f)", name, st, mean, p99)
			}
			row = append(row, thumb(out, sheetCell))
		}
		rows = append(rows, row)
	}
	sheet := contactSheet(rows)
	path := filepath.Join(artifactDir(t), "sky_contact_sheet.png")
	writePNG(t, path, sheet)
	t.Logf("contact sheet: %s", path)
}

func contactSheet(rows [][]*image.NRGBA) *image.NRGBA {
	const gap = 4
	W, H := 0, 0
	for _, r := range rows {
		w, h := 0, 0
		for _, c := range r {
			w += c.Bounds().Dx() + gap
			h = max(h, c.Bounds().Dy())
		}
		W = max(W, w)
		H += h + gap
	}
	sheet := image.NewNRGBA(image.Rect(0, 0, W, H))
	draw.Draw(sheet, sheet.Bounds(), image.White, image.Point{}, draw.Src)
	y := 0
	for _, r := range rows {
		x, h := 0, 0
		for _, c := range r {
			b := c.Bounds()
			draw.Draw(sheet, image.Rect(x, y, x+b.Dx(), y+b.Dy()), c, image.Point{}, draw.Src)
			x += b.Dx() + gap
			h = max(h, b.Dy())
		}
		y += h + gap
	}
	return sheet
}
