package privacy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestModelFilesAreTheLoadedCascades(t *testing.T) {
	files := ModelFiles()
	if len(files) < 9 {
		t.Fatalf("ModelFiles() = %v, want the face panel, eye and plate cascades", files)
	}
	for _, rel := range files {
		if !strings.HasSuffix(rel, ".xml") || (!strings.HasPrefix(rel, "haarcascades/") && !strings.HasPrefix(rel, "lbpcascades/")) {
			t.Errorf("%q is not a cascade path relative to a models folder", rel)
		}
	}
	if n := len(files); n != len(slices.Compact(slices.Sorted(slices.Values(files)))) {
		t.Errorf("ModelFiles() repeats a file: %v", files)
	}
}

func TestModelDirsSearchThePackageFolderAndTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(ModelsEnv, dir)
	dirs := ModelDirs()
	if dirs[0] != dir || !slices.Contains(dirs, PackageModels) {
		t.Fatalf("ModelDirs() = %v, want %s first and %s included", dirs, dir, PackageModels)
	}
	// A model placed in the environment's folder wins over every other folder.
	rel := ModelFiles()[0]
	want := filepath.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(want), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(want, []byte("<opencv_storage/>"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := FindModel(rel)
	if err != nil || got != want {
		t.Fatalf("FindModel(%q) = %q, %v; want %q", rel, got, err, want)
	}
}
