package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"io"

	"github.com/gen2brain/heic"
	"github.com/porchlight/porchlight/engine/imaging"
)

// HEIC is decoded by github.com/gen2brain/heic: libheif itself, loaded from the system
// when a shared libheif is installed and otherwise run as WebAssembly inside the
// process, so the program builds without cgo headers for HEIF and still decodes HEIC
// everywhere. The headers (size, transforms, EXIF, colour) are read here directly
// from the ISO BMFF boxes, so Probe and ReadMeta never start a decoder.

type bmffBox struct {
	typ        string
	start, end int64 // payload range in the file
}

// bmffBoxes lists the boxes in [off, end).
func bmffBoxes(r io.ReaderAt, off, end int64) ([]bmffBox, error) {
	var out []bmffBox
	var b [16]byte
	for off+8 <= end {
		if _, err := r.ReadAt(b[:8], off); err != nil {
			return nil, err
		}
		size := int64(binary.BigEndian.Uint32(b[:4]))
		typ := string(b[4:8])
		hdr := int64(8)
		switch size {
		case 0:
			size = end - off
		case 1:
			if _, err := r.ReadAt(b[8:16], off+8); err != nil {
				return nil, err
			}
			size = int64(binary.BigEndian.Uint64(b[8:16]))
			hdr = 16
		}
		if size < hdr || off+size > end {
			return nil, fmt.Errorf("box %q at %d has a bad size %d", typ, off, size)
		}
		out = append(out, bmffBox{typ: typ, start: off + hdr, end: off + size})
		if len(out) > 10000 {
			return nil, fmt.Errorf("too many boxes")
		}
		off += size
	}
	return out, nil
}

func findBox(bs []bmffBox, typ string) (bmffBox, bool) {
	for _, b := range bs {
		if b.typ == typ {
			return b, true
		}
	}
	return bmffBox{}, false
}

func readBox(r io.ReaderAt, b bmffBox, limit int64) ([]byte, error) {
	n := b.end - b.start
	if n > limit {
		return nil, fmt.Errorf("box %q of %d bytes is over %d", b.typ, n, limit)
	}
	p := make([]byte, n)
	_, err := r.ReadAt(p, b.start)
	return p, err
}

// heifMeta is what the meta box says about the primary image.
type heifMeta struct {
	width, height int // before transforms
	ops           [][4]int
	icc           []byte
	nclxPrimaries int
	exif          []byte
	alpha         bool
	depth         int // bits per channel (pixi), 0 if not given
}

// bytesReader reads big-endian fields with bounds checks, remembering the first error.
type bytesReader struct {
	b   []byte
	p   int
	bad bool
}

func (r *bytesReader) n(k int) uint64 {
	if k == 0 {
		return 0
	}
	if r.p+k > len(r.b) || k > 8 {
		r.bad = true
		return 0
	}
	var v uint64
	for i := 0; i < k; i++ {
		v = v<<8 | uint64(r.b[r.p+i])
	}
	r.p += k
	return v
}

// heifMetaBoxes answers the boxes inside the file's top-level meta box.
func heifMetaBoxes(r io.ReaderAt, size int64) ([]bmffBox, error) {
	top, err := bmffBoxes(r, 0, size)
	if err != nil {
		return nil, err
	}
	meta, ok := findBox(top, "meta")
	if !ok {
		return nil, fmt.Errorf("no meta box")
	}
	return bmffBoxes(r, meta.start+4, meta.end) // meta is a full box
}

