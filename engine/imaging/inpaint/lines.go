package inpaint

import (
	"context"
	"image"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Straight lines carried across the hole. On a full-size photo a cabinet's door
// gap, a window frame or a counter edge is a few pixels wide: at the coarse levels,
// where the fill's layout is decided, it is gone, and the fine levels only refine
// the fill near the photo, so the fill stops such a line a few pixels into the hole
// and leaves a plain surface where it should run on. After the fill, lines that
// enter the hole on one side and leave it on the other are found and drawn across
// it, in the manner of the structure propagation of Sun et al. (2005), simplified
// to straight lines:
//
//   - Edges in a ring around the hole vote in a Hough transform, each pixel once,
//     for the lines through it across its gradient as the structure tensor over
//     5×5 px orients it (see orient).
//   - Each candidate is fitted to its edge pixels and moved to the middle of what
//     its profile holds, so that a narrow line's two edges make one line.
//   - It is kept only where, on both sides of the hole, the edge is found along most
//     of the line (lineSupport), its profile across the line holds still along it
//     (lineStable), and the two sides' profiles agree (lineMatch, lineContrastRatio):
//     a real straight edge or line, interrupted by the object, not a texture's
//     chance alignment.
//   - Across the hole the strip within lineHalfWidth of the line takes the photo's
//     profile just outside the hole, cross-faded from one end to the other, so it
//     meets the photo at both ends without a step; its sides fade into the fill.
//     It is drawn only where the fill beside it agrees with what lies beside the
//     line at its ends (see agreement): elsewhere it would float over the fill.
//
// Lines that end inside the hole (a corner) are left to the fill. Drawing the lines
// before the fill instead, kept as photo for the fill to line up with, did worse on
// full-size photos (TestLinesOnPhotos: hole SSIM 0.682 against 0.692): the drawn
// pixels became patch sources and new borders, and the fill copied pieces of them.
const (
	lineAngles        = 180  // Hough angle bins over 180°
	lineGrad          = 0.02 // edge strength that votes: encoded luma per pixel (Sobel/8)
	lineAlign         = 0.96 // cosine between an edge pixel's gradient and the line's normal
	lineSupport       = 0.7  // share of a side's positions where the edge is found
	lineStable        = 0.25 // the profile's spread along the line, a share of its contrast
	lineMatch         = 0.25 // difference between the two sides' profiles, a share of the contrast
	lineContrast      = 0.05 // weakest edge carried over (encoded luma, 0..1)
	lineContrastRatio = 0.6  // the weaker side's contrast, at least this share of the stronger's
	lineMax           = 12   // lines drawn at most per hole
	lineTries         = 48   // Hough peaks examined
)

// carryLines turns the line drawing on; tests turn it off to measure what it adds.
var carryLines = true

// lineHalfWidth is the half-width (px) of the strip drawn along a line: wide enough
// for an edge's blur and a narrow line's two edges on a photo of this size.
func lineHalfWidth(w, h int) int { return 3 + max(w, h)/1000 }

// crossing is one stretch of a line through the hole: positions along the line
// from tA to tB (inclusive) are in the hole. For each row of the strip and of
// lineBeside more rows on each side (offsets -R-lineBeside..R+lineBeside across
// the line) rowA and rowB are its own first and last positions in the hole (rowA >
// rowB where the row misses the hole), and ends its photo colour just outside each
// end (nc values a row).
type crossing struct {
	tA, tB     int
	rowA, rowB []int
	ends       [2][]float32
}

// colour sets out (nc values) to row r's colour at position t: its end colours
// cross-faded along the row. It reports false where the row misses the hole.
func (c *crossing) colour(r int, t float64, nc int, out []float32) bool {
	if c.rowA[r] > c.rowB[r] {
		return false
	}
	u := float32(max(0, min(1, (t-float64(c.rowA[r])+1)/float64(c.rowB[r]-c.rowA[r]+2))))
	for ch := range out {
		out[ch] = c.ends[0][r*nc+ch]*(1-u) + c.ends[1][r*nc+ch]*u
	}
	return true
}

// line is a straight line in the level's coordinates: the points p with
// (p-c)·n = rho, n = (cos θ, sin θ), running along d = (-sin θ, cos θ).
type line struct {
	cx, cy, nx, ny, rho float64
	shift               float64 // how far centre moved it off the edge it was fitted to
	cross               []crossing
}

func (ln *line) at(t, s float64) (float64, float64) {
	return ln.cx + ln.rho*ln.nx + t*-ln.ny + s*ln.nx, ln.cy + ln.rho*ln.ny + t*ln.nx + s*ln.ny
}

// continueLines finds the straight lines crossing the hole of the full-resolution
// level l, once it is filled, and draws them across it into l.lin (see above),
// returning how many pixels it drew on. R is the strip's half-width; edges are
// looked for in a ring of max(6R, 32) pixels around each part of the hole. It
// stops between its passes once ctx is done.
func (l *level) continueLines(ctx context.Context, R int) (int, error) {
	ring := max(6*R, 32)
	drawn := 0
	for _, bb := range l.holeParts(l.holeBox(0)) {
		if err := ctx.Err(); err != nil {
			return drawn, err
		}
		box := bb.Inset(-(ring + R + 2)).Intersect(image.Rect(0, 0, l.w, l.h))
		n, err := l.continueLinesIn(ctx, box, R, ring)
		drawn += n
		if err != nil {
			return drawn, err
		}
	}
	return drawn, nil
}

// holeParts returns the bounding boxes of the parts of the hole within bb, each
// examined on its own with its own ring: the 8-connected groups of the 8×8 blocks
// that hold hole pixels (holes closer than a block apart count as one).
func (l *level) holeParts(bb image.Rectangle) []image.Rectangle {
	const b = 8
	gw, gh := (bb.Dx()+b-1)/b, (bb.Dy()+b-1)/b
	block := make([]bool, gw*gh)
	for y := bb.Min.Y; y < bb.Max.Y; y++ {
		row := l.hole[y*l.w : (y+1)*l.w]
		for x := bb.Min.X; x < bb.Max.X; x++ {
			if row[x] {
				block[(y-bb.Min.Y)/b*gw+(x-bb.Min.X)/b] = true
			}
		}
	}
	seen := make([]bool, gw*gh)
	var parts []image.Rectangle
	var stack []int
	for i, in := range block {
		if !in || seen[i] {
			continue
		}
		var r image.Rectangle
		seen[i] = true
		stack = append(stack[:0], i)
		for len(stack) > 0 {
			j := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			jx, jy := j%gw, j/gw
			x0, y0 := bb.Min.X+jx*b, bb.Min.Y+jy*b
			r = r.Union(image.Rect(x0, y0, x0+b, y0+b))
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					nx, ny := jx+dx, jy+dy
					if nx < 0 || ny < 0 || nx >= gw || ny >= gh {
						continue
					}
					if k := ny*gw + nx; block[k] && !seen[k] {
						seen[k] = true
						stack = append(stack, k)
					}
				}
			}
		}
		parts = append(parts, r.Intersect(bb))
	}
	return parts
}

