package privacy

// gray is an 8-bit single-channel image (sRGB-encoded luma, as the cascades were
// trained on), row-major without padding.
type gray struct {
	w, h int
	pix  []uint8
}

func (g *gray) row(y int) []uint8 { return g.pix[y*g.w : (y+1)*g.w] }

// integrals holds the summed-area tables of one pyramid level, each (w+1) x (h+1) (rows
// stride entries apart) with a
// zero first row and column. Sums use uint32 with wrap-around: a rectangle sum is a
// difference of four entries, exact modulo 2^32, and every window sum the cascades
// read (at most 256x256 pixels of 255, squared) fits in 32 bits.
type integrals struct {
	w, h   int // image size
	stride int // entries per table row, at least w+1
	sum    []uint32
	sq     []uint32
	tilted []uint32 // 45-degree rotated sums, only when a cascade needs them

	// scratch for the tilted table
	d1, d2, rowPrefix []uint32
}

// ensure sizes the tables for a w x h image, reusing the buffers when they are large
// enough, so a worker allocates once for its largest level.
func (it *integrals) ensure(w, h, stride int, tilted bool) {
	it.w, it.h, it.stride = w, h, stride
	n := stride * (h + 1)
	it.sum = grow(it.sum, n)
	it.sq = grow(it.sq, n)
	if tilted {
		it.tilted = grow(it.tilted, n)
		it.d1 = grow(it.d1, w+h+2)
		it.d2 = grow(it.d2, w+h+2)
		it.rowPrefix = grow(it.rowPrefix, w+1)
	}
}

func grow(b []uint32, n int) []uint32 {
	if cap(b) < n {
		return make([]uint32, n)
	}
	return b[:n]
}

// compute fills the sum and squared-sum tables, and the tilted table when withTilted.
//
// The tilted table follows OpenCV: T(X, Y) is the sum of pixels (x, y) with y < Y and
// |x - X + 1| <= Y - 1 - y, a cone opening upwards from (X-1, Y-1). Row y contributes
// P_y(X+Y-1-y) - P_y(X-Y+y), with P_y the clamped prefix sum of row y, so two running
// sums along the diagonals a = X+Y-1 and b = X-Y give T = D1[a] - D2[b] in O(w+h) per
// row without the usual boundary special cases.
func (it *integrals) compute(g *gray, withTilted bool) {
	it.computeStride(g, g.w+1, withTilted)
}

// computeStride is compute with rows stride entries apart (stride > g.w). Local scans
// use one fixed stride for every region so that the cascades' feature offsets, which
// depend on it, are computed once per worker rather than once per region.
func (it *integrals) computeStride(g *gray, stride int, withTilted bool) {
	w, h, s := g.w, g.h, stride
	it.ensure(w, h, stride, withTilted)
	sum, sq := it.sum, it.sq
	for x := 0; x <= w; x++ {
		sum[x], sq[x] = 0, 0
	}
	for y := 0; y < h; y++ {
		row := g.row(y)
		prev, cur := (y)*s, (y+1)*s
		sum[cur], sq[cur] = 0, 0
		var rs, rq uint32
		for x, v := range row {
			rs += uint32(v)
			rq += uint32(v) * uint32(v)
			sum[cur+x+1] = sum[prev+x+1] + rs
			sq[cur+x+1] = sq[prev+x+1] + rq
		}
	}
	if !withTilted {
		return
	}
	t, d1, d2, p := it.tilted, it.d1[:w+h+1], it.d2[:w+h+1], it.rowPrefix
	clear(d1)
	clear(d2)
	for x := 0; x <= w; x++ {
		t[x] = 0
	}
	for y := 0; y < h; y++ {
		row := g.row(y)
		p[0] = 0
		for x, v := range row {
			p[x+1] = p[x] + uint32(v)
		}
		total := p[w]
		// D1[a] += P_y(clamp(a - y)), a in [0, w+h].
		for a := range d1 {
			k := a - y
			switch {
			case k <= 0:
			case k >= w:
				d1[a] += total
			default:
				d1[a] += p[k]
			}
		}
		// D2[b+h] += P_y(clamp(b + y)), b in [-h, w].
		for i := range d2 {
			k := i - h + y
			switch {
			case k <= 0:
			case k >= w:
				d2[i] += total
			default:
				d2[i] += p[k]
			}
		}
		Y := y + 1
		o := Y * s
		for X := 0; X <= w; X++ {
			t[o+X] = d1[X+Y-1] - d2[X-Y+h]
		}
	}
}

// rectSum is the sum of the w x h rectangle at (x, y) of the image.
func (it *integrals) rectSum(x, y, w, h int) uint32 {
	s := it.stride
	return it.sum[y*s+x] - it.sum[y*s+x+w] - it.sum[(y+h)*s+x] + it.sum[(y+h)*s+x+w]
}
