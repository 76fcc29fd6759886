package inpaint

import (
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

var sheetPath = flag.String("sheet", "", "write the quality test's contact sheet (original | hole | ours | NS | TELEA) to this PNG")

// pythonCV is the interpreter that has OpenCV; the python3 first on PATH may not.
const pythonCV = "/usr/bin/python3"

func opencvScript(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(pythonCV); err != nil {
		t.Skipf("no %s, so no OpenCV reference: %v", pythonCV, err)
	}
	if out, err := exec.Command(pythonCV, "-c", "import cv2").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import cv2, so no OpenCV reference: %v %s", pythonCV, err, out)
	}
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "opencv_inpaint.py")
	if _, err := os.Stat(script); err != nil {
		t.Fatalf("reference script missing: %v", err)
	}
	return script
}

type fillScore struct {
	ssim, near, far, seam, ratio float64
}

func (s fillScore) String() string {
	return fmt.Sprintf("SSIM %.3f (%.3f/%.3f) seam %.3f", s.ssim, s.near, s.far, s.seam)
}

// TestQualityAgainstOpenCV cuts seeded holes of 3, 8 and 15% of the area into real
// interiors and exteriors, fills them, and requires, inside every hole, an SSIM
// against the original at least as high as OpenCV's Navier-Stokes and Telea fills at
// their best radius (3, 4 or 5) and a less visible border (seamScore).
func TestQualityAgainstOpenCV(t *testing.T) {
	script := opencvScript(t)
	photos := [][]string{
		{"interiors", "houses_109_bedroom.jpg"},
		{"interiors", "houses_218_kitchen.jpg"},
		{"interiors", "houses_111_bedroom.jpg"},
		{"exteriors", "houses_102_frontal.jpg"},
		{"exteriors", "houses_117_frontal.jpg"},
		{"exteriors", "houses_191_frontal.jpg"},
	}
	if testing.Short() {
		photos = [][]string{photos[0], photos[3]}
	}
	sizes := []struct {
		frac   float64
		shapes int
	}{{0.03, 3}, {0.08, 2}, {0.15, 1}}

	var rows [][]*imaging.Image
	for pi, rel := range photos {
		orig := loadPhoto(t, rel...)
		w, h := orig.W(), orig.H()
		lo := lumaPlane(orig)
		for si, sz := range sizes {
			name := fmt.Sprintf("%s/%.0f%%", rel[1], 100*sz.frac)
			mask := holeShapes(w, h, sz.frac, sz.shapes, uint64(100*pi+si+1))
			in := blank(orig, mask)
			ours, err := Erase(in, mask, Options{Seed: 7})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}

			dir := t.TempDir()
			writePNG(t, filepath.Join(dir, "in.png"), in.ToNRGBA())
			writePNG(t, filepath.Join(dir, "mask.png"), mask.ToNRGBA())
			cmd := exec.Command(pythonCV, script, filepath.Join(dir, "in.png"), filepath.Join(dir, "mask.png"), dir, "3", "4", "5")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: OpenCV reference: %v\n%s", name, err, out)
			}

			hole := make([]bool, w*h)
			n := 0
			for i, v := range mask.Pix {
				if v > 0.5 {
					hole[i] = true
					n++
				}
			}
			band := borderBand(hole, w, h)
			// Our own border is where the grown hole meets the untouched photo.
			toHole := chamfer(hole, w, h, false)
			grown := make([]bool, w*h)
			g := int32(3 * growPixels(w, h))
			for i, d := range toHole {
				grown[i] = d <= g
			}
			grownBand := borderBand(grown, w, h)

			depth := chamfer(hole, w, h, true)
			near, far := make([]bool, w*h), make([]bool, w*h)
			for i := range hole {
				near[i] = hole[i] && depth[i] <= 3*8
				far[i] = hole[i] && depth[i] > 3*8
			}
			score := func(m *imaging.Image, ownBorder bool) fillScore {
				lf := lumaPlane(m)
				s := fillScore{ssimIn(lo, lf, hole, w, h), ssimIn(lo, lf, near, w, h), ssimIn(lo, lf, far, w, h), seamScore(lo, lf, band, w, h), bandRatio(lo, lf, band, w, h)}
				if ownBorder {
					s.seam = max(s.seam, seamScore(lo, lf, grownBand, w, h))
				}
				return s
			}
			our := score(ours, true)
			best := map[string]fillScore{}
			bestImg := map[string]*imaging.Image{}
			for _, method := range []string{"ns", "telea"} {
				for _, r := range []int{3, 4, 5} {
					m := readPNG(t, filepath.Join(dir, fmt.Sprintf("%s_r%d.png", method, r)))
					s := score(m, false)
					b, ok := best[method]
					if !ok || s.ssim > b.ssim {
						b.ssim, b.near, b.far, bestImg[method] = s.ssim, s.near, s.far, m
					}
					if !ok || s.seam < b.seam {
						b.seam, b.ratio = s.seam, s.ratio
					}
					best[method] = b
				}
			}
			t.Logf("%-32s hole %.1f%%  ours %v | NS %v | TELEA %v", name, 100*float64(n)/float64(w*h), our, best["ns"], best["telea"])
			for _, method := range []string{"ns", "telea"} {
				if our.ssim < best[method].ssim {
					t.Errorf("%s: SSIM in the hole %.4f, below OpenCV %s's %.4f", name, our.ssim, method, best[method].ssim)
				}
				if our.seam > best[method].seam {
					t.Errorf("%s: seam %.3f, more visible than OpenCV %s's %.3f", name, our.seam, method, best[method].seam)
				}
			}
			rows = append(rows, []*imaging.Image{orig, in, ours, bestImg["ns"], bestImg["telea"]})
		}
	}
	if *sheetPath != "" {
		writePNG(t, *sheetPath, contactSheet(rows, 360))
		t.Logf("contact sheet: %s", *sheetPath)
	}
}

// contactSheet lays out rows of images, each scaled to cellW pixels wide.
func contactSheet(rows [][]*imaging.Image, cellW int) *image.NRGBA {
	const gap = 4
	cellH := 0
	for _, r := range rows {
		cellH = max(cellH, r[0].H()*cellW/r[0].W())
	}
	cols := len(rows[0])
	sheet := image.NewNRGBA(image.Rect(0, 0, cols*(cellW+gap), len(rows)*(cellH+gap)))
	draw.Draw(sheet, sheet.Bounds(), image.NewUniform(color.NRGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	for ri, r := range rows {
		for ci, m := range r {
			s := imaging.Resize(m, cellW, m.H()*cellW/m.W()).ToNRGBA()
			at := image.Pt(ci*(cellW+gap), ri*(cellH+gap))
			draw.Draw(sheet, s.Bounds().Add(at), s, image.Point{}, draw.Src)
		}
	}
	return sheet
}
