package privacy

import (
	"math"
	"sort"
)

// Photos and frames on walls. A hung picture shows as a closed, axis-aligned
// rectangular outline of strong edges, a flat wall all around it, and content inside
// that differs from that wall. The detector works on an edge map of the scanned image
// (downscaled to at most frameMaxEdge pixels): each connected edge component whose
// bounding box is covered by its own edges along all four sides is a rectangle
// candidate; candidates are then measured against the ring of wall around them and
// against what they enclose. Windows (much brighter than the wall, often clipped),
// screens and cabinet doors (flat inside) and furniture (no flat ring) fall out.

// frameMaxEdge bounds the edge map's size; frames smaller than about 2% of the image
// are not the target.
const frameMaxEdge = 600

// frameCandidate is a rectangle in scanned-image pixels with its measurements.
type frameCandidate struct {
	box       rectF
	coverage  float64 // weakest side's share covered by the outline
	ringDev   float64 // typical grey-level deviation of the wall ring (median of sides)
	ringWorst float64 // the busiest side of the ring
	inDev     float64 // grey-level deviation inside
	inDiff    float64 // |inside mean - ring mean|
	bright    float64 // share of inside pixels above 240 (blown-out window)
	divider   float64 // best edge coverage of a line crossing the middle (window bars)
	alike     int     // other rectangles of about the same size (a facade's windows)
	conf      float64
}

// edgeThreshold caps the adaptive edge threshold (sum of |dx| and |dy| over two
// pixels, grey levels); edgeThresholdMin is its floor.
const (
	edgeThreshold    = 40
	edgeThresholdMin = 16
)

// segment is a run of edge pixels along one row (horizontal) or column (vertical):
// at is the row or column, [a, b) the extent along it.
type segment struct{ at, a, b int }

// edgeMaps marks horizontal edges (|dy| dominant) and vertical edges (|dx| dominant).
type edgeMaps struct {
	w, h   int
	eh, ev []bool
}

func newEdgeMaps(g *gray) *edgeMaps {
	w, h := g.w, g.h
	e := &edgeMaps{w: w, h: h, eh: make([]bool, w*h), ev: make([]bool, w*h)}
	gx := make([]int16, w*h)
	gy := make([]int16, w*h)
	var hist [1024]int
	for y := 1; y < h-1; y++ {
		for x := 1; x < w-1; x++ {
			dx := int(g.pix[y*w+x+1]) - int(g.pix[y*w+x-1])
			dy := int(g.pix[(y+1)*w+x]) - int(g.pix[(y-1)*w+x])
			gx[y*w+x], gy[y*w+x] = int16(dx), int16(dy)
			hist[min(abs(dx)+abs(dy), 1023)]++
		}
	}
	// The threshold follows the photo's own contrast (dim, soft listing photos have
	// weak edges): the 90th percentile of the gradient, within fixed bounds.
	th, acc := edgeThreshold, 0
	for v, c := range hist {
		acc += c
		if acc >= (w-2)*(h-2)*9/10 {
			th = min(max(v, edgeThresholdMin), edgeThreshold)
			break
		}
	}
	for i := range gx {
		ax, ay := abs(int(gx[i])), abs(int(gy[i]))
		if ax+ay < th {
			continue
		}
		e.eh[i] = ay >= ax
		e.ev[i] = ax >= ay
	}
	return e
}

// hAt reports a horizontal edge within one row of (x, y).
func (e *edgeMaps) hAt(x, y int) bool {
	for d := -1; d <= 1; d++ {
		if yy := y + d; yy >= 0 && yy < e.h && e.eh[yy*e.w+x] {
			return true
		}
	}
	return false
}

// vAt reports a vertical edge within one column of (x, y).
func (e *edgeMaps) vAt(x, y int) bool {
	for d := -1; d <= 1; d++ {
		if xx := x + d; xx >= 0 && xx < e.w && e.ev[y*e.w+xx] {
			return true
		}
	}
	return false
}

// vSegments returns vertical runs of at least minLen pixels, bridging gaps of 2.
func (e *edgeMaps) vSegments(minLen int) []segment {
	var out []segment
	for x := 1; x < e.w-1; x++ {
		start, gap := -1, 0
		for y := 0; y <= e.h; y++ {
			on := y < e.h && e.ev[y*e.w+x]
			switch {
			case on && start < 0:
				start, gap = y, 0
			case on:
				gap = 0
			case start >= 0:
				gap++
				if gap > 2 || y == e.h {
					if end := y - gap + 1; end-start >= minLen {
						out = append(out, segment{at: x, a: start, b: end})
					}
					start = -1
				}
			}
		}
	}
	return out
}

