package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging/privacy"
	"github.com/porchlight/porchlight/engine/store"
)

// runDoctorWith writes config to a file and runs `porchlight doctor --config FILE`
// with no PORCHLIGHT_ variables from the environment.
func runDoctorWith(t *testing.T, config string) (string, int) {
	t.Helper()
	return runDoctorMode(t, config, 0o600)
}

// runDoctorMode is runDoctorWith with the config file given mode.
func runDoctorMode(t *testing.T, config string, mode os.FileMode) (string, int) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "PORCHLIGHT_") && k != privacy.ModelsEnv {
			t.Setenv(k, "")
		}
	}
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	root := newRootCommand(&o, &e)
	root.SetArgs([]string{"doctor", "--config", file, "--timeout", "2s"})
	err := root.Execute()
	if e.Len() > 0 {
		t.Logf("stderr: %s", e.String())
	}
	return o.String(), exitCode(err)
}

// line returns the report line of the check named name.
func line(t *testing.T, report, name string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^(ok|note|warn|FAIL)\s+` + regexp.QuoteMeta(name) + `\s+.*$`)
	l := re.FindString(report)
	if l == "" {
		t.Fatalf("no %q line in the report:\n%s", name, report)
	}
	return l
}

func requireModels(t *testing.T) {
	t.Helper()
	for _, rel := range privacy.ModelFiles() {
		if _, err := privacy.FindModel(rel); err != nil {
			t.Skipf("the privacy models are not installed here (apt-get install opencv-data): %v", err)
		}
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// serveHTTP runs handler on a real loopback listener until the test ends.
func serveHTTP(t *testing.T, handler http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func TestDoctorPassesOnAWorkingSetup(t *testing.T) {
	requireModels(t)
	dataDir := t.TempDir()
	db, err := store.Open(dataDir) // an existing database, as after a first start
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	workflow, err := filepath.Abs("../engine/backends/comfyui/workflows/img2img.json")
	if err != nil {
		t.Fatal(err)
	}

	var probes atomic.Int32
	iopaint := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && (r.URL.Path == "/api/v1/server-config" || r.URL.Path == "/system_stats") {
			probes.Add(1)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"plugins":[],"modelInfos":[]}`)
			return
		}
		http.NotFound(w, r)
	}))

	report, code := runDoctorWith(t, fmt.Sprintf(`
data_dir: %s
listen: %s
backends:
  eraser: {type: iopaint, url: "http://%s"}
  studio:
    type: comfyui
    url: "http://%s"
    model: sd_xl_base_1.0.safetensors
    workflows: {indoor_staging: %s}
features:
  magic_eraser: eraser
  indoor_staging: studio
hotfolders:
  - name: listings
    input: %s
    output: %s
`, dataDir, freeAddr(t), iopaint, iopaint, workflow, in, out))
	t.Log("\n" + report)
	if code != 0 {
		t.Fatalf("exit %d on a working setup", code)
	}
	if probes.Load() != 2 {
		t.Errorf("the backends were asked %d times, want once each", probes.Load())
	}
	for _, name := range []string{"jpeg", "webp", "camera raw", "heic", "privacy models", "config", "data dir",
		"database", "listen", "backend eraser", "backend studio", "features", "hot folder listings"} {
		if l := line(t, report, name); !strings.HasPrefix(l, "ok") {
			t.Errorf("want ok: %s", l)
		}
	}
	if l := line(t, report, "database"); !strings.Contains(l, fmt.Sprintf("schema %d", store.Latest())) {
		t.Errorf("database line does not give the schema: %s", l)
	}
	if !strings.Contains(report, "Everything Porchlight needs is in place.") {
		t.Error("no all-clear at the end")
	}
}

