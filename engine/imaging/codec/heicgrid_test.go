package codec

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/bmff"
	"github.com/porchlight/porchlight/internal/hostile"
)

// heicTile encodes a region of a photo as a single-image HEIC with ImageMagick and
// takes its coded image apart.
func heicTile(t *testing.T, src string, x, y, w, h int) hostile.HEIFTile {
	t.Helper()
	p := t.TempDir() + "/tile.heic"
	run(t, "convert", src, "-crop", fmt.Sprintf("%dx%d+%d+%d", w, h, x, y), "+repage",
		"-background", "black", "-extent", fmt.Sprintf("%dx%d", w, h), "-quality", "92", p)
	b := readFile(t, p)
	r := bytes.NewReader(b)
	it, err := parseHEIFItems(r, int64(len(b)))
	if err != nil || it.types[it.primary] != "hvc1" {
		t.Fatalf("tile HEIC: %v, primary %q", err, it.types[it.primary])
	}
	var tile hostile.HEIFTile
	for _, a := range it.assoc[it.primary] {
		p := it.props[a.index-1]
		payload, err := readBox(r, p, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		tile.Props = append(tile.Props, bmff.Box(p.typ, payload))
	}
	if tile.Data, err = it.itemData(r, int64(len(b)), it.primary, 1<<30, nil); err != nil {
		t.Fatal(err)
	}
	// An explicit colour description (BT.709 primaries, sRGB curve, BT.601 matrix,
	// full range), as phones write on tiles and grid alike.
	tile.Props = append(tile.Props, bmff.Box("colr", []byte("nclx"), []byte{0, 1, 0, 13, 0, 6, 0x80}))
	return tile
}

// A grid HEIC decoded tile by tile gives what libheif gives decoding it whole, also
// when the grid is rotated.
func TestScanHEICGridTileByTile(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes HEIC with ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "D.jpg") // 752x500
	var tiles []hostile.HEIFTile
	for y := 0; y < 2; y++ {
		for x := 0; x < 3; x++ {
			tiles = append(tiles, heicTile(t, src, x*256, y*256, 256, 256))
		}
	}
	orig, _ := decodeBytes(t, readFile(t, src), DecodeOptions{})
	for name, b := range map[string][]byte{
		"upright": hostile.HEIFGrid(2, 3, 752, 500, tiles),
		"irot-90": hostile.HEIFGrid(2, 3, 752, 500, tiles, bmff.Box("irot", []byte{1})),
	} {
		h := mustHeader(t, b)
		if h.heicGrid == nil || h.heicGrid.tileW != 256 {
			t.Fatalf("%s: not taken for a grid of 256-pixel tiles: %+v", name, h.heicGrid)
		}
		whole, _ := decodeBytes(t, b, DecodeOptions{})
		// At 200 pixels the reduction is the final resize alone, as for the reference.
		s := scanBytes(t, b, 200)
		w, ht := imaging.FitWithin(whole.W(), whole.H(), 200)
		if s.Preview.W() != w || s.Preview.H() != ht || s.Info.Width != whole.W() {
			t.Fatalf("%s: preview %s of %dx%d, whole decode %s", name, dims(s.Preview), s.Info.Width, s.Info.Height, dims(whole))
		}
		// libheif's own grid assembly moves chroma by a code or two; against the photo
		// the tiles decoded alone come out as close as the whole decode.
		ref := imaging.Resize(whole, w, ht)
		up := orig
		if name == "irot-90" {
			up = Orient(orig, 8) // irot 1 is a quarter turn anticlockwise
		}
		photo := imaging.Resize(up, w, ht)
		d, ds, dw := meanAbsDiff8(t, s.Preview, ref), meanAbsDiff8(t, s.Preview, photo), meanAbsDiff8(t, ref, photo)
		t.Logf("%s: %s; preview %.3f codes from libheif's whole decode; from the photo: preview %.3f, whole decode %.3f",
			name, dims(whole), d, ds, dw)
		if d > 0.6 || ds > dw+0.1 {
			t.Errorf("%s: tile-by-tile preview %.2f codes from the whole decode, %.2f from the photo (whole decode %.2f)", name, d, ds, dw)
		}
	}
}

// A grid of 64 tiles sharing one tile's data declares 4096x4096 pixels in 120 kB. It
// is scanned tile by tile: it declares and keeps memory for one tile at a time, not
// for the frame (a whole decode would hold about 370 MB).
func TestScanLargeHEICGridHoldsOneTile(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes HEIC with ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "D.jpg")
	b := hostile.HEIFGrid(8, 8, 8*512, 8*512, []hostile.HEIFTile{heicTile(t, src, 0, 0, 512, 512)})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := Scan(bytes.NewReader(b), int64(len(b)), ScanOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d-byte grid of %dx%d: need %.0f MB (a whole decode: %.0f MB), Go heap in use at the end %.0f MB",
		len(b), s.Info.Width, s.Info.Height, float64(s.Need)/1e6, float64(heicWholePerPixel*4096*4096)/1e6, float64(after.HeapInuse)/1e6)
	if s.Info.Width != 4096 || s.Preview.W() != 512 {
		t.Fatalf("scan %+v preview %s", s.Info, dims(s.Preview))
	}
	if s.Need > 64<<20 {
		t.Errorf("a grid scan declares %d MB", s.Need>>20)
	}
	// What the Go heap grew by from start to end: the tiles' module memories are gone.
	if grew := int64(after.HeapInuse) - int64(before.HeapInuse); grew > 64<<20 {
		t.Errorf("heap in use grew by %d MB", grew>>20)
	}
}
