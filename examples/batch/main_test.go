package main

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/testphotos"
	"github.com/porchlight/porchlight/localapi/client/clienttest"
)

// meanLuma is the mean Rec.601 luma of an image file, 0..255.
func meanLuma(t *testing.T, path string) (float64, image.Rectangle) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("decode %s: %v", path, err)
	}
	b := img.Bounds()
	var sum float64
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum += (0.299*float64(r) + 0.587*float64(g) + 0.114*float64(bl)) / 257
		}
	}
	return sum / float64(b.Dx()*b.Dy()), b
}

func TestBatchExampleAgainstARealServer(t *testing.T) {
	kitchen := testphotos.Path(t, "brackets", "house_interior_kim")
	exterior := testphotos.Path(t, "brackets", "oldhouse_exterior") // also holds a README.txt
	srv := clienttest.Start(t, clienttest.Options{})
	_, key := srv.NewKey(t, "batch-example", core.ScopeStandard)

	shoot := t.TempDir()
	for name, dir := range map[string]string{"kitchen": kitchen, "exterior": exterior} {
		if err := os.Symlink(dir, filepath.Join(shoot, name)); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "finished")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	err := run(ctx, []string{"-server", srv.URL, "-key", key, "-o", out, "-name", "elm street", shoot}, &stdout, &stderr)
	t.Logf("stdout:\n%s", stdout.String())
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "uploading 7 files of 2 scenes") {
		t.Errorf("README.txt or a bracket was miscounted:\n%s", stdout.String())
	}

	for scene, dir := range map[string]string{"kitchen": kitchen, "exterior": exterior} {
		got := filepath.Join(out, scene+".jpg")
		luma, bounds := meanLuma(t, got)
		brackets, _ := filepath.Glob(filepath.Join(dir, "*.jpg"))
		brackets2, _ := filepath.Glob(filepath.Join(dir, "*.JPG"))
		brackets = append(brackets, brackets2...)
		lo, hi := 256.0, -1.0
		var inBounds image.Rectangle
		for _, b := range brackets {
			l, r := meanLuma(t, b)
			lo, hi, inBounds = min(lo, l), max(hi, l), r
		}
		// The merge keeps the frame and lands between the darkest and the brightest
		// exposure: it is neither one bracket passed through nor a made-up image.
		if bounds.Dx() != inBounds.Dx() || bounds.Dy() != inBounds.Dy() {
			t.Errorf("%s is %v, the brackets are %v", scene, bounds, inBounds)
		}
		if luma <= lo || luma >= hi {
			t.Errorf("%s: mean luma %.1f is not between the brackets' %.1f and %.1f", scene, luma, lo, hi)
		}
		if leftovers, _ := filepath.Glob(filepath.Join(out, ".*")); len(leftovers) > 0 {
			t.Errorf("temporary files left behind: %v", leftovers)
		}
	}
}

func TestBatchExampleRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < 6; i++ {
		os.WriteFile(filepath.Join(dir, "f"+string(rune('a'+i))+".jpg"), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-key", "sk-x", "-o", t.TempDir(), dir}, "1 to 5"},
		{[]string{"-key", "sk-x", "-o", t.TempDir(), "-per-scene", "4", dir}, "do not split into scenes of 4"},
		{[]string{"-key", "", "-o", t.TempDir(), dir}, "no API key"},
		{[]string{"-key", "sk-x", dir}, "-o OUT"},
		{[]string{"-key", "sk-x", "-o", t.TempDir(), "-format", "gif", dir}, "-format"},
		{[]string{"-key", "sk-x", "-o", t.TempDir(), t.TempDir()}, "holds no images"},
	} {
		t.Setenv("PORCHLIGHT_API_KEY", "")
		var o, e bytes.Buffer
		err := run(ctx, tc.args, &o, &e)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want it to say %q", tc.args, err, tc.want)
		}
	}

	// Three per scene splits six files into two scenes named after their first file.
	scenes, err := findScenes(dir, 3)
	if err != nil || len(scenes) != 2 || scenes[0].name != "fa" || scenes[1].name != "fd" || len(scenes[1].files) != 3 {
		t.Fatalf("findScenes: %+v, %v", scenes, err)
	}
}
