package app

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func runCLI(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("PORCHLIGHT_DATA_DIR", t.TempDir())
	var o, e bytes.Buffer
	root := newRootCommand(&o, &e)
	root.SetArgs(args)
	err = root.Execute()
	return o.String(), e.String(), err
}

func exitCode(err error) int {
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if err != nil {
		return 1
	}
	return 0
}

// processTo runs porchlight process with args and decodes its output file at out.
func processTo(t *testing.T, out string, decode func(io.Reader) (image.Image, error), args ...string) image.Image {
	t.Helper()
	_, stderr, err := runCLI(t, append([]string{"process"}, args...)...)
	if err != nil {
		t.Fatalf("process: %v\n%s", err, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := decode(f)
	if err != nil {
		t.Fatalf("output %s does not decode: %v", filepath.Base(out), err)
	}
	return img
}

func TestProcessWritesAReencodedPhoto(t *testing.T) {
	in := testphotos.Path(t, "interiors", "houses_109_bedroom.jpg")
	out := filepath.Join(t.TempDir(), "out.png")
	img := processTo(t, out, png.Decode, "-q", "-o", out, in) // the extension chose the format
	if b := img.Bounds(); b.Dx() != 1024 || b.Dy() != 576 {
		t.Fatalf("output is %v, want 1024x576", b)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".porchlight-*"))
	if len(left) != 0 {
		t.Fatalf("temp files left behind: %v", left)
	}
}

func TestProcessRefusesBadOptions(t *testing.T) {
	in := testphotos.Path(t, "interiors", "houses_109_bedroom.jpg")
	out := filepath.Join(t.TempDir(), "out.jpg")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--quality", "0"}, "--quality"},
		{[]string{"--sky-style", "purple"}, "--sky-style"},
		{[]string{"--perspective-strength", "abc"}, "--perspective-strength"},
	} {
		_, _, err := runCLI(t, append(append([]string{"process", "-o", out}, tc.args...), in)...)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want exit 2 naming %s, got %d: %v", tc.args, tc.want, exitCode(err), err)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatal("a refused order wrote an output")
	}
}

func TestProcessRequiresOutput(t *testing.T) {
	in := testphotos.Path(t, "interiors", "houses_109_bedroom.jpg")
	if _, _, err := runCLI(t, "process", in); exitCode(err) != 2 {
		t.Fatalf("want exit 2 without -o, got %v", err)
	}
}

func TestProcessUnreadableInputFails(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jpg")
	os.WriteFile(bad, []byte("not a photo at all"), 0o600)
	_, _, err := runCLI(t, "process", "-o", filepath.Join(t.TempDir(), "o.jpg"), bad)
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "bad.jpg") {
		t.Fatalf("want exit 1 naming the file, got %v", err)
	}
}

// A camera RAW is developed for real (LibRaw: demosaic, camera white balance) and
// toned into a JPEG at the sensor's size.
func TestProcessDevelopsACameraRaw(t *testing.T) {
	in := testphotos.Path(t, "raw", "CRW.CRW")
	out := filepath.Join(t.TempDir(), "out.jpg")
	img := processTo(t, out, jpeg.Decode, "-q", "--tonecraft", "-o", out, in)
	b := img.Bounds()
	if b.Dx() < 2000 || b.Dy() < 1300 {
		t.Fatalf("output is %v, want the sensor's size (about 2176x1448)", b)
	}
	// A developed photo, not a gray mosaic: real colour and a spread of tones.
	var sumR, sumG, sumB float64
	lo, hi := 255.0, 0.0
	for y := b.Min.Y; y < b.Max.Y; y += 8 {
		for x := b.Min.X; x < b.Max.X; x += 8 {
			r, g, bl, _ := img.At(x, y).RGBA()
			sumR, sumG, sumB = sumR+float64(r>>8), sumG+float64(g>>8), sumB+float64(bl>>8)
			l := float64(g >> 8)
			lo, hi = min(lo, l), max(hi, l)
		}
	}
	if hi-lo < 150 {
		t.Errorf("green spans only %.0f..%.0f: no real tonal range", lo, hi)
	}
	if sumG <= sumB || sumG <= sumR*0.9 {
		t.Errorf("mean R/G/B %.0f/%.0f/%.0f: the (green) tree did not come out green", sumR, sumG, sumB)
	}
}

