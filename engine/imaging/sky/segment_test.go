package sky

import (
	"context"
	"image"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// loadMask reads a ground-truth sky mask (8-bit grey, sky = 255) as booleans.
func loadMask(tb testing.TB, path string) (w, h int, sky []bool) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, _, err := image.Decode(f)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	b := m.Bounds()
	w, h = b.Dx(), b.Dy()
	sky = make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			r, _, _, _ := m.At(b.Min.X+x, b.Min.Y+y).RGBA()
			sky[y*w+x] = r>>8 >= 128
		}
	}
	return w, h, sky
}

// TestSegmentIoU checks the matte against the hand-made sky masks: mean IoU at least
// 0.90 over the set and at least 0.85 on every image.
func TestSegmentIoU(t *testing.T) {
	dir := testphotos.Dir(t)
	imgs, err := filepath.Glob(filepath.Join(dir, "sky", "images", "*.jpg"))
	if err != nil || len(imgs) == 0 {
		t.Fatalf("no sky ground truth under %s", dir)
	}
	sum := 0.0
	for _, fn := range imgs {
		id := strings.TrimSuffix(filepath.Base(fn), ".jpg")
		img := imagingtest.LoadFile(t, fn)
		mw, mh, gt := loadMask(t, filepath.Join(dir, "sky", "masks", id+".png"))
		if mw != img.W() || mh != img.H() {
			t.Fatalf("%s: mask %dx%d, image %dx%d", id, mw, mh, img.W(), img.H())
		}
		matte, res, err := Segment(context.Background(), img)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		inter, union := 0, 0
		for p, g := range gt {
			s := matte.Pix[p] >= 0.5
			if s && g {
				inter++
			}
			if s || g {
				union++
			}
		}
		iou := float64(inter) / float64(max(union, 1))
		sum += iou
		t.Logf("%s IoU %.3f found=%v fraction=%.3f %s", id, iou, res.Found, res.Fraction, res.Reason)
		if iou < 0.85 {
			t.Errorf("%s: IoU %.3f < 0.85", id, iou)
		}
	}
	mean := sum / float64(len(imgs))
	t.Logf("mean IoU %.4f over %d images", mean, len(imgs))
	if mean < 0.90 {
		t.Errorf("mean IoU %.4f < 0.90", mean)
	}
}
