package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/internal/testphotos"
	"github.com/porchlight/porchlight/localapi/client"
)

// The backends and features of the config file run the generative features: the
// catalog shows them available, and an order runs on the configured server.
func TestBackendsFromConfigFile(t *testing.T) {
	photo := testphotos.Path(t, "brackets", "house_interior_kim", "A.jpg")
	fake := backendtest.NewIOPaint(t)
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	file := filepath.Join(dir, "config.yaml")
	yaml := fmt.Sprintf(`data_dir: %s
listen: 127.0.0.1:0
admin_key: sk-apptest-admin-0123456789abcdef
backends:
  Studio_Eraser:
    type: iopaint
    url: %s
    timeout: 2m
    retries: 1
features:
  mess_cleaner: studio_eraser
  declutter: studio_eraser
`, filepath.Join(dir, "data"), fake.URL)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadConfig(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	listening := make(chan string, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	sys, err := buildSystem(cfg, log, buildOptions{api: true, onListening: func(a string) { listening <- a }})
	if err != nil {
		t.Fatal(err)
	}
	defer sys.close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	done := make(chan error, 1)
	go func() { done <- sys.sup.Serve(ctx) }()
	defer func() { cancel(); <-done }()
	var addr string
	select {
	case addr = <-listening:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}
	admin, err := client.New("http://"+addr, cfg.AdminKey)
	if err != nil {
		t.Fatal(err)
	}
	features, err := admin.Features(ctx)
	if err != nil {
		t.Fatal(err)
	}
	avail := map[string]bool{}
	for _, f := range features {
		avail[f.Key] = f.Available
	}
	if !avail["mess_cleaner"] || !avail["declutter"] || avail["indoor_staging"] || avail["outdoor_staging"] {
		t.Errorf("availability %v", avail)
	}

	data, err := os.ReadFile(photo)
	if err != nil {
		t.Fatal(err)
	}
	a, err := admin.Upload(ctx, "A.jpg", "image/jpeg", data)
	if err != nil {
		t.Fatal(err)
	}
	gq := "fast"
	mess := "mess_cleaner"
	o, err := admin.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{GenEdit: &mess, GenQuality: &gq}}, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := admin.WaitOrder(ctx, o.OrderID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != core.OrderCompleted || s.Recipes["mess_cleaner"] != "1.8.0" {
		t.Fatalf("order %+v", s)
	}
	if jobs := fake.Jobs(); len(jobs) != 1 || jobs[0].Steps != 20 || !strings.Contains(jobs[0].Prompt, "tidied") {
		t.Errorf("backend jobs %+v", jobs)
	}
	// A feature without a backend fails its order clearly.
	staging := "indoor_staging"
	o, err = admin.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{a.AssetID}, Options: core.Options{GenEdit: &staging}}, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err = admin.WaitOrder(ctx, o.OrderID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != core.OrderFailed || s.ErrorCode != "feature_unavailable" || !strings.Contains(s.Error, "indoor staging") {
		t.Errorf("unconfigured feature: %+v", s)
	}
}

func TestBackendConfigErrorStopsStart(t *testing.T) {
	dir := t.TempDir()
	cfg := &Config{DataDir: dir, Listen: "127.0.0.1:0",
		Backends: map[string]map[string]any{"gpu": {"type": "comfyui", "url": "http://127.0.0.1:8188"}},
		Features: map[string]string{"indoor_staging": "gpu"}}
	_, err := buildSystem(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), buildOptions{})
	if err == nil || !strings.Contains(err.Error(), "backends.gpu.workflows") {
		t.Fatalf("err = %v", err)
	}
}
