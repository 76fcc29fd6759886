package privacy

import (
	"math"
	"sort"
)

// Plate text analysis: a licence plate is a row of 4 to 9 separate glyphs of the same
// height on a flat background. An image is binarised against its local mean (both
// polarities: dark on light and light on dark), long lines are cut away so glyphs that
// touch a frame come loose, its connected components are measured, and chains of
// glyph-shaped components with matching heights, aligned centres and short gaps are
// text rows.

// charBlob is one connected component's bounding box and pixel count.
type charBlob struct {
	x0, y0, x1, y1 int // inclusive-exclusive box
	area           int
}

func (b charBlob) w() int        { return b.x1 - b.x0 }
func (b charBlob) h() int        { return b.y1 - b.y0 }
func (b charBlob) cy() float64   { return float64(b.y0+b.y1) / 2 }
func (b charBlob) fill() float64 { return float64(b.area) / float64(b.w()*b.h()) }

// textRow is a chain of glyphs.
type textRow struct {
	n              int // glyphs in the row
	x0, y0, x1, y1 int
	meanH          float64
	contrast       float64 // mean |pixel - local mean| of glyph pixels, grey levels
	dark           bool    // glyphs darker than the background
	heightDev      float64 // standard deviation of glyph heights over their mean
	gapFlat        float64 // share of non-glyph pixels in the row box near their median
	sumH2          float64
	sumAspect      float64 // sum of glyph width/height, for the mean
}

// glyphLimits bounds the size of a glyph in pixels.
type glyphLimits struct{ minH, maxH int }

// charScratch is reusable memory for the text analysis.
type charScratch struct {
	mean   []float32
	sums   []uint32
	fg     []bool
	labels []int32
	stack  []int32
	blobs  []charBlob
	glyphs []charBlob
}

// minStep is how far (grey levels) a glyph pixel must differ from its neighbourhood
// mean; it keeps sensor noise on flat paint out.
const minStep = 12

// findTextRow returns the longest glyph row of a w x h patch that frames a plate
// candidate; glyphs are 15-75% of the patch height.
func (cs *charScratch) findTextRow(pix []uint8, w, h int) textRow {
	var best textRow
	if w < 16 || h < 8 {
		return best
	}
	cs.localMean(pix, w, h, max(3, h/5))
	lim := glyphLimits{minH: max(6, int(0.15*float64(h))), maxH: int(0.75 * float64(h))}
	for _, dark := range []bool{true, false} {
		cs.binarize(pix, w, h, dark)
		clearLines(cs.fg, w, h, max(8, int(0.3*float64(w))), max(8, int(0.8*float64(h))))
		cs.label(w, h)
		cs.keepGlyphs(lim, w, h)
		for _, r := range cs.rows(dark, 1) {
			if r.n > best.n {
				best = r
			}
		}
		if best.n > 0 && best.dark == dark {
			best.contrast = cs.contrast(pix, w, best)
			best.gapFlat = cs.gapFlatness(pix, w, best)
		}
	}
	return best
}

// localMean fills cs.mean with the mean of the (2r+1)^2 box around each pixel.
func (cs *charScratch) localMean(pix []uint8, w, h, r int) {
	n := w * h
	if cap(cs.mean) < n {
		cs.mean = make([]float32, n)
	}
	cs.mean = cs.mean[:n]
	s := w + 1
	if cap(cs.sums) < s*(h+1) {
		cs.sums = make([]uint32, s*(h+1))
	}
	sum := cs.sums[:s*(h+1)]
	for x := 0; x <= w; x++ {
		sum[x] = 0
	}
	for y := 0; y < h; y++ {
		var acc uint32
		sum[(y+1)*s] = 0
		for x := 0; x < w; x++ {
			acc += uint32(pix[y*w+x])
			sum[(y+1)*s+x+1] = sum[y*s+x+1] + acc
		}
	}
	for y := 0; y < h; y++ {
		y0, y1 := max(0, y-r), min(h, y+r+1)
		for x := 0; x < w; x++ {
			x0, x1 := max(0, x-r), min(w, x+r+1)
			t := sum[y1*s+x1] - sum[y0*s+x1] - sum[y1*s+x0] + sum[y0*s+x0]
			cs.mean[y*w+x] = float32(t) / float32((x1-x0)*(y1-y0))
		}
	}
}

