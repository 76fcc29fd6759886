package quality

import (
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// loadPhoto decodes a test photo into a linear image.
func loadPhoto(t testing.TB, rel ...string) *imaging.Image {
	t.Helper()
	f, err := os.Open(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, _, err := image.Decode(f)
	if err != nil {
		t.Fatalf("decode %v: %v", rel, err)
	}
	return imaging.FromImage(m, false)
}

// shrink box-averages m by an integer factor (linear light), to keep tests fast.
func shrink(m *imaging.Image, f int) *imaging.Image {
	if f <= 1 {
		return m
	}
	w, h := m.W()/f, m.H()/f
	out := imaging.New(w, h, m.C)
	inv := 1 / float32(f*f)
	for y := 0; y < h; y++ {
		dst := out.Row(y)
		for dy := 0; dy < f; dy++ {
			src := m.Row(y*f + dy)
			for x := 0; x < w; x++ {
				for dx := 0; dx < f; dx++ {
					for c := 0; c < m.C; c++ {
						dst[x*m.C+c] += src[(x*f+dx)*m.C+c] * inv
					}
				}
			}
		}
	}
	return out
}