// nineBrackets copies living_room_windows (five frames) into a folder of nine,
// repeating four of the frames under new names, as a 9-bracket sequence.
func nineBrackets(t *testing.T) string {
	t.Helper()
	src := filepath.Join(testphotos.Dir(t), "brackets", "living_room_windows")
	names, err := filepath.Glob(filepath.Join(src, "*.png"))
	if err != nil || len(names) != 5 {
		t.Fatalf("living_room_windows: %v %v", names, err)
	}
	dir := t.TempDir()
	for i := 0; i < 9; i++ {
		b, err := os.ReadFile(names[i%5])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("frame_%d.png", i+1)), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Nine brackets given as a folder merge into one photo, written into the -o folder
// under the first bracket's name; a tenth is refused.
func TestProcessMergesNineBracketsFromAFolder(t *testing.T) {
	in := nineBrackets(t)
	out := t.TempDir()
	img := processTo(t, filepath.Join(out, "frame_1.jpg"), jpeg.Decode, "-q", "-o", out, in)
	b := img.Bounds()
	if b.Dx() != 1024 || b.Dy() != 680 {
		t.Fatalf("output is %v, want 1024x680", b)
	}
	var sum float64
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			_, g, _, _ := img.At(x, y).RGBA()
			sum += float64(g >> 8)
			n++
		}
	}
	if mean := sum / float64(n); mean < 60 || mean > 200 {
		t.Fatalf("mean green %.0f: the merge of nine is not a normally exposed photo", mean)
	}
	extra := filepath.Join(in, "frame_10.png")
	b10, _ := os.ReadFile(filepath.Join(in, "frame_1.png"))
	os.WriteFile(extra, b10, 0o600)
	_, _, err := runCLI(t, "process", "-q", "-o", out, in)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "1 to 9") {
		t.Fatalf("ten brackets: want exit 2 naming the limit, got %v", err)
	}
}

// A missing output folder is reported before any input is read (so before a merge
// that can take minutes): the input here is not even a photo.
func TestProcessMissingOutputFolderFailsFirst(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.jpg")
	os.WriteFile(bad, []byte("not a photo at all"), 0o600)
	missing := filepath.Join(t.TempDir(), "no", "such")
	for _, out := range []string{filepath.Join(missing, "o.jpg"), missing + string(filepath.Separator)} {
		_, _, err := runCLI(t, "process", "-q", "-o", out, bad)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), "does not exist") {
			t.Fatalf("-o %s: want exit 2 saying the folder does not exist, got %v", out, err)
		}
	}
}

// --help explains every order option from the option table: its features, values
// and default.
func TestProcessHelpDescribesEveryOption(t *testing.T) {
	stdout, _, err := runCLI(t, "process", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range catalog.Params() {
		flag := "--" + strings.ReplaceAll(p.Name, "_", "-")
		var line string
		for _, l := range strings.Split(stdout, "\n") {
			if strings.Contains(l, flag+" ") {
				line = l
			}
		}
		if line == "" {
			t.Errorf("%s missing from --help", flag)
			continue
		}
		// What the option means comes first, then its values and default.
		usage := strings.TrimSpace(line[strings.Index(line, flag)+len(flag):])
		usage = strings.TrimSpace(strings.TrimPrefix(usage, "string"))
		if p.Description == "" || !strings.HasPrefix(usage, p.Description) {
			t.Errorf("%s: usage does not open with the description %q: %s", flag, p.Description, line)
		}
		for _, v := range p.Enum {
			if !strings.Contains(line, v) {
				t.Errorf("%s: value %s not named: %s", flag, v, line)
			}
		}
		if p.Min != nil && !strings.Contains(line, fmt.Sprintf("from %g to %g", *p.Min, *p.Max)) {
			t.Errorf("%s: range not named: %s", flag, line)
		}
		for _, f := range p.Features {
			if !strings.Contains(line, f) {
				t.Errorf("%s: feature %s not named: %s", flag, f, line)
			}
		}
	}
	if !strings.Contains(stdout, "tonecraft_profile") || !strings.Contains(stdout, "bright_airy") {
		t.Error("--tonecraft-profile does not list its presets")
	}
}
