// Package curl_test runs examples/curl/batch.sh against a real Porchlight.
package curl_test

import (
	"context"
	"image"
	_ "image/jpeg"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/testphotos"
	"github.com/porchlight/porchlight/localapi/client/clienttest"
)

func jpegSize(t *testing.T, path string) image.Point {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil || format != "jpeg" {
		t.Fatalf("%s: %s, %v", path, format, err)
	}
	return image.Pt(cfg.Width, cfg.Height)
}

func TestCurlBatchScript(t *testing.T) {
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	scenes := map[string]string{
		"kitchen":  testphotos.Path(t, "brackets", "house_interior_kim"), // 4 JPEG, 752x500
		"exterior": testphotos.Path(t, "brackets", "oldhouse_exterior"),  // 3 JPEG, 1080x720, and a README.txt
	}
	sizes := map[string]image.Point{"kitchen": {752, 500}, "exterior": {1080, 720}}
	srv := clienttest.Start(t, clienttest.Options{})
	_, key := srv.NewKey(t, "curl-example", core.ScopeStandard)

	for _, reader := range []string{"jq", "python3"} {
		t.Run(reader, func(t *testing.T) {
			if _, err := exec.LookPath(reader); err != nil {
				t.Skipf("%s is not installed", reader)
			}
			shoot := t.TempDir()
			use := scenes
			if reader == "python3" { // one scene is enough to read every answer
				use = map[string]string{"kitchen": scenes["kitchen"]}
			}
			for name, dir := range use {
				if err := os.Symlink(dir, filepath.Join(shoot, name)); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(t.TempDir(), "finished")
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			// Given as "finished/", as people type it; the paths printed have no "//".
			cmd := exec.CommandContext(ctx, "bash", "batch.sh", "-o", out+"/", shoot)
			cmd.Env = append(os.Environ(),
				"PORCHLIGHT_URL="+srv.URL,
				"PORCHLIGHT_API_KEY="+key,
				`OPTIONS={"format": "jpeg", "quality": 90}`,
				"BATCH_JSON="+reader,
			)
			output, err := cmd.CombinedOutput()
			t.Logf("batch.sh:\n%s", output)
			if err != nil {
				t.Fatalf("batch.sh: %v", err)
			}
			for name := range use {
				if got := jpegSize(t, filepath.Join(out, name+".jpg")); got != sizes[name] {
					t.Errorf("%s.jpg is %v, want %v", name, got, sizes[name])
				}
				if !strings.Contains(string(output), name+": completed -> "+filepath.Join(out, name+".jpg")+"\n") {
					t.Errorf("no completion line for %s naming %s", name, filepath.Join(out, name+".jpg"))
				}
			}
			if parts, _ := filepath.Glob(filepath.Join(out, "*.part")); len(parts) > 0 {
				t.Errorf("partial downloads left: %v", parts)
			}
		})
	}
}

func TestCurlBatchScriptReportsAPIErrors(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := clienttest.Start(t, clienttest.Options{})
	shoot := t.TempDir()
	if err := os.Symlink(testphotos.Path(t, "brackets", "house_interior_kim"), filepath.Join(shoot, "kitchen")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "batch.sh", "-o", t.TempDir(), shoot)
	cmd.Env = append(os.Environ(), "PORCHLIGHT_URL="+srv.URL, "PORCHLIGHT_API_KEY=sk-not-a-key-of-this-server")
	output, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(output), "HTTP 401") {
		t.Fatalf("a wrong key: err %v, output:\n%s", err, output)
	}
}