// continueLinesIn carries the lines across the part of the hole whose ring lies in
// box and returns how many pixels it drew on.
func (l *level) continueLinesIn(ctx context.Context, box image.Rectangle, R, ring int) (int, error) {
	w := l.w
	bw, bh := box.Dx(), box.Dy()
	// Box-local planes: hole, distance outside the hole, encoded luma, gradients.
	hole := make([]bool, bw*bh)
	for y := 0; y < bh; y++ {
		copy(hole[y*bw:(y+1)*bw], l.hole[(y+box.Min.Y)*w+box.Min.X:])
	}
	out := imaging.Chamfer(hole, bw, bh, false)
	// Pixels further from the hole than the sides' strips reach are not needed.
	reach := int32(3 * (ring + 2*R + 4))
	Y := make([]float32, bw*bh)
	gx := make([]float32, bw*bh)
	gy := make([]float32, bw*bh)
	imaging.Bands(bh, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < bw; x++ {
				if i := y*bw + x; !hole[i] && out[i] <= reach+6 {
					Y[i] = encodedLuma(l.lin[((y+box.Min.Y)*w+x+box.Min.X)*l.nc:], l.cc)
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// Gradients by Sobel on the luma smoothed by a 3×3 binomial: the direction of a
	// hard-edged (aliased) line's stair steps would otherwise swing by ±20°.
	S := make([]float32, bw*bh)
	imaging.Bands(bh, func(_, y0, y1 int) {
		for y := max(1, y0); y < min(bh-1, y1); y++ {
			for x := 1; x < bw-1; x++ {
				i := y*bw + x
				if out[i] < 6 || out[i] > reach+3 {
					continue
				}
				S[i] = (Y[i-bw-1] + 2*Y[i-bw] + Y[i-bw+1] + 2*Y[i-1] + 4*Y[i] + 2*Y[i+1] + Y[i+bw-1] + 2*Y[i+bw] + Y[i+bw+1]) / 16
			}
		}
	})
	imaging.Bands(bh, func(_, y0, y1 int) {
		for y := max(1, y0); y < min(bh-1, y1); y++ {
			for x := 1; x < bw-1; x++ {
				i := y*bw + x
				if out[i] < 9 || out[i] > reach { // the hole or within two pixels of it
					continue
				}
				a, b, c := S[i-bw-1], S[i-bw], S[i-bw+1]
				d, f := S[i-1], S[i+1]
				g, hh, k := S[i+bw-1], S[i+bw], S[i+bw+1]
				gx[i] = ((c + 2*f + k) - (a + 2*d + g)) / 8
				gy[i] = ((g + 2*hh + k) - (a + 2*b + c)) / 8
			}
		}
	})

	orient(gx, gy, out, bw, bh)

	// Hough votes of the ring's edge pixels, ρ relative to the box's centre.
	cx, cy := float64(bw)/2, float64(bh)/2
	nr := int(math.Hypot(float64(bw), float64(bh))) + 3
	off := nr / 2
	acc := make([]int32, lineAngles*nr)
	var cos, sin [lineAngles]float64
	for a := range cos {
		sin[a], cos[a] = math.Sincos(float64(a) * math.Pi / lineAngles)
	}
	// The ring's edge pixels, which vote and to which candidates are fitted.
	var edges []edgePx
	for y := 1; y < bh-1; y++ {
		for x := 1; x < bw-1; x++ {
			i := y*bw + x
			if out[i] < 9 || out[i] > int32(3*ring) {
				continue
			}
			if g := math.Hypot(float64(gx[i]), float64(gy[i])); g >= lineGrad {
				edges = append(edges, edgePx{float64(x), float64(y), float64(gx[i]), float64(gy[i]), g})
			}
		}
	}
	for _, e := range edges {
		phi := math.Atan2(e.gy, e.gx)
		if phi < 0 {
			phi += math.Pi
		}
		b := int(math.Round(phi/math.Pi*lineAngles)) % lineAngles
		for db := -2; db <= 2; db++ {
			a := (b + db + lineAngles) % lineAngles
			r := int(math.Round((e.x-cx)*cos[a]+(e.y-cy)*sin[a])) + off
			if r >= 0 && r < nr {
				acc[a*nr+r]++
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	// Peaks: local maxima with at least half a ring's length of votes (a line
	// across the hole has up to a ring's length on each side).
	type peak struct {
		a, r  int
		votes int32
	}
	var peaks []peak
	for a := 0; a < lineAngles; a++ {
		for r := 1; r < nr-1; r++ {
			v := acc[a*nr+r]
			if v < int32(ring/2) {
				continue
			}
			best := true
			for da := -2; da <= 2 && best; da++ {
				aa := (a + da + lineAngles) % lineAngles
				for dr := -2; dr <= 2; dr++ {
					rr := r + dr
					if da == 0 && dr == 0 || rr < 0 || rr >= nr {
						continue
					}
					if u := acc[aa*nr+rr]; u > v || u == v && (da < 0 || da == 0 && dr < 0) {
						best = false
						break
					}
				}
			}
			if best {
				peaks = append(peaks, peak{a, r, v})
			}
		}
	}
	slices.SortStableFunc(peaks, func(p, q peak) int { return int(q.votes - p.votes) })
	if len(peaks) > lineTries {
		peaks = peaks[:lineTries]
	}

	pl := planes{w: bw, h: bh, hole: hole, edges: edges, Y: Y, gx: gx, gy: gy}
	var kept []*line
	for _, p := range peaks {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		ln := &line{cx: cx, cy: cy, nx: cos[p.a], ny: sin[p.a], rho: float64(p.r - off)}
		pl.refine(ln, 2.5)
		pl.refine(ln, 1.5)
		pl.centre(ln, R, ring)
		// The two edges of a narrow line both come here as the line's middle.
		dup := false
		for _, k := range kept {
			if k.nx*ln.nx+k.ny*ln.ny > math.Cos(2*math.Pi/lineAngles) && math.Abs(k.rho-ln.rho) <= 2 {
				dup = true
				break
			}
		}
		if dup {
			continue
		}
		if pl.verify(ln, R, ring) {
			ln.cross = pl.ends(ln, l, box, R)
			kept = append(kept, ln)
			if len(kept) == lineMax {
				break
			}
		}
	}
	drawn := 0
	for _, ln := range kept {
		drawn += l.drawLine(ln, box, R)
	}
	return drawn, nil
}

// orient turns each gradient (where out marks the ring) to the dominant orientation
// of the structure tensor over its 5×5 neighbourhood, keeping its magnitude and
// polarity. Along a hard-edged (aliased) line the gradient of each stair step points
// up to 45° off the line's normal; the tensor averages the steps out.
func orient(gx, gy []float32, out []int32, w, h int) {
	const r = 2
	// Row sums of the tensor's three terms, then column sums.
	txx, txy, tyy := make([]float32, w*h), make([]float32, w*h), make([]float32, w*h)
	for y := 0; y < h; y++ {
		for x := r; x < w-r; x++ {
			var a, b, c float32
			for k := -r; k <= r; k++ {
				i := y*w + x + k
				a += gx[i] * gx[i]
				b += gx[i] * gy[i]
				c += gy[i] * gy[i]
			}
			i := y*w + x
			txx[i], txy[i], tyy[i] = a, b, c
		}
	}
	for y := r; y < h-r; y++ {
		for x := r; x < w-r; x++ {
			i := y*w + x
			if out[i] < 9 || gx[i] == 0 && gy[i] == 0 {
				continue
			}
			var a, b, c float64
			for k := -r; k <= r; k++ {
				j := i + k*w
				a += float64(txx[j])
				b += float64(txy[j])
				c += float64(tyy[j])
			}
			phi := 0.5 * math.Atan2(2*b, a-c)
			ox, oy := math.Cos(phi), math.Sin(phi)
			g := math.Hypot(float64(gx[i]), float64(gy[i]))
			if ox*float64(gx[i])+oy*float64(gy[i]) < 0 {
				ox, oy = -ox, -oy
			}
			gx[i], gy[i] = float32(g*ox), float32(g*oy)
		}
	}
}

// refine fits ln to the ring's edge pixels within reach of it whose gradient runs
// across it, by weighted total least squares: a Hough bin is a degree and a pixel
// wide, and a long edge drifts out of a pixel's reach over a slightly wrong angle.
func (p *planes) refine(ln *line, reach float64) {
	var sw, sx, sy, sxx, syy, sxy float64
	for _, e := range p.edges {
		dx, dy := e.x-ln.cx, e.y-ln.cy
		if math.Abs(dx*ln.nx+dy*ln.ny-ln.rho) > reach || math.Abs(e.gx*ln.nx+e.gy*ln.ny) < lineAlign*e.g {
			continue
		}
		g := e.g
		sw += g
		sx += g * dx
		sy += g * dy
		sxx += g * dx * dx
		syy += g * dy * dy
		sxy += g * dx * dy
	}
	if sw == 0 {
		return
	}
	mx, my := sx/sw, sy/sw
	cxx, cyy, cxy := sxx/sw-mx*mx, syy/sw-my*my, sxy/sw-mx*my
	// The normal is the eigenvector of the smaller eigenvalue of the covariance.
	a := 0.5 * math.Atan2(2*cxy, cxx-cyy) // direction of the larger spread: the line
	nx, ny := -math.Sin(a), math.Cos(a)
	if nx*ln.nx+ny*ln.ny < 0 {
		nx, ny = -nx, -ny
	}
	if nx*ln.nx+ny*ln.ny < math.Cos(3*math.Pi/lineAngles) {
		return // not the same line
	}
	ln.nx, ln.ny = nx, ny
	ln.rho = mx*nx + my*ny
}

// edgePx is an edge pixel of the ring: its box-local position and gradient.
type edgePx struct{ x, y, gx, gy, g float64 }

// planes are the box-local planes the verification reads.
type planes struct {
	w, h      int
	hole      []bool
	edges     []edgePx
	Y, gx, gy []float32
}

// known reports whether the pixel nearest (x, y) lies in the box and outside the
// hole, with its index (0 outside the box).
func (p *planes) known(x, y float64) (int, bool) {
	i, c := p.locate(x, y)
	return i, c == 1
}

// class tells where the pixel nearest (x, y) lies: 0 outside the box (or on its
// edge), 1 known, 2 in the hole.
func (p *planes) class(x, y float64) int {
	_, c := p.locate(x, y)
	return c
}

// locate returns the index of the pixel nearest (x, y) and its class (see class).
func (p *planes) locate(x, y float64) (int, int) {
	xi, yi := int(math.Round(x)), int(math.Round(y))
	if xi < 1 || yi < 1 || xi >= p.w-1 || yi >= p.h-1 {
		return 0, 0
	}
	i := yi*p.w + xi
	if p.hole[i] {
		return i, 2
	}
	return i, 1
}

// span walks the line and returns its hole crossings as (tA, tB) pairs, each with
// known pixels on both sides.
func (p *planes) span(ln *line) [][2]int {
	T := int(math.Hypot(float64(p.w), float64(p.h))/2) + 1
	var out [][2]int
	prev, tA, inside := 0, 0, false
	for t := -T; t <= T; t++ {
		c := p.class(ln.at(float64(t), 0))
		switch {
		case c == 2 && prev == 1:
			inside, tA = true, t
		case c == 1 && prev == 2 && inside:
			out = append(out, [2]int{tA, t - 1})
			inside = false
		case c == 0:
			inside = false
		}
		prev = c
	}
	return out
}

// centre moves ln across itself to the middle of what its edge profile holds: the
// strength-weighted mean offset of the profile's steps within 2R of the line,
// measured along the first side of a crossing that shows it. A narrow line's Hough
// peaks lie on its two edges; its strip must lie on the line itself.
func (p *planes) centre(ln *line, R, ring int) {
	W := 2 * R
	for _, c := range p.span(ln) {
		prof := p.profile(ln, c[0]-2, -1, W, ring)
		if prof == nil {
			prof = p.profile(ln, c[1]+2, +1, W, ring)
		}
		if prof == nil {
			continue
		}
		var sw, sm float64
		for s := -W + 1; s < W; s++ {
			d := math.Abs(prof[s+1+W] - prof[s-1+W])
			sw += d
			sm += d * float64(s)
		}
		if sw > 0 {
			ln.shift = sm / sw
			ln.rho += ln.shift
		}
		return
	}
}

// profile is the mean encoded luma at offsets -W..W across ln along one side of a
// crossing (as side walks it), or nil when fewer than 2W positions show it all.
func (p *planes) profile(ln *line, t0, step, W, ring int) []float64 {
	sum := make([]float64, 2*W+1)
	cnt := p.walkSide(ln, t0, step, W, ring, func(t float64) {
		for s := -W; s <= W; s++ {
			sum[s+W] += float64(p.bilinear(ln.at(t, float64(s))))
		}
	})
	if cnt < 2*W {
		return nil
	}
	for i := range sum {
		sum[i] /= float64(cnt)
	}
	return sum
}

// verify reports whether ln is a straight edge on both sides of some crossing of
// the hole (see lineSupport, lineStable, lineMatch), trimming ln.cross to those.
func (p *planes) verify(ln *line, R, ring int) bool {
	var good []crossing
	for _, c := range p.span(ln) {
		a := p.side(ln, c[0]-2, -1, R, ring)
		b := p.side(ln, c[1]+2, +1, R, ring)
		if a == nil || b == nil {
			continue
		}
		// The same edge: as strong on both sides, and the same profile.
		contrast := min(a.contrast, b.contrast)
		if contrast < lineContrastRatio*max(a.contrast, b.contrast) {
			continue
		}
		diff := 0.0
		for s := range a.prof {
			diff += math.Abs(a.prof[s] - b.prof[s])
		}
		diff /= float64(len(a.prof))
		if diff > lineMatch*contrast {
			continue
		}
		good = append(good, crossing{tA: c[0], tB: c[1]})
	}
	ln.cross = good
	return len(good) > 0
}

// sideStats describes the edge along one side of a crossing.
type sideStats struct {
	prof     []float64 // mean encoded luma at offsets -R..R across the line
	contrast float64
}

// walkSide calls visit with the positions along ln from t0 away from the hole (step
// -1 or +1) whose strip, offsets -W..W, lies wholly outside the hole and inside the
// box, up to ring of them, and returns how many it visited. Where the line meets
// the hole's edge at a slant the first positions' strips still reach into the hole:
// those are skipped, and the walk stops at the first such position after them.
func (p *planes) walkSide(ln *line, t0, step, W, ring int, visit func(t float64)) int {
	cnt := 0
	for k := 0; k < ring+2*W && cnt < ring; k++ {
		t := float64(t0 + k*step)
		ok := true
		for s := -W; s <= W && ok; s++ {
			_, ok = p.known(ln.at(t, float64(s)))
		}
		if !ok {
			if cnt == 0 {
				continue
			}
			break
		}
		visit(t)
		cnt++
	}
	return cnt
}

// side examines the line from position t0 away from the hole (step -1 or +1) for up
// to ring positions, stopping at the hole or the box; nil when the stretch is too
// short or is no stable edge.
func (p *planes) side(ln *line, t0, step, R, ring int) *sideStats {
	n := 2*R + 1
	sum := make([]float64, n)
	sq := make([]float64, n)
	hits := 0
	cnt := p.walkSide(ln, t0, step, R, ring, func(t float64) {
		for s := -R; s <= R; s++ {
			v := float64(p.bilinear(ln.at(t, float64(s))))
			sum[s+R] += v
			sq[s+R] += v * v
		}
		// The edge: a strong gradient across the line within a pixel of where it
		// was fitted.
		for s := int(math.Floor(-ln.shift)) - 1; s <= int(math.Ceil(-ln.shift))+1; s++ {
			i, _ := p.known(ln.at(t, float64(s)))
			g := math.Hypot(float64(p.gx[i]), float64(p.gy[i]))
			if g >= lineGrad && math.Abs(float64(p.gx[i])*ln.nx+float64(p.gy[i])*ln.ny) >= lineAlign*g {
				hits++
				break
			}
		}
	})
	if cnt < 2*R || float64(hits) < lineSupport*float64(cnt) {
		return nil
	}
	st := &sideStats{prof: make([]float64, n)}
	lo, hi, spread := math.Inf(1), math.Inf(-1), 0.0
	for s := range sum {
		m := sum[s] / float64(cnt)
		st.prof[s] = m
		lo, hi = min(lo, m), max(hi, m)
		spread += math.Sqrt(max(0, sq[s]/float64(cnt)-m*m))
	}
	st.contrast = hi - lo
	if st.contrast < lineContrast || spread/float64(n) > lineStable*st.contrast {
		return nil
	}
	return st
}

// bilinear samples Y at (x, y), which must lie inside the box with its neighbours known.
func (p *planes) bilinear(x, y float64) float32 {
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
	i := y0*p.w + x0
	v := func(j int) float32 {
		if p.hole[j] {
			return p.Y[i] // a hole pixel's luma is unset; the nearest corner stands in
		}
		return p.Y[j]
	}
	a, b, c, d := v(i), v(i+1), v(i+p.w), v(i+p.w+1)
	return (a*(1-fx)+b*fx)*(1-fy) + (c*(1-fx)+d*fx)*fy
}

// ends records, for each crossing of ln and each row of its strip, where the row
// enters and leaves the hole and the photo's colour just outside: the mean of the
// three known positions nearest the hole on that side.
func (p *planes) ends(ln *line, l *level, box image.Rectangle, R int) []crossing {
	W := R + lineBeside
	n := 2*W + 1
	nc := l.nc
	acc := make([]float32, nc)
	for k := range ln.cross {
		c := &ln.cross[k]
		c.rowA, c.rowB = make([]int, n), make([]int, n)
		c.ends = [2][]float32{make([]float32, n*nc), make([]float32, n*nc)}
		mid := (c.tA + c.tB) / 2
		for s := -W; s <= W; s++ {
			r := s + W
			c.rowA[r], c.rowB[r] = 1, 0
			if p.class(ln.at(float64(mid), float64(s))) != 2 {
				continue
			}
			for e, step := range [2]int{-1, 1} {
				t := mid
				for p.class(ln.at(float64(t+step), float64(s))) == 2 {
					t += step
				}
				if e == 0 {
					c.rowA[r] = t
				} else {
					c.rowB[r] = t
				}
				clear(acc)
				var cnt float32
				for j := 1; cnt < 3 && j <= 3+R; j++ {
					x, y := ln.at(float64(t+j*step), float64(s))
					if p.class(x, y) != 1 {
						continue
					}
					l.sampleLin(x+float64(box.Min.X), y+float64(box.Min.Y), acc)
					cnt++
				}
				if cnt == 0 { // the row runs out of the box: leave it to the fill
					c.rowA[r], c.rowB[r] = 1, 0
					break
				}
				for ch := range acc {
					c.ends[e][r*nc+ch] = acc[ch] / cnt
				}
			}
		}
	}
	return ln.cross
}

// sampleLin adds the bilinear sample of l.lin at (x, y) (level coordinates) to acc,
// reading only known pixels (the nearest known corner stands in for a hole one).
func (l *level) sampleLin(x, y float64, acc []float32) {
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	x0, y0 = max(0, min(l.w-2, x0)), max(0, min(l.h-2, y0))
	fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
	fx, fy = max(0, min(1, fx)), max(0, min(1, fy))
	idx := [4]int{y0*l.w + x0, y0*l.w + x0 + 1, (y0+1)*l.w + x0, (y0+1)*l.w + x0 + 1}
	wt := [4]float32{(1 - fx) * (1 - fy), fx * (1 - fy), (1 - fx) * fy, fx * fy}
	fallback := -1
	for k, i := range idx {
		if !l.hole[i] && (fallback < 0 || wt[k] > wt[fallback]) {
			fallback = k
		}
	}
	if fallback < 0 {
		return
	}
	for k, i := range idx {
		if l.hole[i] {
			i = idx[fallback]
		}
		for c := 0; c < l.nc; c++ {
			acc[c] += wt[k] * l.lin[i*l.nc+c]
		}
	}
}

// lineBeside is how many rows beside the strip, on each side, are compared with the
// fill (see agreement).
const lineBeside = 3

// agreement weighs each position of crossing c along ln by whether the fill
// already agrees with what lies beside the line: in the lineBeside rows just
// outside the strip on each side, the fill's luma (averaged over R positions
// either way along the line) must be within max(0.06, half the contrast across the
// strip) of the line's ends' there. Where the fill put something else beside
// the line (a floor where a cabinet's edge runs), the line would float over it and
// is left out, fading in and out over R positions. It returns the weights for
// positions tA..tB.
func (l *level) agreement(ln *line, c *crossing, box image.Rectangle, R int, px []float32) []float32 {
	nc, cc, W := l.nc, l.cc, R+lineBeside
	n := c.tB - c.tA + 1
	// Per position and side: summed fill and wanted luma, and counts.
	var fill, want [2][]float32
	var cnt [2][]float32
	for side := range 2 {
		fill[side], want[side], cnt[side] = make([]float32, n), make([]float32, n), make([]float32, n)
	}
	for k := 0; k < n; k++ {
		t := c.tA + k
		for side, sign := range [2]int{-1, 1} {
			for s := R + 1; s <= W; s++ {
				r := sign*s + W
				if t < c.rowA[r] || t > c.rowB[r] {
					continue
				}
				x, y := ln.at(float64(t), float64(sign*s))
				xi, yi := int(math.Round(x))+box.Min.X, int(math.Round(y))+box.Min.Y
				if xi < 0 || yi < 0 || xi >= l.w || yi >= l.h || !l.hole[yi*l.w+xi] {
					continue
				}
				c.colour(r, float64(t), nc, px)
				want[side][k] += encodedLuma(px, cc)
				fill[side][k] += encodedLuma(l.lin[(yi*l.w+xi)*nc:], cc)
				cnt[side][k]++
			}
		}
	}
	// The tolerance: half the contrast across the strip at its ends (what is drawn
	// stands out from the fill by about that much where they disagree).
	lo, hi := float32(math.Inf(1)), float32(math.Inf(-1))
	for r := lineBeside; r <= W+R; r++ {
		if c.rowA[r] > c.rowB[r] {
			continue
		}
		for e := range c.ends {
			v := encodedLuma(c.ends[e][r*nc:r*nc+nc], cc)
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	tol := max(0.06, (hi-lo)/2)
	ok := make([]bool, n)
	for k := range ok {
		var f, w, m [2]float32
		for side := range 2 {
			for j := max(0, k-R); j <= min(n-1, k+R); j++ {
				f[side] += fill[side][j]
				w[side] += want[side][j]
				m[side] += cnt[side][j]
			}
		}
		ok[k] = true
		for side := range 2 {
			if m[side] > 0 && abs32(f[side]-w[side])/m[side] > tol {
				ok[k] = false
			}
		}
	}
	// Weight: distance to the nearest position that disagrees, over R.
	wt := make([]float32, n)
	last := -1 << 30
	for k := 0; k < n; k++ {
		if !ok[k] {
			last = k
		}
		wt[k] = float32(k - last)
	}
	last = 1 << 30
	for k := n - 1; k >= 0; k-- {
		if !ok[k] {
			last = k
		}
		wt[k] = min(1, min(wt[k], float32(last-k))/float32(R))
	}
	return wt
}

// drawLine draws ln's crossings into the hole's pixels of l.lin where the fill
// agrees with them (see agreement): within R of the line, each row's end colours
// cross-faded along it, the rows interpolated across it, fading into the fill over
// the strip's outer half. It returns how many pixels it drew on.
func (l *level) drawLine(ln *line, box image.Rectangle, R int) int {
	nc, W := l.nc, R+lineBeside
	drawn := 0
	feather := max(1, float64(R)/2)
	px := make([]float32, nc)
	lo, hi := make([]float32, nc), make([]float32, nc)
	for k := range ln.cross {
		c := &ln.cross[k]
		along := l.agreement(ln, c, box, R, lo)
		xa, ya := ln.at(float64(c.tA), 0)
		xb, yb := ln.at(float64(c.tB), 0)
		x0 := int(math.Floor(min(xa, xb))) - 2*R - 1 + box.Min.X
		x1 := int(math.Ceil(max(xa, xb))) + 2*R + 1 + box.Min.X
		y0 := int(math.Floor(min(ya, yb))) - 2*R - 1 + box.Min.Y
		y1 := int(math.Ceil(max(ya, yb))) + 2*R + 1 + box.Min.Y
		for y := max(0, y0); y <= min(l.h-1, y1); y++ {
			for x := max(0, x0); x <= min(l.w-1, x1); x++ {
				i := y*l.w + x
				if !l.hole[i] {
					continue
				}
				dx, dy := float64(x-box.Min.X)-ln.cx, float64(y-box.Min.Y)-ln.cy
				s := dx*ln.nx + dy*ln.ny - ln.rho
				t := -dx*ln.ny + dy*ln.nx
				if math.Abs(s) > float64(R) {
					continue
				}
				k := int(math.Round(t)) - c.tA
				if k < 0 || k >= len(along) || along[k] == 0 {
					continue
				}
				sf := s + float64(W)
				r0 := max(lineBeside, min(W+R-1, int(sf)))
				fs := float32(sf - float64(r0))
				ok0, ok1 := c.colour(r0, t, nc, lo), c.colour(r0+1, t, nc, hi)
				switch {
				case ok0 && ok1:
					for ch := range px {
						px[ch] = lo[ch]*(1-fs) + hi[ch]*fs
					}
				case ok0:
					copy(px, lo)
				case ok1:
					copy(px, hi)
				default:
					continue
				}
				// Only within the crossing: between the rows' ends.
				ra := min(c.rowA[r0], c.rowA[r0+1])
				rb := max(c.rowB[r0], c.rowB[r0+1])
				if !ok0 {
					ra, rb = c.rowA[r0+1], c.rowB[r0+1]
				} else if !ok1 {
					ra, rb = c.rowA[r0], c.rowB[r0]
				}
				if t < float64(ra)-1 || t > float64(rb)+1 {
					continue
				}
				ws := along[k] * float32(max(0, min(1, (float64(R)+0.5-math.Abs(s))/feather)))
				dst := l.lin[i*nc : i*nc+nc]
				for ch := range dst {
					dst[ch] = ws*px[ch] + (1-ws)*dst[ch]
				}
				if ws > 0 {
					drawn++
				}
			}
		}
	}
	return drawn
}