// binarize marks pixels darker (or lighter) than their local mean by minStep.
func (cs *charScratch) binarize(pix []uint8, w, h int, dark bool) {
	n := w * h
	if cap(cs.fg) < n {
		cs.fg = make([]bool, n)
		cs.labels = make([]int32, n)
	}
	cs.fg, cs.labels = cs.fg[:n], cs.labels[:n]
	for i, v := range pix {
		d := float32(v) - cs.mean[i]
		if dark {
			d = -d
		}
		cs.fg[i] = d > minStep
	}
}

// clearLines removes horizontal runs longer than maxH and vertical runs longer than
// maxV (plate frames, borders, edges of the car body), so glyphs touching them come
// loose.
func clearLines(fg []bool, w, h, maxH, maxV int) {
	for y := 0; y < h; y++ {
		row := fg[y*w : (y+1)*w]
		for x := 0; x < w; {
			if !row[x] {
				x++
				continue
			}
			e := x
			for e < w && row[e] {
				e++
			}
			if e-x > maxH {
				clear(row[x:e])
			}
			x = e
		}
	}
	for x := 0; x < w; x++ {
		for y := 0; y < h; {
			if !fg[y*w+x] {
				y++
				continue
			}
			e := y
			for e < h && fg[e*w+x] {
				e++
			}
			if e-y > maxV {
				for k := y; k < e; k++ {
					fg[k*w+x] = false
				}
			}
			y = e
		}
	}
}

// label finds the 8-connected components of cs.fg into cs.blobs.
func (cs *charScratch) label(w, h int) {
	fg, labels := cs.fg, cs.labels
	for i := range labels {
		labels[i] = -1
	}
	cs.blobs = cs.blobs[:0]
	for i := range fg {
		if !fg[i] || labels[i] >= 0 {
			continue
		}
		id := int32(len(cs.blobs))
		b := charBlob{x0: w, y0: h}
		cs.stack = append(cs.stack[:0], int32(i))
		labels[i] = id
		for len(cs.stack) > 0 {
			p := int(cs.stack[len(cs.stack)-1])
			cs.stack = cs.stack[:len(cs.stack)-1]
			x, y := p%w, p/w
			b.area++
			b.x0, b.x1 = min(b.x0, x), max(b.x1, x+1)
			b.y0, b.y1 = min(b.y0, y), max(b.y1, y+1)
			// 8-connected, so thin diagonal strokes of small glyphs hold together.
			for dy := -1; dy <= 1; dy++ {
				qy := y + dy
				if qy < 0 || qy >= h {
					continue
				}
				for dx := -1; dx <= 1; dx++ {
					qx := x + dx
					if qx < 0 || qx >= w {
						continue
					}
					if q := qy*w + qx; fg[q] && labels[q] < 0 {
						labels[q] = id
						cs.stack = append(cs.stack, int32(q))
					}
				}
			}
		}
		cs.blobs = append(cs.blobs, b)
	}
}

// keepGlyphs keeps glyph-shaped blobs in cs.glyphs, sorted by left edge: height within
// the limits, taller than wide but not a hairline, partly filled, off the border.
func (cs *charScratch) keepGlyphs(lim glyphLimits, w, h int) {
	cs.glyphs = cs.glyphs[:0]
	for _, b := range cs.blobs {
		bh, bw := float64(b.h()), float64(b.w())
		if b.h() < lim.minH || b.h() > lim.maxH {
			continue
		}
		if bw > 1.1*bh || bw < 0.08*bh {
			continue
		}
		if f := b.fill(); f < 0.15 || f > 0.92 {
			continue
		}
		if b.x0 == 0 || b.y0 == 0 || b.x1 == w || b.y1 == h {
			continue
		}
		cs.glyphs = append(cs.glyphs, b)
	}
	sort.Slice(cs.glyphs, func(i, j int) bool { return cs.glyphs[i].x0 < cs.glyphs[j].x0 })
}

