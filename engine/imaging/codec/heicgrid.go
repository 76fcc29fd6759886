package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/porchlight/porchlight/internal/bmff"
)

// Phone HEICs are grids: the primary item is a 'grid' of HEVC tiles (512×512 on an
// iPhone), each its own coded image. libheif decodes a whole file into one frame, in
// WebAssembly memory that grows by copying (about 20 bytes a pixel at its peak), so a
// grid of a few kB can declare 120 MP and cost gigabytes. A scan therefore decodes a
// grid one tile at a time: each tile is repackaged as a HEIF file of its own (its
// coded data and properties, unchanged) and decoded alone, and its rows go into the
// box reduction. Only a single-image HEIC is decoded whole, and HEVC's largest level
// bounds that image (maxHEVCPixels).

// maxHEVCPixels is the largest picture of HEVC's highest level (6.2): 35,651,584 luma
// samples. Encoders keep to it; a single-image HEIC declaring more is refused rather
// than decoded whole.
const maxHEVCPixels = 35_651_584

// heicWholePerPixel is what decoding a whole HEIC image holds at its peak, in bytes a
// pixel (measured: the decoder's frames, libheif's image, the output copy, and the
// module memory's copies as it grows).
const heicWholePerPixel = 22

// heifItemLoc is where an item's data lies: extents in the file (method 0) or in the
// meta box's idat (method 1).
type heifItemLoc struct {
	method  int
	extents [][2]int64 // offset, length
}

type heifAssoc struct {
	index     int // 1-based into the ipco properties
	essential bool
}

// heifGrid is a grid primary image: its tiles in row-major order.
type heifGrid struct {
	rows, cols   int
	outW, outH   int // the grid's stored size (before irot/imir)
	tileW, tileH int
	tiles        []uint32
	items        *heifItems
	maxTileBytes int64 // the largest tile's coded data
}

// heifItems is the item structure of a HEIF meta box.
type heifItems struct {
	primary uint32
	types   map[uint32]string
	locs    map[uint32]heifItemLoc
	idat    bmffBox
	hasIdat bool
	props   []bmffBox
	assoc   map[uint32][]heifAssoc
	dimg    map[uint32][]uint32 // derived image references: grid -> tiles
}