func TestDoctorReportsWhatToFix(t *testing.T) {
	base := t.TempDir()
	notADir := filepath.Join(base, "data")
	if err := os.WriteFile(notADir, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	// The listen address is taken by a program that is not Porchlight.
	other := serveHTTP(t, http.NotFoundHandler())
	// A backend whose server is down, and one that refuses the key.
	down := freeAddr(t)
	locked := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer right" {
			http.Error(w, "no", http.StatusUnauthorized)
		}
	}))

	report, code := runDoctorWith(t, fmt.Sprintf(`
data_dir: %s
listen: %s
backends:
  gpu: {type: comfyui, url: "http://%s"}
  cloud: {type: openai, url: "http://%s/v1", api_key: wrong}
features:
  indoor_staging: gpu
  declutter: nowhere
hotfolders:
  - name: drop
    input: %s
    output: %s
`, notADir, other, down, locked, filepath.Join(base, "missing-in"), filepath.Join(base, "out")))
	t.Log("\n" + report)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	for name, want := range map[string]string{
		"data dir":        "is not a folder",
		"database":        "not a directory",
		"listen":          "no Porchlight answers there",
		"backend gpu":     "unreachable",
		"backend cloud":   "refused the credentials: HTTP 401",
		"features":        `names backend "nowhere"`,
		"hot folder drop": "does not exist",
		"backend config":  "workflow",
	} {
		l := line(t, report, name)
		if !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, want) {
			t.Errorf("%s: want FAIL with %q, got %s", name, want, l)
		}
	}
	if n := strings.Count(report, "fix: "); n < 8 {
		t.Errorf("%d fixes given for 8 problems", n)
	}
	if !strings.Contains(report, "problems found") {
		t.Error("no summary of the problems")
	}
}

func TestDoctorSeesARunningServer(t *testing.T) {
	requireModels(t)
	dataDir := t.TempDir()
	cfg := &Config{DataDir: dataDir, Listen: "127.0.0.1:0", LogLevel: "error"}
	cfg.Engine.OrderExpiry = time.Hour
	cfg.Engine.ResolutionCap = 8192
	cfg.Limits.MaxUploadMB, cfg.Limits.MaxMegapixels = 300, 120
	listening := make(chan string, 1)
	sys, err := buildSystem(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), buildOptions{
		api: true, onListening: func(addr string) {
			// As serve and the window do.
			if err := announceServing(dataDir, "http://"+addr); err != nil {
				t.Error(err)
			}
			listening <- addr
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sys.sup.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("server: %v", err)
		}
		sys.close()
	})
	var addr string
	select {
	case addr = <-listening:
	case err := <-done:
		t.Fatalf("server stopped: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the server did not start listening")
	}

	report, code := runDoctorWith(t, fmt.Sprintf("data_dir: %s\nlisten: %s\n", dataDir, addr))
	t.Log("\n" + report)
	if code != 0 {
		t.Fatalf("exit %d with a server running", code)
	}
	if l := line(t, report, "database"); !strings.HasPrefix(l, "ok") ||
		!strings.Contains(l, fmt.Sprintf("in use by the Porchlight serving at http://%s (pid %d)", addr, os.Getpid())) {
		t.Errorf("database: %s", l)
	}
	if l := line(t, report, "listen"); !strings.HasPrefix(l, "ok") || !strings.Contains(l, "held by a running Porchlight") {
		t.Errorf("listen: %s", l)
	}

	// Looking at another address, the holder is still named by its own address.
	report, code = runDoctorWith(t, fmt.Sprintf("data_dir: %s\nlisten: %s\n", dataDir, freeAddr(t)))
	if l := line(t, report, "database"); code != 0 || !strings.HasPrefix(l, "ok") || !strings.Contains(l, "serving at http://"+addr) {
		t.Errorf("exit %d, database: %s", code, l)
	}
	// Without its serving file (a Porchlight that says nothing), the lock is still
	// explained by its pid, not a failure.
	os.Remove(filepath.Join(dataDir, servingFileName))
	report, code = runDoctorWith(t, fmt.Sprintf("data_dir: %s\nlisten: %s\n", dataDir, freeAddr(t)))
	if l := line(t, report, "database"); code != 0 || !strings.HasPrefix(l, "note") || !strings.Contains(l, "locked") {
		t.Errorf("exit %d, database: %s", code, l)
	}
}

