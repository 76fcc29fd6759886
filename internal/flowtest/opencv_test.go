package flowtest

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

// farneback runs OpenCV's dense flow on two 8-bit gray images and writes the flow as
// float32 pairs.
const farneback = `
import sys, cv2, numpy as np
a = cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)
b = cv2.imread(sys.argv[2], cv2.IMREAD_GRAYSCALE)
f = cv2.calcOpticalFlowFarneback(a, b, None, 0.5, 6, 21, 5, 7, 1.5, 0)
f.astype('<f4').tofile(sys.argv[3])
`

// barrel bends m as a lens would: b(y) = m(c + (y-c)(1 + k r²)), r in half-diagonals.
func barrel(m *imaging.Image, k float64) *imaging.Image {
	w, h := m.W(), m.H()
	out := imaging.New(w, h, 3)
	cx, cy, hd := float64(w-1)/2, float64(h-1)/2, math.Hypot(float64(w), float64(h))/2
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := float64(x)-cx, float64(y)-cy
			s := 1 + k*(dx*dx+dy*dy)/(hd*hd)
			sx, sy := min(max(cx+dx*s, 0), float64(w-1)), min(max(cy+dy*s, 0), float64(h-1))
			x0, y0 := min(int(sx), w-2), min(int(sy), h-2)
			fx, fy := float32(sx-float64(x0)), float32(sy-float64(y0))
			for c := 0; c < 3; c++ {
				a, b := m.At(x0, y0, c), m.At(x0+1, y0, c)
				d, e := m.At(x0, y0+1, c), m.At(x0+1, y0+1, c)
				out.Set(x, y, c, (a+fx*(b-a))*(1-fy)+(d+fx*(e-d))*fy)
			}
		}
	}
	return out
}

// truth is the flow from the straight photo to the bent one at (x, y): the point y
// with c + (y-c)(1 + k r(y)²) = x, found by fixed-point iteration.
func truth(x, y float64, w, h int, k float64) (float64, float64) {
	cx, cy, hd := float64(w-1)/2, float64(h-1)/2, math.Hypot(float64(w), float64(h))/2
	dx, dy := x-cx, y-cy
	ux, uy := dx, dy
	for i := 0; i < 50; i++ {
		s := 1 + k*(ux*ux+uy*uy)/(hd*hd)
		ux, uy = dx/s, dy/s
	}
	return cx + ux - x, cy + uy - y
}

func writePGM(t *testing.T, path string, m *imaging.Image) {
	t.Helper()
	w, h := m.W(), m.H()
	buf := []byte(fmt.Sprintf("P5\n%d %d\n255\n", w, h))
	row := make([]float32, w*3)
	for y := 0; y < h; y++ {
		r := m.EncodedRow(y, row)
		for x := 0; x < w; x++ {
			l := 0.2126*r[3*x] + 0.7152*r[3*x+1] + 0.0722*r[3*x+2]
			buf = append(buf, uint8(min(max(l*255+0.5, 0), 255)))
		}
	}
	if err := os.WriteFile(path, buf, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestAgreesWithOpenCV compares the flow with OpenCV's Farnebäck flow on a photo bent
// by a known barrel distortion, and both with the truth, over the textured pixels
// Residual measures.
func TestAgreesWithOpenCV(t *testing.T) {
	py := "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import cv2").Run(); err != nil {
		t.Skip("python3-opencv is not installed")
	}
	a := imagingtest.LoadPhoto(t, "interiors", "houses_109_bedroom.jpg")
	const k = 0.03 // 3 % of the half-diagonal at the corners
	b := barrel(a, k)
	dir := t.TempDir()
	pa, pb, pf := filepath.Join(dir, "a.pgm"), filepath.Join(dir, "b.pgm"), filepath.Join(dir, "flow.bin")
	writePGM(t, pa, a)
	writePGM(t, pb, b)
	script := filepath.Join(dir, "farneback.py")
	if err := os.WriteFile(script, []byte(farneback), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(py, script, pa, pb, pf).CombinedOutput(); err != nil {
		t.Fatalf("farneback: %v: %s", err, out)
	}
	raw, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	w, h := a.W(), a.H()
	if len(raw) != w*h*8 {
		t.Fatalf("flow file has %d bytes, want %d", len(raw), w*h*8)
	}
	f := Dense(GrayOf(a), GrayOf(b))
	m := max(Radius*2, min(w, h)/12)
	var dOurs, dCV, dBoth []float64
	for y := m; y < h-m; y++ {
		for x := m; x < w-m; x++ {
			i := y*w + x
			if f.MinEig[i] < TextureMin {
				continue
			}
			cu := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[8*i:])))
			cv := float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[8*i+4:])))
			tu, tv := truth(float64(x), float64(y), w, h, k)
			ou, ov := float64(f.U[i]), float64(f.V[i])
			dOurs = append(dOurs, math.Hypot(ou-tu, ov-tv))
			dCV = append(dCV, math.Hypot(cu-tu, cv-tv))
			dBoth = append(dBoth, math.Hypot(ou-cu, ov-cv))
		}
	}
	q := func(v []float64, p int) float64 { sort.Float64s(v); return v[len(v)*p/100] }
	diag := math.Hypot(float64(w), float64(h))
	t.Logf("%d textured pixels; error against the truth, median / p95 in px: ours %.3f / %.3f, OpenCV Farnebäck %.3f / %.3f; ours against OpenCV %.3f / %.3f (p95 %.3f%% of the diagonal)",
		len(dOurs), q(dOurs, 50), q(dOurs, 95), q(dCV, 50), q(dCV, 95), q(dBoth, 50), q(dBoth, 95), 100*q(dBoth, 95)/diag)
	if q(dOurs, 95) > q(dCV, 95)+0.5 {
		t.Errorf("the flow is further from the truth than OpenCV's")
	}
}