// rows chains glyphs left to right: each glyph starts a chain that takes the next
// glyphs of about the same height (within 20%), centred on the same line and at most
// 1.3 heights apart. Chains with at least minN glyphs are returned, longest first; a
// glyph already inside a returned chain does not start another.
func (cs *charScratch) rows(dark bool, minN int) []textRow {
	var out []textRow
	used := make([]bool, len(cs.glyphs))
	type cand struct {
		row   textRow
		first int
	}
	var cands []cand
	for i, a := range cs.glyphs {
		ah := float64(a.h())
		row := textRow{n: 1, x0: a.x0, y0: a.y0, x1: a.x1, y1: a.y1, meanH: ah, sumH2: ah * ah,
			sumAspect: float64(a.w()) / ah, dark: dark}
		last := a
		for j := i + 1; j < len(cs.glyphs); j++ {
			b := cs.glyphs[j]
			if b.x0-last.x1 > int(1.3*ah)+1 {
				break
			}
			if math.Abs(float64(b.h())-ah) > 0.2*ah || math.Abs(b.cy()-a.cy()) > 0.2*ah {
				continue
			}
			if float64(b.x0-last.x1) < -0.1*ah {
				continue // overlapping: part of the same glyph or noise
			}
			row.n++
			row.meanH += float64(b.h())
			row.sumH2 += float64(b.h() * b.h())
			row.sumAspect += float64(b.w()) / float64(b.h())
			row.x1 = max(row.x1, b.x1)
			row.y0, row.y1 = min(row.y0, b.y0), max(row.y1, b.y1)
			last = b
		}
		if row.n >= minN {
			row.meanH /= float64(row.n)
			row.heightDev = math.Sqrt(math.Max(0, row.sumH2/float64(row.n)-row.meanH*row.meanH)) / row.meanH
			cands = append(cands, cand{row, i})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].row.n > cands[j].row.n })
	for _, c := range cands {
		if used[c.first] {
			continue
		}
		out = append(out, c.row)
		for k, g := range cs.glyphs {
			if g.x0 >= c.row.x0 && g.x1 <= c.row.x1 && g.y0 >= c.row.y0 && g.y1 <= c.row.y1 {
				used[k] = true
			}
		}
	}
	return out
}

// contrast is the mean step between glyph pixels and their local mean inside the row.
func (cs *charScratch) contrast(pix []uint8, w int, r textRow) float64 {
	var s float64
	var c int
	for y := r.y0; y < r.y1; y++ {
		for x := r.x0; x < r.x1; x++ {
			if i := y*w + x; cs.fg[i] {
				s += math.Abs(float64(pix[i]) - float64(cs.mean[i]))
				c++
			}
		}
	}
	if c == 0 {
		return 0
	}
	return s / float64(c)
}

// gapFlatness is the share of the pixels between and around the glyphs of a row (inside
// its box, not glyph pixels) within 20 grey levels of their median: the paint of a
// plate is one flat colour, the gaps of a bookshelf or a facade are not.
func (cs *charScratch) gapFlatness(pix []uint8, w int, r textRow) float64 {
	var hist [256]int
	n := 0
	for y := r.y0; y < r.y1; y++ {
		for x := r.x0; x < r.x1; x++ {
			if i := y*w + x; !cs.fg[i] {
				hist[pix[i]]++
				n++
			}
		}
	}
	return nearMedian(&hist, n, 20)
}

// nearMedian is the share of a histogram's n samples within tol of its median.
func nearMedian(hist *[256]int, n, tol int) float64 {
	if n == 0 {
		return 0
	}
	med, acc := 0, 0
	for v, c := range hist {
		acc += c
		if 2*acc >= n {
			med = v
			break
		}
	}
	near := 0
	for v := max(0, med-tol); v <= min(255, med+tol); v++ {
		near += hist[v]
	}
	return float64(near) / float64(n)
}
