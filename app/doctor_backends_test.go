package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/backends/backendtest"
)

// The doctor names a checkpoint or sampler the server does not have, and what it has.
func TestDoctorChecksBackendNames(t *testing.T) {
	sd := backendtest.NewA1111(t)
	iop := backendtest.NewIOPaint(t)
	cfg := &Config{Backends: map[string]map[string]any{
		"gpu":    {"type": "a1111", "url": sd.URL, "model": "sdxl.safetensors", "sampler": "Euler a"},
		"eraser": {"type": "iopaint", "url": iop.URL, "sampler": "UniPC"},
	}, Features: map[string]string{"declutter": "gpu", "magic_eraser": "eraser"}}
	res := checkBackendNames(context.Background(), cfg, 5*time.Second)
	if len(res) != 2 {
		t.Fatalf("results %+v", res)
	}
	eraser, gpu := res[0], res[1]
	if eraser.Status != checkOK || !strings.Contains(eraser.Detail, `sampler "UniPC"`) {
		t.Errorf("eraser: %+v", eraser)
	}
	if gpu.Status != checkFail || !strings.Contains(gpu.Detail, `checkpoint "sdxl.safetensors" is not on the server; it has: juggernautXL_v9.safetensors`) ||
		!strings.Contains(gpu.Fix, "backends.gpu") {
		t.Errorf("gpu: %+v", gpu)
	}
}
