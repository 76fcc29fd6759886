package perspective

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// tiltScript measures tilt with OpenCV alone (LSD and probabilistic Hough).
const tiltScript = "../../../scripts/tilt_lines.py"

type cvTilt struct {
	Median   float64 `json:"median"`
	Mean     float64 `json:"mean"`
	MeanBand float64 `json:"mean_band"`
	N        int     `json:"n"`
}

// TestTiltAgreesWithOpenCV checks our tilt measure against another implementation
// (scripts/tilt_lines.py: OpenCV's LSD and Hough segments, each re-fitted to
// sub-pixel edges) before and after a full correction, and holds the corrected kids'
// room under 0.3 degrees by all three.
func TestTiltAgreesWithOpenCV(t *testing.T) {
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		py = "python3"
	}
	if err := exec.Command(py, "-c", "import cv2; cv2.createLineSegmentDetector()").Run(); err != nil {
		t.Skip("python3 with OpenCV >= 4.5.1 (LSD) not available")
	}
	img := loadPhoto(t, "interiors", "houses_162_bedroom.jpg")
	out, res, err := Correct(context.Background(), img, 1)
	if err != nil || !res.Applied {
		t.Fatalf("not corrected: %v %s", err, res.Reason)
	}
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.png"), filepath.Join(dir, "after.png")
	writePNG(t, before, img.ToNRGBA())
	writePNG(t, after, out.ToNRGBA())
	b, err := exec.Command(py, tiltScript, "--json", before, after).Output()
	if err != nil {
		t.Fatalf("%s: %v", tiltScript, err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 lines from %s, got %q", tiltScript, b)
	}
	for i, name := range []string{"before", "after"} {
		src := img
		if i == 1 {
			src = out
		}
		ours, _ := medianTilt(src)
		var r struct{ LSD, Hough cvTilt }
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil {
			t.Fatal(err)
		}
		t.Logf("%-6s median tilt: ours %.3f, OpenCV LSD %.3f (mean %.3f, within 5°: %.3f), Hough %.3f (mean %.3f, within 5°: %.3f)",
			name, ours, r.LSD.Median, r.LSD.Mean, r.LSD.MeanBand, r.Hough.Median, r.Hough.Mean, r.Hough.MeanBand)
		// The detectors find different segments; the medians agree within a few tenths.
		if d := math.Abs(ours - r.LSD.Median); d > 0.15 {
			t.Errorf("%s: our median %.3f and OpenCV LSD's %.3f differ by %.3f", name, ours, r.LSD.Median, d)
		}
		if i == 1 {
			for by, v := range map[string]float64{"ours": ours, "OpenCV LSD": r.LSD.Median, "OpenCV Hough": r.Hough.Median} {
				if !(v < 0.3) {
					t.Errorf("after correction %s measures %.3f degrees, want < 0.3", by, v)
				}
			}
		}
	}
}
