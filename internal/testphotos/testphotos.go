// Package testphotos finds the real test photos for tests. Every test that reads a
// photo goes through it, so one environment variable moves them all.
package testphotos

import (
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

// Env names the environment variable that points tests at the photo folder.
const Env = "PORCHLIGHT_TESTDATA"

// Root returns the photo folder: $PORCHLIGHT_TESTDATA, else ../shared/testdata beside
// the repository. ok is false when it does not exist.
func Root() (dir string, ok bool) {
	dir = os.Getenv(Env)
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		// this file is internal/testphotos/testphotos.go; the repository is two up.
		repo := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		dir = filepath.Join(repo, "..", "shared", "testdata")
	}
	dir = filepath.Clean(dir)
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// Dir returns the photo folder, or skips the test saying why.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, ok := Root()
	if !ok {
		tb.Skipf("test photos not found at %s (set %s to the shared testdata folder)", dir, Env)
	}
	return dir
}

// Path returns the path of a photo below the folder, skipping the test when the folder
// is absent and failing it when the folder exists but the photo does not.
func Path(tb testing.TB, rel ...string) string {
	tb.Helper()
	p := filepath.Join(append([]string{Dir(tb)}, rel...)...)
	if _, err := os.Stat(p); err != nil {
		tb.Fatalf("test photo missing: %v", err)
	}
	return p
}

// Brackets returns the file names of a bracket set's images (JPEG and PNG), sorted,
// skipping the test when the photo folder is absent.
func Brackets(tb testing.TB, scene string) []string {
	tb.Helper()
	ents, err := os.ReadDir(filepath.Join(Dir(tb), "brackets", scene))
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".jpg", ".jpeg", ".png":
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}
