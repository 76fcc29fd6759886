package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An input folder given as a symbolic link is checked through the link: a link to
// a folder is fine and says where it leads; a link whose target is missing is a
// problem that names the target, with a fix that would work (mkdir -p on the link
// itself fails).
func TestDoctorFollowsAnInputLink(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "data", "in")
	if err := os.MkdirAll(real, 0o755); err != nil {
		t.Fatal(err)
	}
	good, dangling := filepath.Join(base, "in"), filepath.Join(base, "gone")
	missing := filepath.Join(base, "unmounted", "in")
	for link, target := range map[string]string{good: real, dangling: missing} {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &Config{Hotfolders: []map[string]any{
		{"name": "good", "input": good, "output": filepath.Join(base, "out-good")},
		{"name": "dangling", "input": dangling, "output": filepath.Join(base, "out-dangling")},
	}}
	got := map[string]checkResult{}
	for _, r := range checkHotfolders(cfg) {
		got[r.Name] = r
	}
	resolved, _ := filepath.EvalSymlinks(real)
	if r := got["hot folder good"]; r.Status != checkOK || !strings.Contains(r.Detail, good+" (a link to "+resolved+")") {
		t.Errorf("linked input: %+v", r)
	}
	r := got["hot folder dangling"]
	if r.Status != checkFail || !strings.Contains(r.Detail, "symbolic link to "+missing) ||
		!strings.Contains(r.Detail, "does not exist") || !strings.Contains(r.Fix, missing) {
		t.Errorf("dangling input link: %+v", r)
	}
}