func parseHEIFItems(r io.ReaderAt, size int64) (*heifItems, error) {
	kids, err := heifMetaBoxes(r, size)
	if err != nil {
		return nil, err
	}
	it := &heifItems{types: map[uint32]string{}, locs: map[uint32]heifItemLoc{},
		assoc: map[uint32][]heifAssoc{}, dimg: map[uint32][]uint32{}}
	read := func(b bmffBox, limit int64) (*bytesReader, error) {
		p, err := readBox(r, b, limit)
		if err != nil {
			return nil, err
		}
		return &bytesReader{b: p}, nil
	}
	id := func(br *bytesReader, wide bool) uint32 {
		if wide {
			return uint32(br.n(4))
		}
		return uint32(br.n(2))
	}
	for _, k := range kids {
		switch k.typ {
		case "pitm":
			br, err := read(k, 64)
			if err != nil {
				return nil, err
			}
			v := br.n(1)
			br.n(3)
			it.primary = id(br, v >= 1)
		case "idat":
			it.idat, it.hasIdat = k, true
		case "iinf":
			var hb [6]byte
			if _, err := r.ReadAt(hb[:], k.start); err != nil {
				return nil, err
			}
			skip := int64(6)
			if hb[0] >= 1 {
				skip = 8
			}
			infes, err := bmffBoxes(r, k.start+skip, k.end)
			if err != nil {
				return nil, err
			}
			for _, ie := range infes {
				if ie.typ != "infe" {
					continue
				}
				br, err := read(ie, 4096)
				if err != nil {
					return nil, err
				}
				v := br.n(1)
				br.n(3)
				if v < 2 {
					continue
				}
				iid := id(br, v >= 3)
				br.n(2)
				t := br.n(4)
				if !br.bad {
					it.types[iid] = string([]byte{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t)})
				}
			}
		case "iloc":
			br, err := read(k, 16<<20)
			if err != nil {
				return nil, err
			}
			v := br.n(1)
			br.n(3)
			s := br.n(1)
			offSize, lenSize := int(s>>4), int(s&15)
			s = br.n(1)
			baseSize, idxSize := int(s>>4), int(s&15)
			if v < 1 {
				idxSize = 0
			}
			count := uint64(id(br, v >= 2))
			for i := uint64(0); i < count && !br.bad; i++ {
				iid := id(br, v >= 2)
				loc := heifItemLoc{}
				if v >= 1 {
					loc.method = int(br.n(2) & 15)
				}
				br.n(2)
				base := int64(br.n(baseSize))
				ne := br.n(2)
				for j := uint64(0); j < ne && !br.bad; j++ {
					br.n(idxSize)
					o, l := int64(br.n(offSize)), int64(br.n(lenSize))
					loc.extents = append(loc.extents, [2]int64{base + o, l})
				}
				it.locs[iid] = loc
			}
			if br.bad {
				return nil, fmt.Errorf("iloc box is truncated")
			}
		case "iref":
			var hb [4]byte
			if _, err := r.ReadAt(hb[:], k.start); err != nil {
				return nil, err
			}
			wide := hb[0] >= 1
			refs, err := bmffBoxes(r, k.start+4, k.end)
			if err != nil {
				return nil, err
			}
			for _, rb := range refs {
				if rb.typ != "dimg" {
					continue
				}
				br, err := read(rb, 1<<20)
				if err != nil {
					return nil, err
				}
				from := id(br, wide)
				n := br.n(2)
				for j := uint64(0); j < n && !br.bad; j++ {
					it.dimg[from] = append(it.dimg[from], id(br, wide))
				}
			}
		case "iprp":
			ipk, err := bmffBoxes(r, k.start, k.end)
			if err != nil {
				return nil, err
			}
			if co, ok := findBox(ipk, "ipco"); ok {
				if it.props, err = bmffBoxes(r, co.start, co.end); err != nil {
					return nil, err
				}
			}
			ma, ok := findBox(ipk, "ipma")
			if !ok {
				continue
			}
			br, err := read(ma, 16<<20)
			if err != nil {
				return nil, err
			}
			v := br.n(1)
			flags := br.n(3)
			n := br.n(4)
			for i := uint64(0); i < n && !br.bad; i++ {
				iid := id(br, v >= 1)
				na := br.n(1)
				for j := uint64(0); j < na && !br.bad; j++ {
					a := heifAssoc{}
					if flags&1 != 0 {
						x := br.n(2)
						a.index, a.essential = int(x&0x7fff), x&0x8000 != 0
					} else {
						x := br.n(1)
						a.index, a.essential = int(x&0x7f), x&0x80 != 0
					}
					if a.index > 0 && a.index <= len(it.props) {
						it.assoc[iid] = append(it.assoc[iid], a)
					}
				}
			}
		}
	}
	return it, nil
}

