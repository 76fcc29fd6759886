package app

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/childproc"
)

// envServeChild makes this test binary run `porchlight serve` as a child.
const envServeChild = "PORCHLIGHT_TEST_SERVE_CHILD"

// serveChild runs `porchlight serve` with the environment the parent set and exits.
func serveChild() {
	root := newRootCommand(os.Stdout, os.Stderr)
	root.SetArgs([]string{"serve"})
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startServeChild runs `porchlight serve` on dataDir in another process and
// answers it and the address it printed.
func startServeChild(t *testing.T, dataDir, adminKey string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1")
	env := []string{envServeChild + "=1", "PORCHLIGHT_DATA_DIR=" + dataDir, "PORCHLIGHT_LISTEN=127.0.0.1:0",
		"PORCHLIGHT_ADMIN_KEY=" + adminKey, "PORCHLIGHT_LOG_LEVEL=info", "XDG_CONFIG_HOME=" + t.TempDir()}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PORCHLIGHT_") && !strings.HasPrefix(kv, "XDG_CONFIG_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd, childproc.WaitLine(t, stderr, "listening on ", 2*time.Minute)
}

// While `serve` holds the database, doctor names it by its pid and its own
// address (not by whatever Porchlight answers at the configured one), and `keys
// create` fails at once naming it, with the two ways on: stop it, or the API
// request that does the same, which works as printed.
func TestDoctorAndKeysNameTheServerHoldingTheDatabase(t *testing.T) {
	if os.Getenv(envServeChild) != "" {
		serveChild()
	}
	dataDir := t.TempDir()
	admin := "sk-test-admin-0123456789abcdef"
	child, url := startServeChild(t, dataDir, admin)
	pid := child.Process.Pid

	// Another Porchlight answers at the address the configuration names.
	other := serveHTTP(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"data":{"status":"ok"}}`)
	}))
	report, _ := runDoctorWith(t, fmt.Sprintf("data_dir: %s\nlisten: %s\n", dataDir, other))
	l := line(t, report, "database")
	if want := fmt.Sprintf("in use by the Porchlight serving at %s (pid %d)", url, pid); !strings.HasPrefix(l, "ok") || !strings.Contains(l, want) {
		t.Errorf("database line %q, want %q", l, want)
	}
	if strings.Contains(l, other) {
		t.Errorf("the database is said to be held by the server at %s: %s", other, l)
	}

	t.Setenv("PORCHLIGHT_DATA_DIR", dataDir)
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	var o, e bytes.Buffer
	root := newRootCommand(&o, &e)
	root.SetArgs([]string{"keys", "create", "--name", "me", "--scope", "standard"})
	start := time.Now()
	err := root.Execute()
	if err == nil {
		t.Fatal("keys create succeeded while serve holds the database")
	}
	if el := time.Since(start); el > 4*time.Second {
		t.Errorf("keys create took %s to give up", el)
	}
	msg := err.Error()
	for _, want := range []string{fmt.Sprintf("%s (pid %d)", url, pid), fmt.Sprintf("kill %d", pid), "stop it first",
		"curl -s -X POST " + url + "/v1/api-keys"} {
		if !strings.Contains(msg, want) {
			t.Errorf("keys create said %q; it does not say %q", msg, want)
		}
	}
	// The request it printed issues the key.
	i := strings.Index(msg, "curl ")
	if i < 0 {
		t.Fatalf("no request in %q", msg)
	}
	sh := exec.Command("sh", "-c", strings.TrimSpace(msg[i:]))
	sh.Env = append(os.Environ(), "ADMIN_KEY="+admin)
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("%s: %v", msg[i:], err)
	}
	var issued struct {
		Data struct {
			Name  string `json:"name"`
			Scope string `json:"scope"`
			Key   string `json:"key"`
		} `json:"data"`
	}
	if json.Unmarshal(out, &issued) != nil || issued.Data.Name != "me" || issued.Data.Scope != "standard" || !strings.HasPrefix(issued.Data.Key, "sk-") {
		t.Errorf("the printed request answered %s", out)
	}

	// A graceful stop takes the serving file away.
	if err := child.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := child.Wait(); err != nil {
		t.Fatalf("serve after SIGTERM: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, servingFileName)); !os.IsNotExist(err) {
		t.Errorf("the serving file is still there after serve stopped: %v", err)
	}
}