func parseHEIFMeta(r io.ReaderAt, size int64) (*heifMeta, error) {
	kids, err := heifMetaBoxes(r, size)
	if err != nil {
		return nil, err
	}
	box := func(typ string, limit int64) (*bytesReader, bool) {
		b, ok := findBox(kids, typ)
		if !ok {
			return nil, false
		}
		p, err := readBox(r, b, limit)
		if err != nil {
			return nil, false
		}
		return &bytesReader{b: p}, true
	}
	hm := &heifMeta{}
	pr, ok := box("pitm", 64)
	if !ok {
		return nil, fmt.Errorf("no primary item")
	}
	ver := pr.n(1)
	pr.n(3)
	primary := pr.n(2)
	if ver >= 1 {
		pr.p -= 2
		primary = pr.n(4)
	}

	// Item types: find the Exif item.
	types := map[uint64]string{}
	if ib, ok := findBox(kids, "iinf"); ok {
		var hb [6]byte
		if _, err := r.ReadAt(hb[:], ib.start); err == nil {
			skip := int64(6)
			if hb[0] >= 1 {
				skip = 8
			}
			infes, _ := bmffBoxes(r, ib.start+skip, ib.end)
			for _, ie := range infes {
				if ie.typ != "infe" {
					continue
				}
				p, err := readBox(r, ie, 4096)
				if err != nil {
					continue
				}
				br := &bytesReader{b: p}
				v := br.n(1)
				br.n(3)
				if v < 2 {
					continue
				}
				id := br.n(2)
				if v >= 3 {
					br.p -= 2
					id = br.n(4)
				}
				br.n(2)
				t := br.n(4)
				if !br.bad {
					types[id] = string([]byte{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t)})
				}
			}
		}
	}

	// Item locations.
	type extent struct{ off, ln int64 }
	locs := map[uint64][]extent{}
	if lr, ok := box("iloc", 1<<20); ok {
		v := lr.n(1)
		lr.n(3)
		s := lr.n(1)
		offSize, lenSize := int(s>>4), int(s&15)
		s = lr.n(1)
		baseSize, idxSize := int(s>>4), int(s&15)
		if v < 1 {
			idxSize = 0
		}
		count := lr.n(2)
		if v >= 2 {
			lr.p -= 2
			count = lr.n(4)
		}
		for i := uint64(0); i < count && !lr.bad; i++ {
			id := lr.n(2)
			if v >= 2 {
				lr.p -= 2
				id = lr.n(4)
			}
			method := uint64(0)
			if v >= 1 {
				method = lr.n(2) & 15
			}
			lr.n(2)
			base := lr.n(baseSize)
			ne := lr.n(2)
			for j := uint64(0); j < ne && !lr.bad; j++ {
				lr.n(idxSize)
				o, l := lr.n(offSize), lr.n(lenSize)
				if method == 0 {
					locs[id] = append(locs[id], extent{int64(base + o), int64(l)})
				}
			}
		}
	}

	// Properties and their associations with the primary item.
	if ip, ok := findBox(kids, "iprp"); ok {
		ipk, _ := bmffBoxes(r, ip.start, ip.end)
		var props []bmffBox
		if co, ok := findBox(ipk, "ipco"); ok {
			props, _ = bmffBoxes(r, co.start, co.end)
		}
		// An alpha plane is an auxiliary image whose auxC names alpha; its owner is the
		// primary image in the stills this program meets.
		for _, b := range props {
			if b.typ == "auxC" {
				if p, err := readBox(r, b, 1024); err == nil && bytes.Contains(p, []byte("alpha")) {
					hm.alpha = true
				}
			}
		}
		if ma, ok := findBox(ipk, "ipma"); ok {
			p, err := readBox(r, ma, 1<<20)
			if err == nil {
				br := &bytesReader{b: p}
				v := br.n(1)
				flags := br.n(3)
				n := br.n(4)
				for i := uint64(0); i < n && !br.bad; i++ {
					id := br.n(2)
					if v >= 1 {
						br.p -= 2
						id = br.n(4)
					}
					na := br.n(1)
					for j := uint64(0); j < na && !br.bad; j++ {
						var idx uint64
						if flags&1 != 0 {
							idx = br.n(2) & 0x7fff
						} else {
							idx = br.n(1) & 0x7f
						}
						if id != primary || idx == 0 || int(idx) > len(props) {
							continue
						}
						hm.property(r, props[idx-1])
					}
				}
			}
		}
	}
	for id, t := range types {
		if t == "Exif" && len(locs[id]) > 0 {
			var data []byte
			for _, e := range locs[id] {
				if e.ln <= 0 || e.ln > maxThumbnail+1<<16 || e.off+e.ln > size || int64(len(data))+e.ln > maxThumbnail+1<<16 {
					data = nil
					break
				}
				p := make([]byte, e.ln)
				if _, err := r.ReadAt(p, e.off); err != nil {
					data = nil
					break
				}
				data = append(data, p...)
			}
			if len(data) > 4 {
				skip := int(binary.BigEndian.Uint32(data))
				if 4+skip < len(data) {
					hm.exif = data[4+skip:]
				}
			}
		}
	}
	if hm.width == 0 {
		return nil, fmt.Errorf("primary item has no size (ispe)")
	}
	return hm, nil
}

