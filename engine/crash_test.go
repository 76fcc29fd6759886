package engine_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// The crash tests re-run this test binary as a child that serves the engine on a data
// dir and reports on stdout; the parent kills it with SIGKILL (kill -9) mid-order,
// then reopens the same data dir.
const (
	envCrashDir  = "PORCHLIGHT_ENGINE_CRASH_DIR"
	envCrashMode = "PORCHLIGHT_ENGINE_CRASH_MODE"
)

// crashChild runs when this test binary is the child: it never returns.
func crashChild(t *testing.T) {
	dir, mode := os.Getenv(envCrashDir), os.Getenv(envCrashMode)
	e := newEnv(t, dir, withWorkers(2))
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
	}
	if mode == "after-output" {
		enc, _ := e.pipe.Step(pipeline.StepEncode)
		e.pipe.Register(pipeline.Step{Name: pipeline.StepEncode, Run: func(ctx context.Context, j *pipeline.Job) error {
			if err := enc.Run(ctx, j); err != nil {
				return err
			}
			say("OUTPUT %s %s", j.OrderID, j.Output.ID)
			select {} // "crash" after the output is stored, before the order records it
		}})
	}
	sub, _ := e.eng.Events().Subscribe(eventsFor(e.owner), 0)
	e.serve()
	say("READY")
	for ev := range sub.C() {
		if ev.Type == core.EventOrder {
			s := ev.Data.(core.OrderSummary)
			say("EV %s %s %s", s.Status, s.OrderUUID, s.OutputAssetID)
		}
	}
	select {}
}

// runChild starts the child on dir and returns its stdout lines.
func runChild(t *testing.T, dir, mode string) (*exec.Cmd, <-chan string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), envCrashDir+"="+dir, envCrashMode+"="+mode)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1024)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

func kill9(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(os.Kill); err != nil { // SIGKILL: no cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()
}

// checkOneOutput checks that the asset store holds order id's output under the id
// it derives from the order (outputs are idempotent per order through that id, so a
// second output of the order could only be another asset) and that the order points
// at that one.
func checkOneOutput(t *testing.T, e *env, id string) {
	t.Helper()
	rec, err := e.eng.OrderRecord(context.Background(), e.owner, id)
	if err != nil {
		t.Fatal(err)
	}
	a, err := e.assets.Lookup(assets.OutputID(id))
	if err != nil {
		t.Fatalf("order %s has no stored output: %v", id, err)
	}
	if a.Kind != core.AssetOutput || a.OrderID != id || a.Owner != e.owner || rec.OutputID != a.ID {
		t.Fatalf("order %s (output %s) has output %+v", id, rec.OutputID, a)
	}
}

func TestCrashRecoveryKill9(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		crashChild(t)
		return
	}
	dir := t.TempDir()
	e := newEnv(t, dir)
	small := e.upload(e.owner, photoSmallJPEG...)
	big := e.upload(e.owner, photoBig...)
	var ids []string
	for _, in := range []string{small, small, big, big, small, big} {
		s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.OrderUUID)
	}
	e.close()

	cmd, lines := runChild(t, dir, "mid")
	completed := map[string]string{} // order -> output
	running := map[string]bool{}
	timeout := time.After(90 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child exited early")
			}
			f := strings.Fields(l)
			if len(f) < 3 || f[0] != "EV" {
				continue
			}
			switch core.OrderStatus(f[1]) {
			case core.OrderRunning:
				running[f[2]] = true
			case core.OrderCompleted:
				delete(running, f[2])
				completed[f[2]] = f[3]
			default:
				t.Fatalf("child reported %s", l)
			}
			if len(completed) > 0 && len(running) > 0 {
				break wait
			}
		case <-timeout:
			t.Fatal("the child did not complete and start orders within 90s")
		}
	}
	kill9(t, cmd)

	e = newEnv(t, dir)
	for _, id := range ids {
		rec, err := e.eng.OrderRecord(context.Background(), e.owner, id)
		if err != nil {
			t.Fatalf("order %s after the crash: %v", id, err)
		}
		switch {
		case completed[id] != "":
			if rec.Status != core.OrderCompleted || rec.OutputID != completed[id] {
				t.Fatalf("order %s completed before the crash is now %s (output %s)", id, rec.Status, rec.OutputID)
			}
		case rec.Status == core.OrderRunning:
			t.Fatalf("order %s still running after recovery", id)
		case running[id]:
			if rec.Status != core.OrderPending && rec.Status != core.OrderCompleted || rec.Attempts != 1 {
				t.Fatalf("order %s running at the crash is %s with %d attempts, want pending with 1", id, rec.Status, rec.Attempts)
			}
		}
	}
	e.serve()
	for _, id := range ids {
		s := e.wait(e.owner, id)
		if s.Status != core.OrderCompleted || s.OutputAssetID != assets.OutputID(id) {
			t.Fatalf("order %s ended %s (output %q): %s", id, s.Status, s.OutputAssetID, s.Error)
		}
	}
	e.stop()
	for _, id := range ids {
		checkOneOutput(t, e, id)
	}
	t.Logf("killed with %d completed and %d running", len(completed), len(running))
}

// A crash after the output was stored but before the order recorded it: the rerun
// finds the output instead of writing a second one.
func TestCrashAfterOutputStoredKill9(t *testing.T) {
	if os.Getenv(envCrashDir) != "" {
		crashChild(t)
		return
	}
	dir := t.TempDir()
	e := newEnv(t, dir)
	in := e.upload(e.owner, photoSmallJPEG...)
	s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Format: ptr("png")}, "")
	if err != nil {
		t.Fatal(err)
	}
	e.close()

	cmd, lines := runChild(t, dir, "after-output")
	var out string
	timeout := time.After(60 * time.Second)
	for out == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("the child exited early")
			}
			if f := strings.Fields(l); len(f) == 3 && f[0] == "OUTPUT" && f[1] == s.OrderUUID {
				out = f[2]
			}
		case <-timeout:
			t.Fatal("the child did not store an output within 60s")
		}
	}
	kill9(t, cmd)

	e = newEnv(t, dir)
	rec, _ := e.eng.OrderRecord(context.Background(), e.owner, s.OrderUUID)
	if rec.Status != core.OrderPending || rec.Attempts != 1 || rec.OutputID != "" {
		t.Fatalf("after the crash the order is %s, %d attempts, output %q", rec.Status, rec.Attempts, rec.OutputID)
	}
	before, err := e.assets.Get(e.owner, out)
	if err != nil {
		t.Fatalf("the stored output vanished: %v", err)
	}
	e.serve()
	done := e.wait(e.owner, s.OrderUUID)
	if done.Status != core.OrderCompleted || done.OutputAssetID != out {
		t.Fatalf("rerun ended %s with output %q, want %s", done.Status, done.OutputAssetID, out)
	}
	after, _ := e.assets.Get(e.owner, out)
	if !after.CreatedAt.Equal(before.CreatedAt) || after.SHA256 != before.SHA256 {
		t.Fatal("the output was written again")
	}
	checkOneOutput(t, e, s.OrderUUID)
}
