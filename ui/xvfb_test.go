package ui

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

var screenshotsDir = flag.String("screenshots", "", "copy the Xvfb test's screenshots into this folder (e.g. ../docs/screenshots)")

// The real program under a virtual display: the binary is built, started on Xvfb
// with a temporary data dir and config, driven through PORCHLIGHT_UI_AUTOLOAD
// (drop, process, compare), and photographed at three moments. The screenshots
// must show a drawn window, not a blank screen.
func TestWindowUnderXvfb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program under Xvfb; skipped with -short")
	}
	for _, tool := range []string{"Xvfb", "import"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not found: install xvfb and imagemagick to run the window under a virtual display", tool)
		}
	}
	root := testphotos.Dir(t)
	repo := repoRoot(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "porchlight")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	display := startXvfb(t)
	outDir := filepath.Join(tmp, "out")
	cfgDir := filepath.Join(tmp, "config")
	os.MkdirAll(filepath.Join(cfgDir, "porchlight"), 0o700)
	// A hot folder with a photo in it: its work shows in the sidebar as a shoot.
	hotIn, hotOut := filepath.Join(tmp, "hot-in"), filepath.Join(tmp, "hot-out")
	os.MkdirAll(hotIn, 0o755)
	if b, err := os.ReadFile(filepath.Join(root, "interiors", "houses_156_bedroom.jpg")); err == nil {
		os.WriteFile(filepath.Join(hotIn, "living.jpg"), b, 0o644)
	}
	cfg := fmt.Sprintf("api:\n  enabled: false\nwindow:\n  output_dir: %s\n  theme: dark\nhotfolders:\n  - name: studio\n    input: %s\n    output: %s\n    grouping: count:1\n",
		outDir, hotIn, hotOut)
	if err := os.WriteFile(filepath.Join(cfgDir, "porchlight", "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(root, "brackets", "house_interior_kim"),
		filepath.Join(root, "brackets", "oldhouse_exterior"),
		filepath.Join(root, "brackets", "room_window_e995"),
	}
	for _, f := range []string{"houses_109_bedroom.jpg", "houses_162_kitchen.jpg", "houses_185_kitchen.jpg", "houses_218_kitchen.jpg", "houses_111_bedroom.jpg"} {
		paths = append(paths, filepath.Join(root, "interiors", f))
	}
	for _, f := range []string{"houses_102_frontal.jpg", "houses_117_frontal.jpg", "houses_191_frontal.jpg"} {
		paths = append(paths, filepath.Join(root, "exteriors", f))
	}

	repeat, _ := shakenRepeat(t)
	nine := nineExposures(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Env = append(os.Environ(),
		"DISPLAY="+display,
		"PORCHLIGHT_DATA_DIR="+filepath.Join(tmp, "data"),
		"XDG_CONFIG_HOME="+cfgDir,
		"LANG=en_US.UTF-8",
		AutoloadEnv+"="+strings.Join(paths, ","),
		AutoloadOptionsEnv+"=tonecraft=true;perspective=true",
		AutoloadHoldEnv+"=2",
		AutoloadTourEnv+"="+repeat+","+nine,
	)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	lines := make(chan string, 256)
	var logMu sync.Mutex
	var logBuf strings.Builder
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logMu.Lock()
			logBuf.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if strings.HasPrefix(sc.Text(), "porchlight-ui: ") {
				lines <- strings.TrimPrefix(sc.Text(), "porchlight-ui: ")
			}
		}
		close(lines)
		exited <- cmd.Wait()
	}()
	defer func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
		if t.Failed() {
			logMu.Lock()
			t.Logf("program output:\n%s", logBuf.String())
			logMu.Unlock()
		}
	}()
	await := func(prefix string, timeout time.Duration) string {
		t.Helper()
		deadline := time.After(timeout)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("the program ended before %q", prefix)
				}
				if strings.HasPrefix(l, "error") {
					t.Fatalf("autoload: %s", l)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q within %s", prefix, timeout)
			}
		}
	}
	shots := map[string]string{}
	grab := func(p string) {
		t.Helper()
		out, err := exec.Command("import", "-display", display, "-window", "root", "-crop", "1360x860+0+0", "+repage", p).CombinedOutput()
		if err != nil {
			t.Fatalf("screenshot: %v\n%s", err, out)
		}
	}
	// shoot photographs the screen once the redraws after the reported state have
	// reached it: the screen is drawn and two grabs in a row agree. How long that
	// takes depends on the machine, so it waits for it rather than for a fixed time.
	// A screen still moving (progress) cannot settle: with moving set, one that is
	// drawn and no longer shows the shot named by from is enough.
	shoot := func(name string, moving bool, from string) {
		t.Helper()
		p := filepath.Join(tmp, name+".png")
		prev := filepath.Join(tmp, name+"-prev.png")
		grab(p)
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			std, colours := contrast(readPNG(t, p))
			drawn := std >= 15 && colours >= 200
			if drawn && moving && differs(t, shots[from], p) > 0 {
				break
			}
			time.Sleep(250 * time.Millisecond)
			os.Rename(p, prev)
			grab(p)
			if drawn && !moving && differs(t, prev, p) == 0 {
				break
			}
		} // past the deadline, the checks below say what the screen showed
		shots[name] = p
	}

	scenes := await("scenes", time.Minute)
	if scenes != fmt.Sprintf("scenes %d", len(paths)) { // a scene per bracket folder and per photo
		t.Errorf("autoload reported %q", scenes)
	}
	await("ready", time.Minute)
	shoot("main", false, "")
	await("submitted", 30*time.Second)
	shoot("processing", true, "main") // timing decides how far it got; it is checked for being drawn only
	done := await("done", 3*time.Minute)
	var completed, failed int
	fmt.Sscanf(done, "done %d %d", &completed, &failed)
	if completed != len(paths) || failed != 0 {
		t.Errorf("autoload finished with %q", done)
	}
	shoot("batch-done", false, "")
	await("compare", time.Minute)
	shoot("before-after", false, "")
	await("sliders", time.Minute)
	shoot("sliders", false, "")
	await("culled", 2*time.Minute)
	shoot("culled", false, "")
	if b := await("brackets", time.Minute); !strings.HasSuffix(b, " 9") {
		t.Errorf("the biggest scene: %q, want 9 brackets", b)
	}
	shoot("nine-brackets", false, "")
	if sh := await("shoots", time.Minute); sh == "shoots 1" {
		t.Errorf("the sidebar lists one shoot: the hot folder's work is missing")
	}
	shoot("shoots", false, "")

	for name, p := range shots {
		checkNotBlank(t, name, p)
	}
	if d := differs(t, shots["main"], shots["batch-done"]); d < 0.02 {
		t.Errorf("the finished batch looks like the start (%.3f of pixels differ)", d)
	}
	if d := differs(t, shots["batch-done"], shots["before-after"]); d < 0.05 {
		t.Errorf("the comparison looks like the overview (%.3f of pixels differ)", d)
	}
	outs, _ := filepath.Glob(filepath.Join(outDir, "*.jpg"))
	if len(outs) != completed {
		t.Errorf("%d results in the output folder for %d completed scenes", len(outs), completed)
	}

	// SIGTERM closes the window and the program ends cleanly.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Error("the program did not end after SIGTERM")
	}

	if *screenshotsDir != "" {
		for name, p := range shots {
			if err := copyFile(p, filepath.Join(*screenshotsDir, "window-"+name+".png")); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func repoRoot(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// startXvfb starts a virtual display on a free number and returns its name.
func startXvfb(t *testing.T) string {
	t.Helper()
	for n := 91; n < 140; n++ {
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X%d-lock", n)); err == nil {
			continue
		}
		if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
			continue
		}
		cmd := exec.Command("Xvfb", fmt.Sprintf(":%d", n), "-screen", "0", "1440x900x24", "-nolisten", "tcp")
		if err := cmd.Start(); err != nil {
			t.Fatalf("Xvfb: %v", err)
		}
		t.Cleanup(func() {
			cmd.Process.Signal(syscall.SIGTERM)
			cmd.Wait()
		})
		for range 100 {
			if _, err := os.Stat(fmt.Sprintf("/tmp/.X11-unix/X%d", n)); err == nil {
				return fmt.Sprintf(":%d", n)
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("Xvfb :%d did not start", n)
	}
	t.Fatal("no free display number for Xvfb")
	return ""
}

// checkNotBlank fails unless a screenshot has real contrast and many colours.
func checkNotBlank(t *testing.T, name, path string) {
	t.Helper()
	img := readPNG(t, path)
	std, colours := contrast(img)
	t.Logf("%s: %dx%d, std %.1f, %d colours", name, img.Bounds().Dx(), img.Bounds().Dy(), std, colours)
	if std < 15 || colours < 200 {
		t.Errorf("%s looks blank: std %.1f, %d colours", name, std, colours)
	}
}

// contrast is the standard deviation of a screenshot's luma and its number of
// distinct colours (at 5 bits a channel).
func contrast(img image.Image) (std float64, colours int) {
	b := img.Bounds()
	var sum, sum2 float64
	seen := map[uint32]bool{}
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			l := 0.2126*float64(r>>8) + 0.7152*float64(g>>8) + 0.0722*float64(bl>>8)
			sum += l
			sum2 += l * l
			n++
			seen[(r>>11)<<10|(g>>11)<<5|bl>>11] = true
		}
	}
	mean := sum / float64(n)
	return math.Sqrt(sum2/float64(n) - mean*mean), len(seen)
}

// differs is the fraction of pixels that differ clearly between two screenshots.
func differs(t *testing.T, a, b string) float64 {
	ia, ib := readPNG(t, a), readPNG(t, b)
	if ia.Bounds() != ib.Bounds() {
		return 1
	}
	var diff, n int
	bd := ia.Bounds()
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r1, g1, b1, _ := ia.At(x, y).RGBA()
			r2, g2, b2, _ := ib.At(x, y).RGBA()
			d := absDiff(r1, r2) + absDiff(g1, g2) + absDiff(b1, b2)
			if d > 3*16*257 {
				diff++
			}
			n++
		}
	}
	return float64(diff) / float64(n)
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

func readPNG(t *testing.T, path string) image.Image {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp := dst + ".tmp"
	out, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}
