package align

// Median-threshold bitmaps (Ward 2003): each bracket becomes a bitmap of "brighter
// than its own median", which is nearly the same picture at any exposure; samples
// within a small tolerance of the median are excluded as unreliable. The translation
// is found coarse to fine, doubling the previous estimate and trying the eight
// neighbours at each level.

type bitmaps struct {
	w, h      int
	tb, eb    []bool // threshold and exclusion (true = usable)
	nextLevel *bitmaps
}

// mtbTolerance is the exclusion band around the median, in encoded luma (4/255 as in
// Ward's paper).
const mtbTolerance = 4.0 / 255

func makeBitmaps(g *gray, levels int) *bitmaps {
	med := medianOf(g.pix)
	b := &bitmaps{w: g.w, h: g.h, tb: make([]bool, len(g.pix)), eb: make([]bool, len(g.pix))}
	for i, v := range g.pix {
		b.tb[i] = v > med
		b.eb[i] = v > med+mtbTolerance || v < med-mtbTolerance
	}
	if levels > 1 && g.w >= 16 && g.h >= 16 {
		b.nextLevel = makeBitmaps(g.half(), levels-1)
	}
	return b
}

// mtbShift returns the integer (dx, dy) such that src(x+dx, y+dy) best matches
// ref(x, y), searching ±(2^levels − 1) samples.
func mtbShift(ref, src *bitmaps) (int, int) {
	dx, dy := 0, 0
	if ref.nextLevel != nil && src.nextLevel != nil {
		dx, dy = mtbShift(ref.nextLevel, src.nextLevel)
		dx, dy = 2*dx, 2*dy
	}
	best, bx, by := -1, dx, dy
	for j := -1; j <= 1; j++ {
		for i := -1; i <= 1; i++ {
			e := mtbError(ref, src, dx+i, dy+j)
			if best < 0 || e < best || (e == best && abs(dx+i)+abs(dy+j) < abs(bx)+abs(by)) {
				best, bx, by = e, dx+i, dy+j
			}
		}
	}
	return bx, by
}

// mtbError counts the disagreeing usable samples for one shift, normalized to the
// overlap so that large shifts are not favoured for overlapping less.
func mtbError(ref, src *bitmaps, dx, dy int) int {
	x0, x1 := max(0, -dx), min(ref.w, src.w-dx)
	y0, y1 := max(0, -dy), min(ref.h, src.h-dy)
	if x1-x0 < 4 || y1-y0 < 4 {
		return 1 << 40
	}
	var diff, n int
	for y := y0; y < y1; y++ {
		ro := y * ref.w
		so := (y+dy)*src.w + dx
		for x := x0; x < x1; x++ {
			if ref.eb[ro+x] && src.eb[so+x] {
				n++
				if ref.tb[ro+x] != src.tb[so+x] {
					diff++
				}
			}
		}
	}
	if n == 0 {
		return 1 << 40
	}
	return diff * 1_000_000 / n
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// medianOf returns the median of values in 0..1 to within 1/4096, from a histogram.
func medianOf(v []float32) float32 {
	const bins = 4096
	var hist [bins]int
	for _, x := range v {
		hist[bin(x, bins)]++
	}
	half, seen := len(v)/2, 0
	for i, c := range hist {
		seen += c
		if seen > half {
			return (float32(i) + 0.5) / (bins - 1)
		}
	}
	return 1
}
