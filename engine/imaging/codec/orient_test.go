package codec

import (
	"fmt"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Every EXIF orientation, written by exiftool into a real photo, must decode to what
// ImageMagick's -auto-orient shows, with width and height swapped for 5-8.
func TestOrientationAllEight(t *testing.T) {
	needTool(t, "exiftool")
	src := testphotosPath(t, "brackets", "house_interior_kim", "C.jpg")
	dir := t.TempDir()
	for o := 1; o <= 8; o++ {
		if testing.Short() && o != 6 {
			continue // TestOrientPixels checks every mapping; one real file suffices here
		}
		t.Run(fmt.Sprint(o), func(t *testing.T) {
			p := fmt.Sprintf("%s/o%d.jpg", dir, o)
			run(t, "exiftool", "-q", fmt.Sprintf("-Orientation#=%d", o), "-o", p, src)
			b := readFile(t, p)
			in := probeBytes(t, b)
			wantW, wantH := 752, 500
			if o >= 5 {
				wantW, wantH = 500, 752
			}
			if in.Orientation != o || in.Width != wantW || in.Height != wantH {
				t.Fatalf("probe = %+v, want orientation %d %dx%d", in, o, wantW, wantH)
			}
			img, m := decodeBytes(t, b, DecodeOptions{})
			if m.Orientation != o {
				t.Errorf("meta orientation %d", m.Orientation)
			}
			// A reduced decode fits the upright size and shows the same picture.
			small, _ := decodeBytes(t, b, DecodeOptions{ScaleToMaxEdge: 300})
			sw, sh := imaging.FitWithin(wantW, wantH, 300)
			if small.W() != sw || small.H() != sh {
				t.Fatalf("scaled decode %s, want %dx%d", dims(small), sw, sh)
			}
			if s := ssim(t, small, imaging.Resize(img, sw, sh)); s < 0.98 {
				t.Errorf("scaled decode SSIM %.4f against the full decode resized", s)
			}
			ref := magickPAM(t, p, "-auto-orient")
			if d := meanAbsDiff8(t, img, ref); d > 1 {
				t.Errorf("differs from ImageMagick -auto-orient by %.2f codes", d)
			}
		})
	}
}

// Orient on a tiny asymmetric image against hand-written expectations.
func TestOrientPixels(t *testing.T) {
	// 3x2 image, one channel, values 1..6 in reading order:
	//   1 2 3
	//   4 5 6
	src := newGray(3, 2, 1, 2, 3, 4, 5, 6)
	want := map[int]string{
		1: "3x2 [1 2 3 4 5 6]",
		2: "3x2 [3 2 1 6 5 4]",
		3: "3x2 [6 5 4 3 2 1]",
		4: "3x2 [4 5 6 1 2 3]",
		5: "2x3 [1 4 2 5 3 6]",
		6: "2x3 [4 1 5 2 6 3]",
		7: "2x3 [6 3 5 2 4 1]",
		8: "2x3 [3 6 2 5 1 4]",
	}
	for o := 1; o <= 8; o++ {
		got := Orient(src, o)
		if s := fmt.Sprintf("%dx%d %v", got.W(), got.H(), got.Pix); s != want[o] {
			t.Errorf("orientation %d: %s, want %s", o, s, want[o])
		}
	}
}
