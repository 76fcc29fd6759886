package align_test

import (
	"context"
	_ "image/jpeg"
	_ "image/png"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// loadScene decodes every bracket of a test scene, in file-name order.
func loadScene(t testing.TB, scene string) []*imaging.Image {
	t.Helper()
	names := testphotos.Brackets(t, scene)
	out := make([]*imaging.Image, len(names))
	for i, n := range names {
		out[i] = loadPhoto(t, "brackets", scene, n)
	}
	return out
}

var loadPhoto = imagingtest.LoadPhoto

// warp is align.Warp for tests, which never cancel it.
func warp(t testing.TB, img *imaging.Image, tr align.Transform) *imaging.Image {
	t.Helper()
	out, err := align.Warp(context.Background(), img, tr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
