package privacy

import (
	"encoding/xml"
	"image"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var loadPhoto = imagingtest.LoadPhoto

// faceTruth reads dlib's training.xml and testing.xml: image file -> face boxes.
func faceTruth(tb testing.TB) map[string][]image.Rectangle {
	tb.Helper()
	type box struct {
		Top    int `xml:"top,attr"`
		Left   int `xml:"left,attr"`
		Width  int `xml:"width,attr"`
		Height int `xml:"height,attr"`
	}
	type doc struct {
		Images []struct {
			File  string `xml:"file,attr"`
			Boxes []box  `xml:"box"`
		} `xml:"images>image"`
	}
	out := map[string][]image.Rectangle{}
	for _, name := range []string{"training.xml", "testing.xml"} {
		f, err := os.Open(testphotos.Path(tb, "privacy", "faces", name))
		if err != nil {
			tb.Fatal(err)
		}
		dec := xml.NewDecoder(f)
		dec.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
		var d doc
		err = dec.Decode(&d)
		f.Close()
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		for _, im := range d.Images {
			for _, b := range im.Boxes {
				out[im.File] = append(out[im.File], image.Rect(b.Left, b.Top, b.Left+b.Width, b.Top+b.Height))
			}
		}
	}
	return out
}

// plateTruth reads the openalpr .txt files: image file -> plate box.
func plateTruth(tb testing.TB) map[string]image.Rectangle {
	tb.Helper()
	dir := filepath.Join(testphotos.Dir(tb), "privacy", "plates")
	names, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no plate annotations in %s", dir)
	}
	out := map[string]image.Rectangle{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			tb.Fatal(err)
		}
		f := strings.Fields(string(b))
		if len(f) < 5 {
			tb.Fatalf("%s: short line", n)
		}
		v := make([]int, 4)
		for i := range v {
			if v[i], err = strconv.Atoi(f[i+1]); err != nil {
				tb.Fatalf("%s: %v", n, err)
			}
		}
		out[f[0]] = image.Rect(v[0], v[1], v[0]+v[2], v[1]+v[3])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
