package hotfolder

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// The crash test re-runs this test binary as a child that serves a hot folder on a
// data dir; the parent kills it with SIGKILL (kill -9) while files are being dropped
// and scenes are in every stage, kills a second child soon after it restarts, and
// then finishes the work in-process on the same data dir.
const (
	envCrashData = "PORCHLIGHT_HOTFOLDER_CRASH_DATA"
	envCrashRoot = "PORCHLIGHT_HOTFOLDER_CRASH_ROOT"
)

func crashConfig(root string) Config {
	return Config{
		Name: "crash", Input: filepath.Join(root, "in"), Output: filepath.Join(root, "out"),
		Grouping: GroupCount, Count: 1, Originals: OriginalsMove, Enabled: true, Sidecar: true,
		Settle: 100 * time.Millisecond, Rescan: time.Second,
	}
}

// crashChild serves the hot folder until it is killed.
func crashChild(t *testing.T) {
	e := newEnv(t, os.Getenv(envCrashData))
	e.start(crashConfig(os.Getenv(envCrashRoot)))
	fmt.Println("READY")
	select {}
}

func startCrashChild(t *testing.T, dataDir, root string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashData+"="+dataDir, envCrashRoot+"="+root)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if sc.Text() == "READY" {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the child exited before it was ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the child did not start")
	}
	return cmd
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Kill(); err != nil { // SIGKILL
		t.Fatal(err)
	}
	cmd.Wait()
}

// crashPhotos are twelve different real photos.
func crashPhotos(t *testing.T) [][]byte {
	var out [][]byte
	for _, dir := range []string{"interiors", "exteriors"} {
		entries, err := os.ReadDir(filepath.Join(testphotos.Dir(t), dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			info, _ := e.Info()
			if len(out) < 12 && strings.HasSuffix(e.Name(), ".jpg") && info.Size() < 500_000 {
				out = append(out, readPhoto(t, dir, e.Name()))
			}
		}
	}
	if len(out) < 12 {
		t.Fatalf("only %d test photos", len(out))
	}
	return out
}

func TestKill9DuringDropThenRestart(t *testing.T) {
	if os.Getenv(envCrashData) != "" {
		crashChild(t)
		return
	}
	t.Parallel()
	testphotos.Dir(t)
	dataDir, root := t.TempDir(), t.TempDir()
	c := crashConfig(root)
	os.MkdirAll(c.Input, 0o755)
	os.MkdirAll(c.Output, 0o755)
	photos := crashPhotos(t)
	name := func(i int) string { return fmt.Sprintf("p%02d.jpg", i+1) }

	child := startCrashChild(t, dataDir, root)
	for i := range 4 {
		drop(t, c.Input, name(i), photos[i])
	}
	waitFor(t, 60*time.Second, "the first result", func() bool { return len(outputs(t, c.Output)) >= 1 })
	kill9(t, child)
	counts := []int{len(outputs(t, c.Output))}
	// Three more runs, each killed at a different moment while files keep arriving:
	// files settling, being uploaded, orders running, results being written.
	next := 4
	for _, after := range []time.Duration{150 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond} {
		child = startCrashChild(t, dataDir, root)
		for i := next; i < next+2; i++ {
			drop(t, c.Input, name(i), photos[i])
		}
		next += 2
		time.Sleep(after)
		kill9(t, child)
		counts = append(counts, len(outputs(t, c.Output)))
	}
	for i := next; i < 12; i++ {
		drop(t, c.Input, name(i), photos[i])
	}

	e := newEnv(t, dataDir)
	e.start(c)
	waitFor(t, 2*time.Minute, "all twelve scenes", func() bool { return e.settledCount("crash") == 12 })
	t.Logf("results when each run was killed: %v; in the end: 12", counts)

	st := e.status("crash")
	if st.Done != 12 || st.Failed != 0 || st.Processing != 0 || st.Pending != 0 {
		t.Fatalf("status: %+v", st)
	}
	var want, wantDone []string
	for i := range 12 {
		want = append(want, name(i), name(i)+".json")
		wantDone = append(wantDone, "_done/"+name(i))
	}
	slices.Sort(want)
	if got := filesIn(t, c.Output); !slices.Equal(got, want) {
		t.Fatalf("output folder (duplicates or leftovers?):\n got %v\nwant %v", got, want)
	}
	if got := filesIn(t, c.Input); !slices.Equal(got, wantDone) {
		t.Fatalf("input folder:\n got %v\nwant %v", got, wantDone)
	}
	orders, err := e.engine.Orders(context.Background(), e.svc.Owner(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != 12 {
		t.Fatalf("%d orders for 12 scenes: something was submitted twice", len(orders))
	}
	seen := map[string]bool{}
	for i := range 12 {
		sc := readSidecar(t, filepath.Join(c.Output, name(i)+".json"))
		sum := sha256.Sum256(photos[i])
		if sc.Status != "completed" || len(sc.Inputs) != 1 || sc.Inputs[0].SHA256 != hex.EncodeToString(sum[:]) || seen[sc.OrderID] {
			t.Fatalf("%s: %+v", name(i), sc)
		}
		seen[sc.OrderID] = true
		moved, _ := os.ReadFile(filepath.Join(c.Input, "_done", name(i)))
		if !bytes.Equal(moved, photos[i]) {
			t.Fatalf("%s changed on its way to the done folder", name(i))
		}
		out, _ := os.ReadFile(filepath.Join(c.Output, name(i)))
		if len(out) < 1000 || out[0] != 0xFF || out[1] != 0xD8 || !bytes.HasSuffix(bytes.TrimRight(out, "\x00"), []byte{0xFF, 0xD9}) {
			t.Fatalf("%s is not a whole JPEG (%d bytes)", name(i), len(out))
		}
	}
	for _, o := range orders {
		if !seen[o.OrderUUID] {
			t.Fatalf("order %s has no result", o.OrderUUID)
		}
	}
}
