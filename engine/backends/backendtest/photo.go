package backendtest

import (
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// PhotoPath is the real photo the backend tests edit: a furnished dining room.
var PhotoPath = []string{"brackets", "house_interior_kim", "B.jpg"}

// Photo decodes the test photo fitted within maxEdge pixels (linear light, 3
// channels); it skips the test when the photos are absent.
func Photo(t testing.TB, maxEdge int) *imaging.Image {
	t.Helper()
	p := testphotos.Path(t, PhotoPath...)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	img, _, err := codec.Decode(f, st.Size(), codec.DecodeOptions{ScaleToMaxEdge: maxEdge})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// RectMask returns a w×h coverage mask marking the rectangle [x0,x1)×[y0,y1).
func RectMask(w, h, x0, y0, x1, y1 int) *imaging.Image {
	m := imaging.New(w, h, 1)
	for y := max(y0, 0); y < min(y1, h); y++ {
		row := m.Row(y)
		for x := max(x0, 0); x < min(x1, w); x++ {
			row[x] = 1
		}
	}
	return m
}

// Spec parses a backend config for tests, failing the test on an error.
func Spec(t testing.TB, name string, raw map[string]any) backends.Spec {
	t.Helper()
	s, err := backends.ParseSpec(name, raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
