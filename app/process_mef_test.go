package app

import (
	"encoding/json"
	"flag"
	"fmt"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	_ "golang.org/x/image/tiff"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var updateMEF = flag.Bool("update", false, "rewrite testdata/mef_anchors.json from OpenCV and enfuse")

// mefAnchorsGolden records the anchors' MEF-SSIM per tripod set, for machines
// without OpenCV or enfuse.
const mefAnchorsGolden = "testdata/mef_anchors.json"

// mefMertens runs OpenCV's MergeMertens with its defaults and writes 16-bit PNG, so
// the anchor loses nothing to its own storage.
const mefMertens = `
import sys, cv2, numpy as np
imgs = [cv2.imread(f) for f in sys.argv[2:]]
out = cv2.createMergeMertens().process(imgs)
cv2.imwrite(sys.argv[1], (np.clip(out, 0, 1) * 65535 + 0.5).astype(np.uint16))
`

// mefTripodSets are the tripod bracket sets: their frames need no alignment, so
// every tool fuses the same pixels.
var mefTripodSets = []string{"house_interior_kim", "memorial_church_debevec", "room_window_e995", "living_room_windows"}

type mefAnchors struct {
	OpenCV float64 `json:"opencv_mertens"`
	Enfuse float64 `json:"enfuse"`
}

// TestProcessMEFSSIMAtLeastAnchors runs the real command on the tripod sets, as a
// plain merge order with the colour and lens corrections off (they change the photo
// on purpose), and checks that what it delivers (JPEG q92) scores at least as well on
// MEF-SSIM against the sources as OpenCV's MergeMertens and enfuse (defaults) do on
// the same files. The anchors run when python3-opencv and enfuse are installed; else
// their figures come from testdata/mef_anchors.json (rewritten with -update).
func TestProcessMEFSSIMAtLeastAnchors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four merges and both anchors (about a minute)")
	}
	root := filepath.Join(testphotos.Dir(t), "brackets")
	golden := map[string]mefAnchors{}
	if b, err := os.ReadFile(mefAnchorsGolden); err == nil {
		if err := json.Unmarshal(b, &golden); err != nil {
			t.Fatal(err)
		}
	}
	py, enfuse := mefAnchorTools()
	live := py != "" && enfuse != ""
	if *updateMEF && !live {
		t.Fatal("-update needs python3 with cv2 and enfuse")
	}
	var report []string
	for _, scene := range mefTripodSets {
		t.Run(scene, func(t *testing.T) {
			names := testphotos.Brackets(t, scene)
			files := make([]string, len(names))
			seq := make([]*imaging.Image, len(names))
			for i, n := range names {
				files[i] = filepath.Join(root, scene, n)
				seq[i] = imagingtest.LoadFile(t, files[i])
			}
			dir := t.TempDir()
			out := filepath.Join(dir, "process.jpg")
			if _, stderr, err := runCLI(t, append([]string{"process", "-q",
				"--color-correction=false", "--lens-correction=false", "-o", out}, files...)...); err != nil {
				t.Fatalf("process: %v\n%s", err, stderr)
			}
			score := func(m *imaging.Image) float64 {
				t.Helper()
				r, err := quality.MEFSSIM(seq, m, quality.MEFOptions{})
				if err != nil {
					t.Fatal(err)
				}
				return r.Score
			}
			got := score(imagingtest.LoadFile(t, out))
			fused, err := fuse.Fuse(t.Context(), seq, fuse.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			alone := score(fused)

			a, ok := golden[scene]
			src := "recorded"
			if live {
				cv := filepath.Join(dir, "mertens.png")
				mefRun(t, py, append([]string{"-c", mefMertens, cv}, files...)...)
				en := filepath.Join(dir, "enfuse.tif")
				mefRun(t, enfuse, append([]string{"-o", en}, files...)...)
				a, ok, src = mefAnchors{OpenCV: score(imagingtest.LoadFile(t, cv)), Enfuse: score(imagingtest.LoadFile(t, en))}, true, "measured"
				golden[scene] = a
			}
			if !ok {
				t.Skipf("no anchor figures for %s: install python3-opencv and enfuse, or run with -update where they are", scene)
			}
			line := fmt.Sprintf("%-24s process %.4f  fuse.Fuse %.4f  opencv %.4f  enfuse %.4f (%s)", scene, got, alone, a.OpenCV, a.Enfuse, src)
			t.Log(line)
			report = append(report, line)
			if got < a.OpenCV || got < a.Enfuse {
				t.Errorf("%s: process MEF-SSIM %.4f below an anchor (opencv %.4f, enfuse %.4f)", scene, got, a.OpenCV, a.Enfuse)
			}
		})
	}
	t.Log("MEF-SSIM against the sources (sRGB luma, longer side 1024):\n" + strings.Join(report, "\n"))
	if *updateMEF {
		b, err := json.MarshalIndent(golden, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(mefAnchorsGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(mefAnchorsGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// mefAnchorTools returns python3 (when it imports cv2) and enfuse, or "" for each
// one missing.
func mefAnchorTools() (py, enfuse string) {
	py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		py = "python3"
	}
	if err := exec.Command(py, "-c", "import cv2").Run(); err != nil {
		py = ""
	}
	enfuse, _ = exec.LookPath("enfuse")
	return py, enfuse
}

func mefRun(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, out)
	}
}