// hCoverage is the share of x in [x0, x1) with a horizontal edge near row y.
func (e *edgeMaps) hCoverage(y, x0, x1 int) float64 {
	if x1 <= x0 || y < 0 || y >= e.h {
		return 0
	}
	n := 0
	for x := x0; x < x1; x++ {
		if e.hAt(x, y) {
			n++
		}
	}
	return float64(n) / float64(x1-x0)
}

// vCoverage is the share of y in [y0, y1) with a vertical edge near column x.
func (e *edgeMaps) vCoverage(x, y0, y1 int) float64 {
	if y1 <= y0 || x < 0 || x >= e.w {
		return 0
	}
	n := 0
	for y := y0; y < y1; y++ {
		if e.vAt(x, y) {
			n++
		}
	}
	return float64(n) / float64(y1-y0)
}

// detectFrames finds picture-like rectangles; the returned boxes are in the pixels of
// the pyramid's base (the scanned image). Pairs of vertical edge segments that overlap
// along most of their length propose the left and right sides; the top and bottom are
// the rows near the overlap's ends with the best horizontal edge coverage.
func detectFrames(pyr *pyramid) []frameCandidate {
	// Work on the largest octave within frameMaxEdge.
	g := pyr.octaves[0]
	scale := 1.0
	for _, o := range pyr.octaves {
		g = o
		if max(o.w, o.h) <= frameMaxEdge {
			break
		}
		scale *= 2
	}
	if g.w < 32 || g.h < 32 {
		return nil
	}
	e := newEdgeMaps(g)
	minSide := max(10, max(g.w, g.h)/50)
	segs := e.vSegments(minSide)
	imgArea := float64(g.w * g.h)
	var out []frameCandidate
	for i, l := range segs {
		for _, r := range segs[i+1:] {
			bw := r.at - l.at
			if bw < minSide {
				continue
			}
			y0, y1 := max(l.a, r.a), min(l.b, r.b)
			bh := y1 - y0
			if bh < minSide {
				continue
			}
			// The sides must mostly overlap: one picture, not two unrelated edges.
			if float64(bh) < 0.6*float64(max(l.b-l.a, r.b-r.a)) {
				continue
			}
			area := float64(bw * bh)
			if area < 0.002*imgArea || area > 0.25*imgArea || bw > 3*bh || bh > 3*bw {
				continue
			}
			tol := max(3, bh/20)
			top, ct := bestRow(e, y0, tol, l.at, r.at)
			bottom, cb := bestRow(e, y1-1, tol, l.at, r.at)
			if ct < 0.6 || cb < 0.6 || bottom-top < minSide {
				continue
			}
			cl := e.vCoverage(l.at, top, bottom)
			cr := e.vCoverage(r.at, top, bottom)
			cov := math.Min(math.Min(ct, cb), math.Min(cl, cr))
			if cov < 0.6 {
				continue
			}
			c := frameCandidate{box: rectF{float64(l.at), float64(top), float64(bw), float64(bottom - top)}, coverage: cov}
			measureFrame(g, &c)
			c.divider = dividerLine(e, l.at, top, r.at, bottom)
			c.box = rectF{c.box.x * scale, c.box.y * scale, c.box.w * scale, c.box.h * scale}
			out = append(out, c)
		}
	}
	// Nested or duplicate outlines of one picture (frame, mat, print; both sides of a
	// thick edge) keep the outermost.
	sort.Slice(out, func(i, j int) bool { return out[i].box.w*out[i].box.h > out[j].box.w*out[j].box.h })
	var kept []frameCandidate
	for _, c := range out {
		dup := false
		for _, k := range kept {
			m := 0.03 * math.Max(k.box.w, k.box.h)
			if c.box.x >= k.box.x-m && c.box.y >= k.box.y-m && c.box.x+c.box.w <= k.box.x+k.box.w+m &&
				c.box.y+c.box.h <= k.box.y+k.box.h+m {
				dup = true
				break
			}
		}
		if !dup {
			kept = append(kept, c)
		}
	}
	// Windows of a facade and doors of a kitchen come in series of one size.
	for i := range kept {
		a := &kept[i]
		for j, b := range kept {
			if i != j && math.Abs(a.box.w-b.box.w) <= 0.2*a.box.w && math.Abs(a.box.h-b.box.h) <= 0.2*a.box.h {
				a.alike++
			}
		}
	}
	return kept
}

