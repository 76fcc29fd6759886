package unregistered

import (
	"bytes"
	"os"
	"os/exec"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// This test binary has no TestMain calling raw.MaybeRunWorker.

const childMarker = "unregistered child ran its tests"

// TestChildRunsItsTests is the child of TestWorkerEnvIgnored: started with WorkerEnv
// set, it must get here and run as the test binary it is.
func TestChildRunsItsTests(t *testing.T) {
	if os.Getenv(raw.WorkerEnv) != "1" {
		t.Skip("runs as the child of TestWorkerEnvIgnored")
	}
	os.Stdout.WriteString(childMarker + "\n")
}

// An executable that did not register the worker, started as raw starts its workers
// (WorkerEnv set, a request on stdin), runs normally instead of serving LibRaw.
func TestWorkerEnvIgnored(t *testing.T) {
	if os.Getenv(raw.WorkerEnv) != "" {
		t.Skip("this is the child")
	}
	b, err := os.ReadFile(testphotos.Path(t, "raw", "CRW.CRW"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildRunsItsTests$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), raw.WorkerEnv+"=1")
	// A probe request as the parent sends one: operation, flag, length, the file.
	hdr := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	n := len(b)
	for i := 2; i < 10; i++ {
		hdr[i] = byte(n)
		n >>= 8
	}
	cmd.Stdin = bytes.NewReader(append(hdr, b...))
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte(childMarker)) {
		t.Fatalf("the child did not run as a test binary (err %v):\n%q", err, out)
	}
}

// Without a registered worker, a RAW file is developed in this process: raw does not
// start this executable again (which would run these tests rather than answer).
func TestDecodesInProcess(t *testing.T) {
	if os.Getenv(raw.WorkerEnv) != "" {
		t.Skip("this is the child")
	}
	b, err := os.ReadFile(testphotos.Path(t, "raw", "CRW.CRW"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := raw.Probe(b)
	if err != nil {
		t.Fatal(err)
	}
	if in.Width != 2176 || in.Height != 1448 || in.Model != "EOS D30" {
		t.Fatalf("probe %+v", in)
	}
	img, _, err := raw.Develop(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if img.Width != 1088 || img.Height != 724 {
		t.Fatalf("half-size development %dx%d", img.Width, img.Height)
	}
}
