package codec

import (
	"bytes"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

func TestThumbnail(t *testing.T) {
	// The Canon's EXIF thumbnail is 160x120 (4:3) for a 3:2 photo: it is letterboxed,
	// so the thumbnail comes from a DCT-scaled decode instead.
	b := readPhoto(t, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	img, err := Thumbnail(bytes.NewReader(b), int64(len(b)), 120)
	if err != nil || img.W() != 120 || img.H() != 80 {
		t.Fatalf("thumbnail %v %v", img, err)
	}

	// A photo whose EXIF thumbnail has its shape and is large enough uses it. The
	// embedded thumbnail is deliberately a different exposure so the path shows.
	needTool(t, "exiftool")
	dark, _ := decodeBytes(t, readPhoto(t, "brackets", "house_interior_kim", "A.jpg"), DecodeOptions{})
	thumb := encodeBytes(t, Orient(dark, 1), EncodeOptions{Format: "jpeg", Quality: 85})
	tp := writeTemp(t, "thumb.jpg", thumb)
	thumbSmall := run(t, "convert", tp, "-resize", "240x160", "jpg:-")
	tsp := writeTemp(t, "thumb-small.jpg", thumbSmall)
	out := t.TempDir() + "/with-thumb.jpg"
	run(t, "exiftool", "-q", "-ThumbnailImage<="+tsp, "-o", out, testphotosPath(t, "brackets", "house_interior_kim", "D.jpg"))
	withThumb := readFile(t, out)
	m, _ := ReadMeta(bytes.NewReader(withThumb), int64(len(withThumb)))
	if len(m.Thumbnail) == 0 {
		t.Fatal("fixture has no EXIF thumbnail")
	}
	small, err := Thumbnail(bytes.NewReader(withThumb), int64(len(withThumb)), 200)
	if err != nil || small.W() != 200 {
		t.Fatalf("thumbnail %v %v", small, err)
	}
	big, err := Thumbnail(bytes.NewReader(withThumb), int64(len(withThumb)), 400)
	if err != nil || big.W() != 400 {
		t.Fatalf("thumbnail %v %v", big, err)
	}
	if mean(small) > 0.6*mean(big) {
		t.Errorf("200 px thumbnail (mean %.3f) did not come from the dark embedded one (full decode mean %.3f)", mean(small), mean(big))
	}
}

func mean(m *imaging.Image) float64 {
	var s float64
	n := 0
	for y := 0; y < m.H(); y++ {
		for _, v := range m.Row(y) {
			s += float64(v)
			n++
		}
	}
	return s / float64(n)
}
