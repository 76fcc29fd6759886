package raw

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// The worker parses hostile files: it sees none of the parent's environment, where
// the admin key and model-server keys live.
func TestWorkerGetsNoParentEnvironment(t *testing.T) {
	t.Setenv("PORCHLIGHT_ADMIN_KEY", "sk-do-not-leak")
	t.Setenv("OPENAI_API_KEY", "sk-nor-this")
	cmd := workerCommand("/nonexistent/porchlight")
	if len(cmd.Env) == 0 {
		t.Fatal("the worker inherits the whole environment")
	}
	for _, kv := range cmd.Env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case WorkerEnv, limitMemoryEnv, limitCPUEnv:
		default:
			t.Errorf("worker environment holds %q", kv)
		}
		if strings.Contains(kv, "sk-") {
			t.Errorf("worker environment leaks a secret: %q", kv)
		}
	}
}

// A worker whose address space is capped fails on a file it would otherwise develop,
// instead of growing: the limit reaches the real child process.
func TestWorkerMemoryLimitApplies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("address-space limits are applied on Linux only")
	}
	b, err := os.ReadFile(testphotos.Path(t, "raw", "CRW.CRW"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Develop(b, true); err != nil {
		t.Fatalf("develop within the default limit: %v", err)
	}
	old := MemoryLimit
	MemoryLimit = 1 << 20 // far less than a development needs
	t.Cleanup(func() { MemoryLimit = old })
	if _, _, err := Develop(b, true); err == nil {
		t.Fatal("a worker limited to 1 MB more address space developed the raw anyway")
	} else {
		t.Logf("limited worker: %v", err)
	}
}