// dividerLine is the best edge coverage of a row or column that crosses the middle of
// the box from one side to the other: glazing bars and sash rails run into the frame
// on both ends, while the inner border of a mat or print stops short of it. A line
// scores its coverage over the whole span only when both end tenths are covered too.
func dividerLine(e *edgeMaps, x0, y0, x1, y1 int) float64 {
	w, h := x1-x0, y1-y0
	tw, th := max(2, w/10), max(2, h/10)
	best := 0.0
	for y := y0 + h/5; y <= y1-h/5; y++ {
		if e.hCoverage(y, x0, x0+tw) >= 0.7 && e.hCoverage(y, x1-tw, x1) >= 0.7 {
			best = math.Max(best, e.hCoverage(y, x0, x1))
		}
	}
	for x := x0 + w/5; x <= x1-w/5; x++ {
		if e.vCoverage(x, y0, y0+th) >= 0.7 && e.vCoverage(x, y1-th, y1) >= 0.7 {
			best = math.Max(best, e.vCoverage(x, y0, y1))
		}
	}
	return best
}

// bestRow searches rows y-tol..y+tol for the best horizontal edge coverage between
// columns x0 and x1.
func bestRow(e *edgeMaps, y, tol, x0, x1 int) (int, float64) {
	best, bc := y, -1.0
	for yy := y - tol; yy <= y+tol; yy++ {
		if c := e.hCoverage(yy, x0, x1+1); c > bc {
			best, bc = yy, c
		}
	}
	return best, bc
}

// measureFrame fills the ring and interior statistics of a candidate (in g's pixels).
// The ring is a band outside the box 12% of its smaller side wide (at least 3 pixels),
// split into its four sides; the interior is the box inset by 15%.
func measureFrame(g *gray, c *frameCandidate) {
	x0, y0 := int(c.box.x), int(c.box.y)
	x1, y1 := x0+int(c.box.w), y0+int(c.box.h)
	m := max(3, int(0.12*math.Min(c.box.w, c.box.h)))
	gap := 2 // skip the outline itself
	type stat struct{ n, s, s2 float64 }
	add := func(st *stat, xa, ya, xb, yb int) {
		xa, ya = max(xa, 0), max(ya, 0)
		xb, yb = min(xb, g.w), min(yb, g.h)
		for y := ya; y < yb; y++ {
			for x := xa; x < xb; x++ {
				v := float64(g.pix[y*g.w+x])
				st.n++
				st.s += v
				st.s2 += v * v
			}
		}
	}
	dev := func(st stat) float64 {
		if st.n == 0 {
			return math.Inf(1) // at the image border: no evidence of a wall
		}
		mu := st.s / st.n
		return math.Sqrt(math.Max(0, st.s2/st.n-mu*mu))
	}
	var sides [4]stat
	add(&sides[0], x0-m, y0-gap-m, x1+m, y0-gap)
	add(&sides[1], x0-m, y1+gap, x1+m, y1+gap+m)
	add(&sides[2], x0-gap-m, y0, x0-gap, y1)
	add(&sides[3], x1+gap, y0, x1+gap+m, y1)
	devs := make([]float64, 4)
	var ring stat
	for i, s := range sides {
		devs[i] = dev(s)
		ring.n += s.n
		ring.s += s.s
		ring.s2 += s.s2
	}
	sort.Float64s(devs)
	c.ringDev = (devs[1] + devs[2]) / 2
	c.ringWorst = devs[3]
	ix, iy := int(0.15*c.box.w), int(0.15*c.box.h)
	var in stat
	add(&in, x0+ix, y0+iy, x1-ix, y1-iy)
	c.inDev = dev(in)
	if in.n > 0 && ring.n > 0 {
		c.inDiff = math.Abs(in.s/in.n - ring.s/ring.n)
	}
	bright := 0
	for y := y0 + iy; y < y1-iy; y++ {
		for x := x0 + ix; x < x1-ix; x++ {
			if g.pix[y*g.w+x] > 240 {
				bright++
			}
		}
	}
	if in.n > 0 {
		c.bright = float64(bright) / in.n
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// frameConfidence maps a candidate's measurements to 0..1. The terms were set by hand
// on the test photos: the pictures in houses_156_bedroom and 2007_007763 against the
// other rectangles of the interiors and exteriors (windows, cabinet doors, outlet
// plates, shelves, boxes). A flat wall ring and a busy interior weigh most; clipped
// highlights inside (a window) and a busy side of the ring count against.
func frameConfidence(c frameCandidate) float64 {
	z := -0.25*(c.ringDev-10) +
		math.Min(2, 0.15*(c.inDev-18)) +
		4*(c.coverage-0.7) -
		6*c.bright -
		0.05*math.Max(0, c.ringWorst-25) -
		4*math.Max(0, c.divider-0.6) -
		0.7*float64(min(c.alike, 2))
	return sigmoid(2 * (z - 1.2))
}