func TestDoctorBadConfigFails(t *testing.T) {
	report, code := runDoctorWith(t, "listen: [unclosed\n")
	t.Log("\n" + report)
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if l := line(t, report, "config"); !strings.HasPrefix(l, "FAIL") {
		t.Errorf("config: %s", l)
	}
	// The checks that need no configuration still ran.
	line(t, report, "jpeg")
	line(t, report, "privacy models")
}

// The example configuration shipped in the package loads, and so do its commented
// hot-folder and backend sections once uncommented.
func TestExampleConfigLoads(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	const example = "../packaging/config.example.yaml"
	if _, _, err := LoadConfig(example, nil); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "# "); ok && (strings.HasPrefix(rest, " ") || strings.HasSuffix(strings.Fields(rest + " x")[0], ":")) {
			l = rest
		}
		sb.WriteString(l + "\n")
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(sb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := LoadConfig(file, nil)
	if err != nil {
		t.Fatalf("uncommented example: %v\n%s", err, sb.String())
	}
	if len(cfg.Hotfolders) != 1 || len(cfg.Backends) != 2 || len(cfg.Features) != 2 {
		t.Fatalf("uncommented example has %d hot folders, %d backends, %d features:\n%s",
			len(cfg.Hotfolders), len(cfg.Backends), len(cfg.Features), sb.String())
	}
	if _, err := hotfolder.Decode(cfg.Hotfolders); err != nil {
		t.Error(err)
	}
	for name, raw := range cfg.Backends {
		if _, err := backends.ParseSpec(name, raw); err != nil {
			t.Error(err)
		}
	}
}

// A config file holding secrets that others can read is reported with the
// command that fixes it; a private one, or one without secrets, is fine.
func TestDoctorWarnsOfAReadableConfigWithSecrets(t *testing.T) {
	config := fmt.Sprintf("data_dir: %s\nlisten: %s\nadmin_key: sk-admin-0123456789abcdef\n"+
		"backends:\n  cloud: {type: openai, url: \"http://%s/v1\", api_key: sk-backend}\n", t.TempDir(), freeAddr(t), freeAddr(t))
	for _, c := range []struct {
		mode       os.FileMode
		status     string
		mentions   []string
		noSecretOK bool
	}{
		{0o644, "warn", []string{"admin_key, backends.cloud.api_key", "its group and all users can read it", "(mode 0644)"}, false},
		{0o640, "warn", []string{"its group can read it"}, false},
		{0o600, "ok", []string{"only its owner can read it"}, false},
	} {
		report, _ := runDoctorMode(t, config, c.mode)
		l := line(t, report, "config access")
		if !strings.HasPrefix(l, c.status) {
			t.Errorf("mode %04o: %s", c.mode, l)
		}
		for _, m := range c.mentions {
			if !strings.Contains(l, m) {
				t.Errorf("mode %04o: %q does not say %q", c.mode, l, m)
			}
		}
		file := regexp.MustCompile(`config access\s+(\S+) holds`).FindStringSubmatch(l)
		hasFix := file != nil && strings.Contains(report, "fix: chmod 600 "+file[1]+"\n")
		if hasFix != (c.status == "warn") {
			t.Errorf("mode %04o: fix given %v in\n%s", c.mode, hasFix, report)
		}
	}
	// Without secrets in the file there is nothing to protect, whatever its mode.
	report, _ := runDoctorMode(t, fmt.Sprintf("data_dir: %s\nlisten: %s\n", t.TempDir(), freeAddr(t)), 0o644)
	if strings.Contains(report, "config access") {
		t.Errorf("a config without secrets was reported:\n%s", report)
	}
}