func (hm *heifMeta) property(r io.ReaderAt, b bmffBox) {
	p, err := readBox(r, b, maxICC+16)
	if err != nil {
		return
	}
	br := &bytesReader{b: p}
	switch b.typ {
	case "ispe":
		br.n(4)
		w, h := br.n(4), br.n(4)
		if !br.bad && w > 0 && h > 0 && w < 1<<30 && h < 1<<30 {
			hm.width, hm.height = int(w), int(h)
		}
	case "irot":
		if a := br.n(1) & 3; !br.bad && a != 0 {
			// a quarter turns anticlockwise, as a coordinate matrix with y down
			m := [4]int{1, 0, 0, 1}
			for i := uint64(0); i < a; i++ {
				m = mul2([4]int{0, 1, -1, 0}, m)
			}
			hm.ops = append(hm.ops, m)
		}
	case "imir":
		if ax := br.n(1) & 1; !br.bad {
			if ax == 0 {
				hm.ops = append(hm.ops, [4]int{-1, 0, 0, 1}) // about the vertical axis
			} else {
				hm.ops = append(hm.ops, [4]int{1, 0, 0, -1})
			}
		}
	case "colr":
		switch string(p[:min(4, len(p))]) {
		case "prof", "rICC":
			if hm.icc == nil {
				hm.icc = p[4:]
			}
		case "nclx":
			br.n(4)
			hm.nclxPrimaries = int(br.n(2))
		}
	case "pixi":
		br.n(4)
		if n := br.n(1); n > 0 {
			if d := br.n(1); !br.bad && d > 0 && d <= 16 {
				hm.depth = int(d)
			}
		}
	}
}

func mul2(a, b [4]int) [4]int {
	return [4]int{a[0]*b[0] + a[1]*b[2], a[0]*b[1] + a[1]*b[3], a[2]*b[0] + a[3]*b[2], a[2]*b[1] + a[3]*b[3]}
}

// exifOrientationMatrix are the stored -> displayed coordinate maps of EXIF 1-8.
var exifOrientationMatrix = [9][4]int{
	{}, {1, 0, 0, 1}, {-1, 0, 0, 1}, {-1, 0, 0, -1}, {1, 0, 0, -1},
	{0, 1, 1, 0}, {0, -1, 1, 0}, {0, -1, -1, 0}, {0, 1, -1, 0},
}

func probeHEIC(r io.ReaderAt, size int64) (*header, error) {
	hm, err := parseHEIFMeta(r, size)
	if err != nil {
		return nil, unreadable(err, "reading HEIC boxes")
	}
	h := &header{width: hm.width, height: hm.height, bitDepth: max(8, hm.depth), model: "rgb", icc: hm.icc,
		hasAlpha: hm.alpha, rotated: true}
	if hm.exif != nil {
		exifFromBlock(hm.exif, &h.meta)
	}
	m := [4]int{1, 0, 0, 1}
	for _, op := range hm.ops {
		m = mul2(op, m)
	}
	h.orientation = 1
	for o := 1; o <= 8; o++ {
		if exifOrientationMatrix[o] == m {
			h.orientation = o
		}
	}
	if h.orientation >= 5 {
		h.width, h.height = h.height, h.width
	}
	if h.icc == nil {
		h.profile = nclxProfile(hm.nclxPrimaries)
	}
	// A grid the scan cannot take apart is decoded whole, within maxHEVCPixels.
	if g, err := parseHEIFGrid(r, size); err == nil && g != nil {
		sw, sh := h.width, h.height
		if h.orientation >= 5 {
			sw, sh = sh, sw
		}
		if g.outW == sw && g.outH == sh {
			h.heicGrid = g
		}
	}
	return h, nil
}

