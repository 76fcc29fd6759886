package assets

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/core"
)

func asCore(err error, target **core.Error) bool { return errors.As(err, target) }

func countBlobs(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "blobs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && len(filepath.Base(filepath.Dir(p))) == 2 {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
