package fuse_test

import (
	"bytes"
	"context"
	"fmt"
	_ "image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "golang.org/x/image/tiff"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// AnchorsEnv names the variable that enables TestMEFSSIMAgainstAnchors and gives the
// folder where aligned brackets and the anchors' outputs are kept between runs.
const AnchorsEnv = "PORCHLIGHT_FUSION_ANCHORS"

// mertensScript runs OpenCV's MergeMertens with its defaults and writes 16-bit PNG.
const mertensScript = `
import sys, cv2, numpy as np
imgs = [cv2.imread(f) for f in sys.argv[2:]]
out = cv2.createMergeMertens().process(imgs)
cv2.imwrite(sys.argv[1], (np.clip(out, 0, 1) * 65535 + 0.5).astype(np.uint16))
`

// TestMEFSSIMAgainstAnchors fuses every bracket set of the test photos and compares
// the MEF-SSIM of our fusion with enfuse's (Debian enfuse 4.2, defaults) and OpenCV's
// MergeMertens (defaults: contrast 1, saturation 1, exposure 0). All three fuse the
// same input: our aligned brackets, written as 8-bit PNG (for tripod sets these are
// the original pixels). MEF-SSIM is computed against that sequence, on luma reduced
// to at most 1024 pixels on the longer side (quality.DefaultMEFMaxSide).
func TestMEFSSIMAgainstAnchors(t *testing.T) {
	cache := os.Getenv(AnchorsEnv)
	if cache == "" {
		t.Skipf("set %s to a folder to run the anchor comparison (takes minutes)", AnchorsEnv)
	}
	enfuse, err := exec.LookPath("enfuse")
	if err != nil {
		t.Skip("enfuse not installed")
	}
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		py = "python3"
	}
	if out, err := exec.Command(py, "-c", "import cv2").CombinedOutput(); err != nil {
		t.Skipf("python3 with cv2 not available: %v %s", err, out)
	}
	root := filepath.Join(testphotos.Dir(t), "brackets")
	scenes, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var report []string
	for _, sc := range scenes {
		if !sc.IsDir() {
			continue
		}
		name := sc.Name()
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(cache, name)
			frames := alignedFrames(t, name, dir)
			seq := make([]*imaging.Image, len(frames))
			for i, f := range frames {
				seq[i] = imagingtest.LoadFile(t, f)
			}
			t0 := time.Now()
			ours, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			dt := time.Since(t0)
			enf := filepath.Join(dir, "enfuse.tif")
			if _, err := os.Stat(enf); err != nil {
				run(t, enfuse, append([]string{"-o", enf}, frames...)...)
			}
			cv := filepath.Join(dir, "mertens.png")
			if _, err := os.Stat(cv); err != nil {
				run(t, py, append([]string{"-c", mertensScript, cv}, frames...)...)
			}
			score := func(m *imaging.Image) float64 {
				r, err := quality.MEFSSIM(seq, m, quality.MEFOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return r.Score
			}
			so, se, sc := score(ours), score(imagingtest.LoadFile(t, enf)), score(imagingtest.LoadFile(t, cv))
			line := fmt.Sprintf("%-26s ours %.4f  enfuse %.4f  opencv %.4f  (%d brackets, fuse %v)", name, so, se, sc, len(seq), dt.Round(time.Millisecond))
			t.Log(line)
			report = append(report, line)
			if so < se || so < sc {
				t.Errorf("%s: MEF-SSIM %.4f below an anchor (enfuse %.4f, opencv %.4f)", name, so, se, sc)
			}
		})
	}
	t.Log("MEF-SSIM (sRGB luma, longer side 1024):\n" + strings.Join(report, "\n"))
}

// alignedFrames aligns the brackets of a scene and writes them as 8-bit PNG into dir,
// reusing files from an earlier run.
func alignedFrames(t *testing.T, scene, dir string) []string {
	t.Helper()
	src := filepath.Join(testphotos.Dir(t), "brackets", scene)
	names := testphotos.Brackets(t, scene)
	out := make([]string, len(names))
	missing := false
	for i := range names {
		out[i] = filepath.Join(dir, fmt.Sprintf("aligned_%d.png", i))
		if _, err := os.Stat(out[i]); err != nil {
			missing = true
		}
	}
	if !missing {
		return out
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	imgs := make([]*imaging.Image, len(names))
	for i, n := range names {
		imgs[i] = imagingtest.LoadFile(t, filepath.Join(src, n))
	}
	al, ts, err := align.Align(context.Background(), imgs, align.ReferenceIndex(imgs), align.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range al {
		t.Logf("bracket %d: %v", i, ts[i].Model)
		var buf bytes.Buffer
		enc := png.Encoder{CompressionLevel: png.BestSpeed}
		if err := enc.Encode(&buf, m.ToNRGBA()); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out[i], buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}
