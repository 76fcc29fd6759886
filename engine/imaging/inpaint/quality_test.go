package inpaint

import (
	"context"
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

var (
	sheetPath = flag.String("sheet", "", "write the quality test's contact sheet (original | hole | ours | NS | TELEA) to this PNG")
	_         = flag.Bool("full", true, "no effect: the quality test always compares on all six photos")
)

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

// fillScore measures a fill against the original inside the hole.
type fillScore struct {
	ssim      float64 // mean SSIM over the hole
	near, far float64 // the same within 8 px of the border, and deeper
	seam      float64 // seamScore along the border
	texture   float64 // mean |∇| in the hole relative to the original's there
}

func (s fillScore) String() string {
	return fmt.Sprintf("SSIM %.3f (%.3f/%.3f) seam %.3f texture %.2f", s.ssim, s.near, s.far, s.seam, s.texture)
}

// Texture bounds of TestQualityAgainstOpenCV; see there.
const (
	texMeanRatio = 1.1
	texCaseFloor = 0.2
)

// TestQualityAgainstOpenCV cuts seeded holes of 3, 8 and
// 15% of the area (blobs and rectangles) into six real interiors and exteriors (the
// requirement holds on average, so a subset would not test it; the run takes well
// under a minute), fills
// them, and compares the fill with OpenCV's Navier-Stokes and Telea inpainting at
// their best radius (3, 4 or 5; the best SSIM and, separately, the best seam).
//
// Averaged over the cases, the fill must score a lower seam score than either
// (seamScore along the hole's border; for ours the worse of that and the grown hole's
// border, where our fill meets the untouched photo). It must also keep texture where
// diffusion smears it: mean |∇| in the hole relative to the original's at least
// texCaseFloor in every case and on average texMeanRatio times the better OpenCV
// method's (per case the comparison would not be fair: Telea's streaks count as
// texture too). Single cases may fall below OpenCV on SSIM or seam, where the hole
// hides something the photo does not repeat; the test logs every figure.
func TestQualityAgainstOpenCV(t *testing.T) {
	if testing.Short() {
		t.Skip("the comparison with OpenCV takes a while; run without -short")
	}
	script := opencvScript(t)
	photos := []struct {
		rel  []string
		seed uint64 // holes are drawn from seed and the hole size
	}{
		{[]string{"interiors", "houses_109_bedroom.jpg"}, 0},
		{[]string{"interiors", "houses_218_kitchen.jpg"}, 100},
		{[]string{"interiors", "houses_111_bedroom.jpg"}, 200},
		{[]string{"exteriors", "houses_102_frontal.jpg"}, 300},
		{[]string{"exteriors", "houses_117_frontal.jpg"}, 400},
		{[]string{"exteriors", "houses_191_frontal.jpg"}, 500},
	}
	sizes := []struct {
		frac   float64
		shapes int
	}{{0.03, 3}, {0.08, 2}, {0.15, 1}}

	var rows [][]*imaging.Image
	var sumOurs, sumNS, sumTelea fillScore
	cases := 0
	for _, photo := range photos {
		rel := photo.rel
		orig := loadPhoto(t, rel...)
		w, h := orig.W(), orig.H()
		lo := lumaPlane(orig)
		for si, sz := range sizes {
			name := fmt.Sprintf("%s/%.0f%%", rel[1], 100*sz.frac)
			mask := holeShapes(w, h, sz.frac, sz.shapes, photo.seed+uint64(si)+1)
			in := blank(orig, mask)
			ours, err := Erase(context.Background(), in, mask, Options{Seed: 7})
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
			for i, v := range mask.Pix {
				hole[i] = v > 0.5
			}
			depth := imaging.Chamfer(hole, w, h, true)
			near, far := make([]bool, w*h), make([]bool, w*h)
			for i := range hole {
				near[i] = hole[i] && depth[i] <= 3*8
				far[i] = hole[i] && depth[i] > 3*8
			}
			band := borderBand(hole, w, h)
			// Our own border is where the grown hole meets the untouched photo.
			toHole := imaging.Chamfer(hole, w, h, false)
			grown := make([]bool, w*h)
			for i, d := range toHole {
				grown[i] = d <= int32(3*growPixels(w, h))
			}
			grownBand := borderBand(grown, w, h)
			score := func(m *imaging.Image, ownBorder bool) fillScore {
				lf := lumaPlane(m)
				s := fillScore{
					ssim: ssimIn(lo, lf, hole, w, h), near: ssimIn(lo, lf, near, w, h), far: ssimIn(lo, lf, far, w, h),
					seam: seamScore(lo, lf, band, w, h), texture: gradientRatio(lo, lf, hole, w, h),
				}
				if ownBorder {
					s.seam = max(s.seam, seamScore(lo, lf, grownBand, w, h))
				}
				return s
			}
			our := score(ours, true)
			// OpenCV at the radius with the best SSIM (texture too), and its best seam.
			best := map[string]fillScore{}
			bestImg := map[string]*imaging.Image{}
			for _, method := range []string{"ns", "telea"} {
				for i, r := range []int{3, 4, 5} {
					m := readPNG(t, filepath.Join(dir, fmt.Sprintf("%s_r%d.png", method, r)))
					s := score(m, false)
					b := best[method]
					if i == 0 || s.ssim > b.ssim {
						b.ssim, b.near, b.far, b.texture, bestImg[method] = s.ssim, s.near, s.far, s.texture, m
					}
					if i == 0 || s.seam < b.seam {
						b.seam = s.seam
					}
					best[method] = b
				}
			}
			ns, telea := best["ns"], best["telea"]
			t.Logf("%-26s ours %v | NS %v | TELEA %v", name, our, ns, telea)
			if our.texture < texCaseFloor {
				t.Errorf("%s: the fill keeps %.2f of the photo's gradient: a smear", name, our.texture)
			}
			for _, p := range []struct {
				sum *fillScore
				s   fillScore
			}{{&sumOurs, our}, {&sumNS, ns}, {&sumTelea, telea}} {
				p.sum.ssim += p.s.ssim
				p.sum.near += p.s.near
				p.sum.far += p.s.far
				p.sum.seam += p.s.seam
				p.sum.texture += p.s.texture
			}
			cases++
			rows = append(rows, []*imaging.Image{orig, in, ours, bestImg["ns"], bestImg["telea"]})
		}
	}
	mean := func(s fillScore) fillScore {
		n := float64(cases)
		return fillScore{s.ssim / n, s.near / n, s.far / n, s.seam / n, s.texture / n}
	}
	our, ns, telea := mean(sumOurs), mean(sumNS), mean(sumTelea)
	t.Logf("%-26s ours %v | NS %v | TELEA %v", "MEAN", our, ns, telea)
	t.Logf("mean SSIM %.4f vs %.4f, seam %.4f vs %.4f, texture %.3f vs %.3f", our.ssim, max(ns.ssim, telea.ssim),
		our.seam, min(ns.seam, telea.seam), our.texture, max(ns.texture, telea.texture))
	// SSIM is logged, not held against diffusion: it favours a smooth fill over
	// copied texture that is right in kind but not pixel for pixel (TestEraserTargets
	// holds it against the patch-based anchors).
	if ref := min(ns.seam, telea.seam); our.seam >= ref {
		t.Errorf("mean seam %.4f, not below OpenCV's %.4f", our.seam, ref)
	}
	if ref := max(ns.texture, telea.texture); our.texture < texMeanRatio*ref {
		t.Errorf("mean texture %.2f, less than %.1f times OpenCV's %.2f", our.texture, texMeanRatio, ref)
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
