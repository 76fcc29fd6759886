// Package debtest installs the Debian package that `make test-package` builds, runs
// the installed program the way its systemd user unit does, and removes it again.
package debtest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging/privacy"
)

const (
	pkg  = "porchlight"
	unit = "/usr/lib/systemd/user/porchlight.service"
)

// installed lists what the package must put in place.
var installed = []string{
	"/usr/bin/porchlight",
	"/usr/share/applications/porchlight.desktop",
	"/usr/share/icons/hicolor/512x512/apps/porchlight.png",
	"/usr/share/icons/hicolor/64x64/apps/porchlight.png",
	unit,
	"/usr/share/doc/porchlight/README.md",
}

func run(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestDebInstallsAndServes(t *testing.T) {
	deb := os.Getenv("PORCHLIGHT_DEB")
	if deb == "" {
		t.Skip("PORCHLIGHT_DEB is not set: `make test-package` builds the package and runs this test")
	}
	if os.Geteuid() != 0 {
		t.Skip("installing a package needs root; run `sudo make test-package`")
	}
	if _, err := exec.LookPath("dpkg"); err != nil {
		t.Skip("dpkg is not installed: not a Debian system")
	}
	if out, _ := run(t, "dpkg-query", "-W", "-f=${Status}", pkg); strings.Contains(out, "install ok installed") {
		t.Skipf("a %s package is already installed here; remove it (dpkg -r %s) to run this test", pkg, pkg)
	}

	if out, err := run(t, "dpkg", "-i", deb); err != nil {
		run(t, "dpkg", "-r", pkg) // a failed install leaves the package half-configured
		t.Fatalf("dpkg -i %s: %v\n%s", deb, err, out)
	}
	t.Cleanup(func() {
		if out, err := run(t, "dpkg", "-r", pkg); err != nil {
			t.Errorf("dpkg -r %s: %v\n%s", pkg, err, out)
		}
		for _, p := range installed {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s is still there after dpkg -r", p)
			}
		}
	})

	// Files in place, including every model the privacy detector loads.
	for _, p := range installed {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s is missing or empty: %v", p, err)
		}
	}
	for _, rel := range privacy.ModelFiles() {
		if _, err := os.Stat(filepath.Join(privacy.PackageModels, rel)); err != nil {
			t.Errorf("model %s is not installed: %v", rel, err)
		}
	}
	out, err := run(t, "dpkg-query", "-W", "-f=${Depends}", pkg)
	if err != nil || !strings.Contains(out, "libraw") || !strings.Contains(out, "libturbojpeg") || !strings.Contains(out, "libwebp") {
		t.Errorf("Depends does not name the image libraries: %q (%v)", out, err)
	}

	execStart, env := readUnit(t, unit)
	if execStart[0] != "/usr/bin/porchlight" || len(execStart) < 2 || execStart[1] != "serve" {
		t.Fatalf("ExecStart = %q, want /usr/bin/porchlight serve", execStart)
	}

	// The installed binary runs: version, and doctor finds the packaged models.
	home := t.TempDir()
	baseEnv := append(env,
		"HOME="+home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"),
		"PORCHLIGHT_DATA_DIR="+filepath.Join(home, "data"),
	)
	if out, err := command(baseEnv, "/usr/bin/porchlight", "version").CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "porchlight ") {
		t.Fatalf("porchlight version: %v\n%s", err, out)
	}

	// Start the service as the unit does, on a free port with a temporary data dir.
	const secret = "sk-debtest0123456789abcdef0123456789abcdef0123"
	cmd := command(append(baseEnv, "PORCHLIGHT_LISTEN=127.0.0.1:0", "PORCHLIGHT_ADMIN_KEY="+secret), execStart[0], execStart[1:]...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", strings.Join(execStart, " "), err)
	}
	exited := make(chan error, 1)
	var log lockedBuilder
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			l := sc.Text()
			log.WriteString(l + "\n")
			if a, ok := strings.CutPrefix(l, "listening on "); ok {
				addr <- a
			}
		}
		exited <- cmd.Wait()
	}()
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
	})

	var base string
	select {
	case base = <-addr:
	case err := <-exited:
		stopped = true
		t.Fatalf("porchlight serve exited before listening: %v\n%s", err, log.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("porchlight serve did not print its address within a minute\n%s", log.String())
	}

	var health struct {
		Data struct {
			Status string `json:"status"`
		} `json:"data"`
	}
	getJSON(t, base+"/healthz", "", &health)
	if health.Data.Status != "ok" {
		t.Errorf("/healthz status %q", health.Data.Status)
	}
	var presets struct {
		Data struct {
			Presets []json.RawMessage `json:"presets"`
		} `json:"data"`
	}
	getJSON(t, base+"/v1/presets?feature=tonecraft", secret, &presets)
	if len(presets.Data.Presets) == 0 {
		t.Error("the bootstrap admin key lists no tonecraft presets")
	}

	// doctor, run beside the service, sees it and the packaged models.
	port := base[strings.LastIndex(base, ":")+1:]
	doc, err := command(append(baseEnv, "PORCHLIGHT_LISTEN=127.0.0.1:"+port), "/usr/bin/porchlight", "doctor").CombinedOutput()
	if err != nil {
		t.Errorf("porchlight doctor: %v\n%s", err, doc)
	}
	for _, want := range []string{privacy.PackageModels, "held by a running Porchlight", "in use by the Porchlight serving at"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("doctor's report does not say %q:\n%s", want, doc)
		}
	}

	// systemd stops the unit with SIGTERM; serve must exit cleanly.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("porchlight serve exited with %v after SIGTERM\n%s", err, log.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("porchlight serve did not stop within a minute of SIGTERM\n%s", log.String())
	}
}

// lockedBuilder collects the server's log from its reader goroutine.
type lockedBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuilder) WriteString(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
}

func (l *lockedBuilder) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// command runs name with exactly env, as systemd gives a unit a clean environment.
func command(env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return cmd
}

// readUnit returns the unit's ExecStart words and its Environment= assignments,
// and checks that the unit can be enabled for a user session.
func readUnit(t *testing.T, path string) (execStart []string, env []string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	section := ""
	wanted := false
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") || strings.HasPrefix(l, ";") {
			continue
		}
		if strings.HasPrefix(l, "[") {
			section = l
			continue
		}
		k, v, ok := strings.Cut(l, "=")
		if !ok {
			t.Fatalf("%s: malformed line %q", path, l)
		}
		switch section + k {
		case "[Service]ExecStart":
			execStart = strings.Fields(v)
		case "[Service]Environment":
			env = append(env, strings.Fields(v)...)
		case "[Install]WantedBy":
			wanted = v == "default.target"
		}
	}
	if len(execStart) == 0 {
		t.Fatalf("%s has no ExecStart", path)
	}
	if !wanted {
		t.Errorf("%s is not WantedBy=default.target, so `systemctl --user enable` would not start it", path)
	}
	return execStart, env
}

func getJSON(t *testing.T, url, key string, into any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: HTTP %d %s", url, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, into); err != nil {
		t.Fatalf("GET %s: %v in %s", url, err, body)
	}
}