// nclxProfile builds the profile of coded primaries (ITU-T H.273) other than BT.709,
// assuming the sRGB tone curve that HEIC stills use.
func nclxProfile(primaries int) *iccProfile {
	var m [9]float64
	var name string
	switch primaries {
	case 12:
		m, name = primariesD50(0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290), "Display P3"
	case 9:
		m, name = primariesD50(0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290), "BT.2020"
	default:
		return nil
	}
	c := iccCurve{para: []float64{2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045, 0, 0}, ptype: 3}
	return &iccProfile{Description: name, ColorSpace: "RGB ", toXYZ: m, trc: [3]iccCurve{c, c, c}, hasMatrix: true}
}

func decodeHEIC(r io.ReaderAt, size int64, h *header) (*imaging.Image, error) {
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, unreadable(err, "reading HEIC")
	}
	m, err := heicDecode(data)
	if err != nil {
		return nil, unreadable(err, "decoding HEIC")
	}
	img := fromGoImage(m, h)
	if img.W() != h.width || img.H() != h.height {
		return nil, unreadable(nil, "HEIC decoded to %dx%d, its header says %dx%d", img.W(), img.H(), h.width, h.height)
	}
	return img, nil
}

// scanHEIC decodes a grid tile by tile (see heicgrid.go) and a single image whole, in
// libheif, streaming the rows through a box reduction either way, so no full-size
// float copy is made.
func scanHEIC(r io.ReaderAt, size int64, h *header, edge int) (*imaging.Image, error) {
	c := 3
	if h.hasAlpha {
		c = 4
	}
	lut := linearLUT8(fitting(h))
	if g := h.heicGrid; g != nil && !h.hasAlpha { // an alpha plane is a grid of its own
		tw, th := fitStored(g.outW, g.outH, h.orientation, edge)
		red := newReducer(g.outW, g.outH, tw, th, false)
		line := make([]float32, g.tileW*3)
		rgb := make([]byte, g.tileW*4)
		var buf []byte
		for i, tile := range g.tiles {
			f, err := g.tileFile(r, size, tile, buf)
			if err != nil {
				return nil, unreadable(err, "reading HEIC grid tile %d", i)
			}
			buf = f[:0]
			m, err := heicDecode(f)
			if err != nil {
				return nil, unreadable(err, "decoding HEIC grid tile %d", i)
			}
			b := m.Bounds()
			if b.Dx() != g.tileW || b.Dy() != g.tileH {
				return nil, unreadable(nil, "HEIC grid tile %d decoded to %dx%d, not %dx%d", i, b.Dx(), b.Dy(), g.tileW, g.tileH)
			}
			x0, y0 := (i%g.cols)*g.tileW, (i/g.cols)*g.tileH
			vis := min(g.tileW, g.outW-x0)
			for y := 0; y < g.tileH && y0+y < g.outH; y++ {
				goRowRGBA(m, b.Min.Y+y, rgb)
				row8ToLinear(rgb[:vis*4], 4, line[:vis*3], 3, lut)
				red.add(y0+y, x0, 1, line[:vis*3])
			}
		}
		img := Orient(red.image(), h.orientation) // the grid's irot and imir
		profileMatrix(img, h)
		return img, nil
	}
	if px := int64(h.width) * int64(h.height); px > maxHEVCPixels {
		return nil, &Error{Code: CodeResolutionTooLarge, Reason: fmt.Sprintf(
			"a single HEIC image of %dx%d is larger than HEVC allows (%.1f megapixels); tiled HEICs, as phones write them, may be larger",
			h.width, h.height, float64(maxHEVCPixels)/1e6)}
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && err != io.EOF {
		return nil, unreadable(err, "reading HEIC")
	}
	m, err := heicDecode(data)
	data = nil
	if err != nil {
		return nil, unreadable(err, "decoding HEIC")
	}
	b := m.Bounds()
	if b.Dx() != h.width || b.Dy() != h.height {
		return nil, unreadable(nil, "HEIC decoded to %dx%d, its header says %dx%d", b.Dx(), b.Dy(), h.width, h.height)
	}
	tw, th := imaging.FitWithin(h.width, h.height, edge)
	red := newReducer(b.Dx(), b.Dy(), tw, th, c == 4)
	line := make([]float32, b.Dx()*c)
	rgb := make([]byte, b.Dx()*4)
	for y := 0; y < b.Dy(); y++ {
		goRowRGBA(m, b.Min.Y+y, rgb)
		row8ToLinear(rgb, 4, line, c, lut)
		red.add(y, 0, 1, line)
	}
	img := red.image()
	profileMatrix(img, h)
	return img, nil
}

// heicDecode runs libheif on a whole HEIC file. The WebAssembly build of
// github.com/gen2brain/heic frees its output buffer before returning a view of it,
// and the module's allocator then writes 24 bytes of bookkeeping over the start of the
// first row (deterministically, on every decode); those samples are taken from the
// second row instead. A system libheif has no such defect.
func heicDecode(data []byte) (image.Image, error) {
	m, err := heic.Decode(bytes.NewReader(data))
	if err != nil || heic.Dynamic() == nil {
		return m, err
	}
	const damaged = 24
	switch s := m.(type) {
	case *image.YCbCr:
		if s.Rect.Dy() > 1 {
			n := min(damaged, s.YStride, s.Rect.Dx())
			copy(s.Y[:n], s.Y[s.YStride:s.YStride+n])
		}
	case *image.NRGBA:
		repairHead(s.Pix, s.Stride, s.Rect.Dy(), damaged)
	case *image.RGBA:
		repairHead(s.Pix, s.Stride, s.Rect.Dy(), damaged)
	case *image.Gray:
		repairHead(s.Pix, s.Stride, s.Rect.Dy(), damaged)
	}
	return m, nil
}

func repairHead(pix []byte, stride, rows, n int) {
	if rows > 1 {
		n = min(n, stride)
		copy(pix[:n], pix[stride:stride+n])
	}
}

// goRowRGBA writes row y of m as straight 8-bit RGBA, with fast paths for what the
// HEIC decoder returns.
func goRowRGBA(m image.Image, y int, out []byte) {
	b := m.Bounds()
	w := b.Dx()
	switch s := m.(type) {
	case *image.YCbCr:
		for x := 0; x < w; x++ {
			yi, ci := s.YOffset(b.Min.X+x, y), s.COffset(b.Min.X+x, y)
			o := out[x*4 : x*4+4 : x*4+4]
			o[0], o[1], o[2] = color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
			o[3] = 255
		}
	case *image.NRGBA:
		copy(out, s.Pix[s.PixOffset(b.Min.X, y):][:w*4])
	case *image.RGBA: // premultiplied: opaque pixels are straight already
		copy(out, s.Pix[s.PixOffset(b.Min.X, y):][:w*4])
		for x := 0; x < w; x++ {
			o := out[x*4 : x*4+4 : x*4+4]
			if a := uint32(o[3]); a != 255 && a != 0 {
				o[0] = uint8(min(255, (uint32(o[0])*255+a/2)/a))
				o[1] = uint8(min(255, (uint32(o[1])*255+a/2)/a))
				o[2] = uint8(min(255, (uint32(o[2])*255+a/2)/a))
			}
		}
	case *image.Gray:
		p := s.Pix[s.PixOffset(b.Min.X, y):][:w]
		for x, v := range p {
			out[x*4], out[x*4+1], out[x*4+2], out[x*4+3] = v, v, v, 255
		}
	default:
		for x := 0; x < w; x++ {
			c := color.NRGBAModel.Convert(m.At(b.Min.X+x, y)).(color.NRGBA)
			out[x*4], out[x*4+1], out[x*4+2], out[x*4+3] = c.R, c.G, c.B, c.A
		}
	}
}
