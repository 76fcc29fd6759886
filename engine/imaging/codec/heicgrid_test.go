package codec

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// heifTile is one coded HEVC image: its properties (whole boxes) and data.
type heifTile struct {
	props [][]byte
	data  []byte
}

// heicTile encodes a region of a photo as a single-image HEIC with ImageMagick and
// takes its coded image apart.
func heicTile(t *testing.T, src string, x, y, w, h int) heifTile {
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
	var tile heifTile
	for _, a := range it.assoc[it.primary] {
		p := it.props[a.index-1]
		payload, err := readBox(r, p, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		tile.props = append(tile.props, makeBox(p.typ, payload))
	}
	if tile.data, err = it.itemData(r, int64(len(b)), it.primary, 1<<30, nil); err != nil {
		t.Fatal(err)
	}
	// An explicit colour description (BT.709 primaries, sRGB curve, BT.601 matrix,
	// full range), as phones write on tiles and grid alike.
	tile.props = append(tile.props, makeBox("colr", []byte("nclx"), []byte{0, 1, 0, 13, 0, 6, 0x80}))
	return tile
}

// buildGrid writes a HEIC whose primary item is a rows×cols grid of the tiles (cell i
// uses tiles[i%len(tiles)], each cell its own item), with the grid data in an idat box
// and gridProps added to the grid item (an irot, say) beside the tiles' colour.
func buildGrid(rows, cols, outW, outH int, tiles []heifTile, gridProps ...[]byte) []byte {
	n := rows * cols
	// The grid describes its colour as its tiles do (as phones write it), or libheif
	// converts each tile to the grid's default.
	for _, p := range tiles[0].props {
		if typ := string(p[4:8]); typ != "hvcC" && typ != "ispe" {
			gridProps = append(gridProps, p)
		}
	}
	const gridID = 0xFFFF
	var ipco [][]byte
	propIndex := map[int]int{} // first property index of each distinct tile
	for i, tl := range tiles {
		propIndex[i] = len(ipco) + 1
		ipco = append(ipco, tl.props...)
	}
	ispe := makeBox("ispe", be32(0), be32(uint32(outW)), be32(uint32(outH)))
	gridFirst := len(ipco) + 1
	ipco = append(ipco, ispe)
	ipco = append(ipco, gridProps...)

	infes := []byte{}
	infes = append(infes, makeBox("infe", be32(2<<24), []byte{0xFF, 0xFF, 0, 0}, []byte("grid"), []byte{0})...)
	for i := 1; i <= n; i++ {
		infes = append(infes, makeBox("infe", be32(2<<24), []byte{byte(i >> 8), byte(i), 0, 0}, []byte("hvc1"), []byte{0})...)
	}
	iinf := makeBox("iinf", be32(0), []byte{byte((n + 1) >> 8), byte(n + 1)}, infes)

	dimg := []byte{0xFF, 0xFF, byte(n >> 8), byte(n)}
	for i := 1; i <= n; i++ {
		dimg = append(dimg, byte(i>>8), byte(i))
	}
	iref := makeBox("iref", be32(0), makeBox("dimg", dimg))

	ipma := []byte{}
	ipma = append(ipma, 0xFF, 0xFF, byte(1+len(gridProps)))
	for k := 0; k <= len(gridProps); k++ {
		ipma = append(ipma, byte(gridFirst+k))
	}
	for i := 1; i <= n; i++ {
		ti := (i - 1) % len(tiles)
		ipma = append(ipma, byte(i>>8), byte(i), byte(len(tiles[ti].props)))
		for k := range tiles[ti].props {
			x := byte(propIndex[ti] + k)
			if k == 0 {
				x |= 0x80 // hvcC comes first and is essential
			}
			ipma = append(ipma, x)
		}
	}
	iprp := makeBox("iprp", makeBox("ipco", ipco...), makeBox("ipma", be32(0), be32(uint32(n+1)), ipma))
	idat := makeBox("idat", []byte{0, 0, byte(rows - 1), byte(cols - 1), byte(outW >> 8), byte(outW), byte(outH >> 8), byte(outH)})

	// iloc v1: the grid in idat (method 1), each cell's tile data in mdat.
	meta := func(mdat uint32) []byte {
		loc := []byte{0x44, 0x00, byte((n + 1) >> 8), byte(n + 1)}
		loc = append(loc, 0xFF, 0xFF, 0, 1, 0, 0, 0, 1)
		loc = append(loc, be32(0)...)
		loc = append(loc, be32(8)...)
		offs := map[int]uint32{}
		o := mdat
		for i := range tiles {
			offs[i] = o
			o += uint32(len(tiles[i].data))
		}
		for i := 1; i <= n; i++ {
			ti := (i - 1) % len(tiles)
			loc = append(loc, byte(i>>8), byte(i), 0, 0, 0, 0, 0, 1)
			loc = append(loc, be32(offs[ti])...)
			loc = append(loc, be32(uint32(len(tiles[ti].data)))...)
		}
		return makeBox("meta", be32(0),
			makeBox("hdlr", be32(0), be32(0), []byte("pict"), make([]byte, 13)),
			makeBox("pitm", be32(0), []byte{0xFF, 0xFF}),
			makeBox("iloc", be32(1<<24), loc), iinf, iref, iprp, idat)
	}
	ftyp := makeBox("ftyp", []byte("heic"), be32(0), []byte("mif1heic"))
	m := meta(0)
	m = meta(uint32(len(ftyp) + len(m) + 8))
	var data []byte
	for _, tl := range tiles {
		data = append(data, tl.data...)
	}
	out := append(append(ftyp, m...), makeBox("mdat", data)...)
	return out
}

// A grid HEIC decoded tile by tile gives what libheif gives decoding it whole, also
// when the grid is rotated.
func TestScanHEICGridTileByTile(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes HEIC with ImageMagick")
	}
	src := testphotosPath(t, "brackets", "house_interior_kim", "D.jpg") // 752x500
	var tiles []heifTile
	for y := 0; y < 2; y++ {
		for x := 0; x < 3; x++ {
			tiles = append(tiles, heicTile(t, src, x*256, y*256, 256, 256))
		}
	}
	orig, _ := decodeBytes(t, readFile(t, src), DecodeOptions{})
	for name, b := range map[string][]byte{
		"upright": buildGrid(2, 3, 752, 500, tiles),
		"irot-90": buildGrid(2, 3, 752, 500, tiles, makeBox("irot", []byte{1})),
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
	b := buildGrid(8, 8, 8*512, 8*512, []heifTile{heicTile(t, src, 0, 0, 512, 512)})
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