// itemData reads an item's data, at most limit bytes.
func (it *heifItems) itemData(r io.ReaderAt, size int64, iid uint32, limit int64, dst []byte) ([]byte, error) {
	loc, ok := it.locs[iid]
	if !ok {
		return nil, fmt.Errorf("item %d has no location", iid)
	}
	dst = dst[:0]
	for _, e := range loc.extents {
		off, n := e[0], e[1]
		end := size
		switch loc.method {
		case 0:
		case 1:
			if !it.hasIdat {
				return nil, fmt.Errorf("item %d lies in a missing idat box", iid)
			}
			off += it.idat.start
			end = it.idat.end
		default:
			return nil, fmt.Errorf("item %d uses construction method %d", iid, loc.method)
		}
		if n <= 0 || off < 0 || off+n > end || int64(len(dst))+n > limit {
			return nil, fmt.Errorf("item %d has an extent of %d bytes at %d outside the file", iid, n, off)
		}
		k := len(dst)
		dst = append(dst, make([]byte, n)...)
		if _, err := r.ReadAt(dst[k:], off); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// property returns the payload of an item's first property of type typ.
func (it *heifItems) property(r io.ReaderAt, iid uint32, typ string) ([]byte, bool) {
	for _, a := range it.assoc[iid] {
		if p := it.props[a.index-1]; p.typ == typ {
			b, err := readBox(r, p, 1<<20)
			return b, err == nil
		}
	}
	return nil, false
}

// maxGridTiles bounds the tiles of a grid: 256 rows and columns at most.
const maxGridTiles = 256 * 256

// parseHEIFGrid returns the primary image's grid, or nil when the primary image is not
// a grid of HEVC tiles.
func parseHEIFGrid(r io.ReaderAt, size int64) (*heifGrid, error) {
	it, err := parseHEIFItems(r, size)
	if err != nil {
		return nil, err
	}
	if it.types[it.primary] != "grid" {
		return nil, nil
	}
	d, err := it.itemData(r, size, it.primary, 64, nil)
	if err != nil {
		return nil, err
	}
	br := &bytesReader{b: d}
	br.n(1)
	flags := br.n(1)
	g := &heifGrid{rows: int(br.n(1)) + 1, cols: int(br.n(1)) + 1, items: it}
	fw := 2
	if flags&1 != 0 {
		fw = 4
	}
	g.outW, g.outH = int(br.n(fw)), int(br.n(fw))
	if br.bad || g.outW <= 0 || g.outH <= 0 {
		return nil, fmt.Errorf("grid item data is malformed")
	}
	g.tiles = it.dimg[it.primary]
	if len(g.tiles) != g.rows*g.cols || len(g.tiles) > maxGridTiles {
		return nil, fmt.Errorf("grid of %dx%d lists %d tiles", g.rows, g.cols, len(g.tiles))
	}
	for _, t := range g.tiles {
		if it.types[t] != "hvc1" {
			return nil, fmt.Errorf("grid tile %d is a %q item, not HEVC", t, it.types[t])
		}
		var n int64
		for _, e := range it.locs[t].extents {
			n += max(e[1], 0)
		}
		g.maxTileBytes = max(g.maxTileBytes, n)
	}
	p, ok := it.property(r, g.tiles[0], "ispe")
	if !ok || len(p) < 12 {
		return nil, fmt.Errorf("grid tile has no size (ispe)")
	}
	g.tileW, g.tileH = int(binary.BigEndian.Uint32(p[4:8])), int(binary.BigEndian.Uint32(p[8:12]))
	if g.tileW <= 0 || g.tileH <= 0 || g.tileW > 1<<14 || g.tileH > 1<<14 ||
		g.tileW*g.cols < g.outW || g.tileH*g.rows < g.outH {
		return nil, fmt.Errorf("grid tiles of %dx%d do not cover %dx%d", g.tileW, g.tileH, g.outW, g.outH)
	}
	return g, nil
}

// tileFile repackages one tile as a HEIF file of its own: the tile's properties and
// coded data under a minimal meta box. libheif returns the same samples for it as for
// that tile of the whole grid. buf is reused.
func (g *heifGrid) tileFile(r io.ReaderAt, size int64, tile uint32, buf []byte) ([]byte, error) {
	it := g.items
	var props, assoc []byte
	n := 0
	for _, a := range it.assoc[tile] {
		p := it.props[a.index-1]
		b, err := readBox(r, p, 1<<20)
		if err != nil {
			return nil, err
		}
		props = append(props, bmff.Box(p.typ, b)...)
		n++
		x := byte(n)
		if a.essential {
			x |= 0x80
		}
		assoc = append(assoc, x)
	}
	if n == 0 || n > 127 {
		return nil, fmt.Errorf("grid tile %d has %d properties", tile, n)
	}
	data, err := it.itemData(r, size, tile, 64<<20, buf)
	if err != nil {
		return nil, err
	}
	ftyp := bmff.Box("ftyp", []byte("heic"), bmff.BE32(0), []byte("mif1heic"))
	meta := func(dataOff uint32) []byte {
		return bmff.Box("meta", bmff.BE32(0),
			bmff.Box("hdlr", bmff.BE32(0), bmff.BE32(0), []byte("pict"), make([]byte, 13)),
			bmff.Box("pitm", bmff.BE32(0), []byte{0, 1}),
			bmff.Box("iloc", bmff.BE32(0), []byte{0x44, 0x00, 0, 1, 0, 1, 0, 0, 0, 1}, bmff.BE32(dataOff), bmff.BE32(uint32(len(data)))),
			bmff.Box("iinf", bmff.BE32(0), []byte{0, 1}, bmff.Box("infe", bmff.BE32(2<<24), []byte{0, 1, 0, 0}, []byte("hvc1"), []byte{0})),
			bmff.Box("iprp", bmff.Box("ipco", props), bmff.Box("ipma", bmff.BE32(0), bmff.BE32(1), []byte{0, 1, byte(n)}, assoc)))
	}
	m := meta(0)
	m = meta(uint32(len(ftyp) + len(m) + 8))
	var out bytes.Buffer
	out.Grow(len(ftyp) + len(m) + 8 + len(data))
	out.Write(ftyp)
	out.Write(m)
	out.Write(bmff.BE32(uint32(8 + len(data))))
	out.WriteString("mdat")
	out.Write(data)
	return out.Bytes(), nil
}
