package align_test

import (
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// loadScene decodes every bracket of a test scene, in file-name order.
func loadScene(t testing.TB, scene string) []*imaging.Image {
	t.Helper()
	dir := filepath.Join(testphotos.Dir(t), "brackets", scene)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		n := strings.ToLower(e.Name())
		if strings.HasSuffix(n, ".jpg") || strings.HasSuffix(n, ".png") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	out := make([]*imaging.Image, len(names))
	for i, n := range names {
		out[i] = loadPhoto(t, "brackets", scene, n)
	}
	return out
}

var loadPhoto = imagingtest.LoadPhoto
