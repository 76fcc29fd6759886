package hostile

import (
	"encoding/hex"

	"github.com/porchlight/porchlight/internal/bmff"
)

// HEIFTile is one coded HEVC image of a HEIF file: its property boxes (whole, hvcC
// first) and its coded data.
type HEIFTile struct {
	Props [][]byte
	Data  []byte
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// FlatTile is a 512×512 mid-grey HEVC image as ImageMagick encodes it (a 570-byte HEIC
// of its own): its hvcC, ispe and pixi properties and 214 bytes of coded data.
func FlatTile() HEIFTile {
	return HEIFTile{
		Props: [][]byte{
			bmff.Box("hvcC", mustHex("0103700000000000000000005af000fcfdf8f800000f03200001001840010c01ffff03700000030090000003000003005aba0240210001002942010103700000030090000003000003005aa004020080596ea4929ae6c0800000030080000003008422000100074401c172b06240")),
			bmff.Box("ispe", mustHex("000000000000020000000200")),
			bmff.Box("pixi", mustHex("0000000003080808")),
		},
		Data: mustHex("000000d22801af131068d961859552e596d1cffe251fcc2f6e8a91748d58cfd37b95a69c800020c0003ac00258000003002620a2f72b4d3900002f80004c800280000003000003000003002060930000cb00057000000300000300000300000300000300e58087000003000003000003000003000003000003000003009880000003000003000003000003000003000003000003017b000003000003000003000003000003000003000049c0000003000003000003000003000003000003000316000003000003000003000003000003000003000b38"),
	}
}

// HEICGrid returns a complete HEIC whose primary image is a rows×cols grid of flat grey
// 512×512 tiles, every cell its own item over one shared coded tile: 21×21 declares
// 10752×10752 pixels in about 20 kB.
func HEICGrid(rows, cols int) []byte {
	return HEIFGrid(rows, cols, cols*512, rows*512, []HEIFTile{FlatTile()})
}

// HEIFGrid writes a HEIC whose primary item is a rows×cols grid of outW×outH (cell i
// uses tiles[i%len(tiles)], each cell its own item), with the grid data in an idat
// box and gridProps added to the grid item (an irot, say) beside the tiles' own
// properties other than hvcC and ispe (their colour, as phones write it; without it
// libheif converts each tile to the grid's default colour).
func HEIFGrid(rows, cols, outW, outH int, tiles []HEIFTile, gridProps ...[]byte) []byte {
	n := rows * cols
	for _, p := range tiles[0].Props {
		if typ := string(p[4:8]); typ != "hvcC" && typ != "ispe" {
			gridProps = append(gridProps, p)
		}
	}
	const gridID = 0xFFFF
	var ipco [][]byte
	first := make([]int, len(tiles)) // index of each tile's first property
	for i, tl := range tiles {
		first[i] = len(ipco) + 1
		ipco = append(ipco, tl.Props...)
	}
	gridFirst := len(ipco) + 1
	ipco = append(ipco, bmff.Box("ispe", bmff.BE32(0), bmff.BE32(uint32(outW)), bmff.BE32(uint32(outH))))
	ipco = append(ipco, gridProps...)

	u16 := func(v int) []byte { return []byte{byte(v >> 8), byte(v)} }
	infes := bmff.Box("infe", bmff.BE32(2<<24), u16(gridID), u16(0), []byte("grid"), []byte{0})
	for i := 1; i <= n; i++ {
		infes = append(infes, bmff.Box("infe", bmff.BE32(2<<24), u16(i), u16(0), []byte("hvc1"), []byte{0})...)
	}
	iinf := bmff.Box("iinf", bmff.BE32(0), u16(n+1), infes)

	dimg := append(u16(gridID), u16(n)...)
	for i := 1; i <= n; i++ {
		dimg = append(dimg, u16(i)...)
	}
	iref := bmff.Box("iref", bmff.BE32(0), bmff.Box("dimg", dimg))

	ipma := append(u16(gridID), byte(1+len(gridProps)))
	for k := 0; k <= len(gridProps); k++ {
		ipma = append(ipma, byte(gridFirst+k))
	}
	for i := 1; i <= n; i++ {
		ti := (i - 1) % len(tiles)
		ipma = append(append(ipma, u16(i)...), byte(len(tiles[ti].Props)))
		for k := range tiles[ti].Props {
			x := byte(first[ti] + k)
			if k == 0 {
				x |= 0x80 // hvcC is essential
			}
			ipma = append(ipma, x)
		}
	}
	iprp := bmff.Box("iprp", bmff.Box("ipco", ipco...), bmff.Box("ipma", bmff.BE32(0), bmff.BE32(uint32(n+1)), ipma))
	idat := bmff.Box("idat", []byte{0, 0, byte(rows - 1), byte(cols - 1)}, u16(outW), u16(outH))

	// iloc version 1: the grid in idat (construction method 1), the cells in mdat.
	meta := func(mdat uint32) []byte {
		loc := append([]byte{0x44, 0x00}, u16(n+1)...)
		loc = append(append(loc, u16(gridID)...), 0, 1, 0, 0, 0, 1)
		loc = append(append(loc, bmff.BE32(0)...), bmff.BE32(8)...)
		offs := make([]uint32, len(tiles))
		o := mdat
		for i, tl := range tiles {
			offs[i] = o
			o += uint32(len(tl.Data))
		}
		for i := 1; i <= n; i++ {
			ti := (i - 1) % len(tiles)
			loc = append(append(loc, u16(i)...), 0, 0, 0, 0, 0, 1)
			loc = append(append(loc, bmff.BE32(offs[ti])...), bmff.BE32(uint32(len(tiles[ti].Data)))...)
		}
		return bmff.Box("meta", bmff.BE32(0),
			bmff.Box("hdlr", bmff.BE32(0), bmff.BE32(0), []byte("pict"), make([]byte, 13)),
			bmff.Box("pitm", bmff.BE32(0), u16(gridID)),
			bmff.Box("iloc", bmff.BE32(1<<24), loc), iinf, iref, iprp, idat)
	}
	ftyp := bmff.Box("ftyp", []byte("heic"), bmff.BE32(0), []byte("mif1heic"))
	m := meta(0)
	m = meta(uint32(len(ftyp) + len(m) + 8))
	var data []byte
	for _, tl := range tiles {
		data = append(data, tl.Data...)
	}
	return append(append(ftyp, m...), bmff.Box("mdat", data)...)
}
