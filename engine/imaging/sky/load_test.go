package sky

import (
	"image"
	"image/color"
	_ "image/jpeg" // the test photos
	_ "image/png"  // and the ground-truth masks
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

func loadFile(tb testing.TB, path string) *imaging.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, _, err := image.Decode(f)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	return imaging.FromImage(m, false)
}

func nrgba(r, g, b uint8) color.NRGBA { return color.NRGBA{r, g, b, 255} }
