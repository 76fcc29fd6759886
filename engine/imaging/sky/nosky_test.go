package sky

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// TestNoSkyIndoors: interiors, including a window onto a garden and a skylight, have no
// sky to replace; Replace hands the photo back untouched.
func TestNoSkyIndoors(t *testing.T) {
	dir := testphotos.Dir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "interiors", "*"))
	files = append(files, testphotos.Path(t, "brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_06.jpg"))
	if len(files) < 2 {
		t.Fatalf("no interiors under %s", dir)
	}
	for _, fn := range files {
		name := filepath.Base(fn)
		if testing.Short() && filepath.Ext(fn) == ".JPG" && name != "HDRI_Sample_Scene_Window_-_06.jpg" {
			continue // the 9-megapixel interior is slow to decode with the standard library
		}
		img := imagingtest.LoadFile(t, fn)
		before := slices.Clone(img.Pix)
		matte, res, err := Segment(context.Background(), img)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.Found || res.Reason == "" || res.Fraction != 0 {
			t.Errorf("%s: Segment found=%v fraction=%.3f reason=%q, want no sky with a reason", name, res.Found, res.Fraction, res.Reason)
		}
		for _, v := range matte.Pix {
			if v != 0 {
				t.Errorf("%s: matte not empty", name)
				break
			}
		}
		out, res2, err := Replace(context.Background(), img, StyleHighCloud)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res2.Found || out != img || !slices.Equal(img.Pix, before) {
			t.Errorf("%s: Replace changed an image without sky (found=%v)", name, res2.Found)
		}
		t.Logf("%s: %s", name, res.Reason)
	}
}
