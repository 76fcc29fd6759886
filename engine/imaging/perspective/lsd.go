package perspective

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// This file is a line segment detector after von Gioi, Jakubowicz, Morel and Randall,
// "LSD: a Line Segment Detector" (IPOL 2012): pixels whose level-line orientations
// agree are grown into regions, each region is approximated by a rectangle, and the
// rectangle is kept only when its count of aligned pixels is unlikely under a noise
// model (number of false alarms <= 1). It needs no thresholds tuned per photo, which
// is why it is used here instead of edge detection plus a Hough transform.

// segment is a detected line segment in the coordinates of the gray plane it was found
// in (pixel centers at integer+0.5).
type segment struct {
	X1, Y1, X2, Y2 float64
	Width          float64 // of the supporting rectangle, in pixels
	LogNFA         float64 // -log10(number of false alarms): higher is more certain
}

// length of the segment in pixels.
func (s segment) length() float64 { return math.Hypot(s.X2-s.X1, s.Y2-s.Y1) }

// tiltDeg is the signed angle between the segment and the image's vertical axis in
// degrees, in (-90, 90]; positive when the top leans right.
func (s segment) tiltDeg() float64 {
	dx, dy := s.X2-s.X1, s.Y2-s.Y1
	if dy > 0 || (dy == 0 && dx < 0) { // orient top to bottom: (dx, dy) points up
		dx, dy = -dx, -dy
	}
	// dy <= 0 now; a vertical segment pointing up has dx = 0.
	return math.Atan2(dx, -dy) * 180 / math.Pi
}

const (
	lsdNotDef   = -1024.0
	lsdAngTh    = 22.5 // angle tolerance in degrees
	lsdQuant    = 2.0  // bound on gradient quantization error (gray levels)
	lsdDensity  = 0.7  // minimal density of aligned points in a rectangle
	lsdBins     = 1024 // bins for the pseudo-ordering of gradient magnitudes
	lsdLogEps   = 0.0  // accept when -log10(NFA) > this
	lsdNotUsed  = 0
	lsdUsed     = 1
	lsdMaxWidth = 12.0 // wider rectangles are blobs, not lines
)

type lsdPoint struct{ x, y int32 }

type lsdRect struct {
	x1, y1, x2, y2 float64 // end points of the center line
	width          float64
	x, y           float64 // center
	theta          float64 // angle
	dx, dy         float64 // unit vector of theta
	prec           float64 // tolerance angle
	p              float64 // probability of an aligned point
}

// lsd holds the per-image state of one detection run.
type lsd struct {
	w, h    int
	angles  []float64
	modgrad []float64
	used    []uint8
	reg     []lsdPoint
	logNT   float64
}

// detectSegments finds line segments leaning at most maxLean degrees from vertical in
// a gray plane with values in 0..255 (perceptually encoded, as LSD's thresholds
// assume); maxLean >= 90 finds all. Pixels whose level line leans further than
// maxLean plus the region tolerance can never join such a segment, so they are left
// out from the start, which more than halves the work on a typical photo.
func detectSegments(gray []float32, w, h int, maxLean float64) []segment {
	if w < 3 || h < 3 || len(gray) < w*h {
		return nil
	}
	prec := math.Pi * lsdAngTh / 180
	p := lsdAngTh / 180
	rho := lsdQuant / math.Sin(prec)

	d := &lsd{w: w, h: h, angles: make([]float64, w*h), modgrad: make([]float64, w*h), used: make([]uint8, w*h)}
	// |gy| <= slope*|gx| keeps level lines within maxLean + tolerance of vertical.
	slope := math.Inf(1)
	if lim := maxLean + lsdAngTh + 5; lim < 90 {
		slope = math.Tan(lim * math.Pi / 180)
	}
	order := d.levelLineAngles(gray, rho, slope)
	d.logNT = 5*(math.Log10(float64(w))+math.Log10(float64(h)))/2 + math.Log10(11)
	minReg := int(-d.logNT / math.Log10(p))

	var out []segment
	d.reg = make([]lsdPoint, 0, 1024)
	for _, idx := range order {
		if d.used[idx] != lsdNotUsed || d.angles[idx] == lsdNotDef {
			continue
		}
		x, y := int(idx)%w, int(idx)/w
		regAngle := d.regionGrow(x, y, prec)
		if len(d.reg) < minReg {
			continue
		}
		rec := d.regionToRect(regAngle, prec, p)
		var ok bool
		rec, ok = d.refine(rec, prec, p)
		if !ok {
			continue
		}
		logNFA := d.rectImprove(&rec)
		if logNFA <= lsdLogEps || rec.width > lsdMaxWidth {
			continue
		}
		// The gradient was computed on 2x2 windows: shift to pixel-center coordinates.
		out = append(out, segment{
			X1: rec.x1 + 0.5, Y1: rec.y1 + 0.5, X2: rec.x2 + 0.5, Y2: rec.y2 + 0.5,
			Width: rec.width, LogNFA: logNFA,
		})
	}
	return out
}

// levelLineAngles fills angles and modgrad (rows in parallel bands) and returns pixel
// indices ordered by decreasing gradient magnitude (bucketed). Pixels with
// |gy| > slope*|gx| (level lines too far from vertical) get no angle.
func (d *lsd) levelLineAngles(in []float32, threshold, slope float64) []int32 {
	w, h := d.w, d.h
	for i := range d.angles {
		d.angles[i] = lsdNotDef
	}
	bandMax := make([]float64, imaging.Workers())
	imaging.Bands(h-1, func(worker, y0, y1 int) {
		m := 0.0
		for y := y0; y < y1; y++ {
			r0, r1 := in[y*w:], in[(y+1)*w:]
			for x := 0; x < w-1; x++ {
				com1 := float64(r1[x+1] - r0[x])
				com2 := float64(r0[x+1] - r1[x])
				gx, gy := com1+com2, com1-com2
				norm := math.Sqrt((gx*gx + gy*gy) / 4)
				i := y*w + x
				d.modgrad[i] = norm
				if norm > threshold && math.Abs(gy) <= slope*math.Abs(gx) {
					d.angles[i] = math.Atan2(gx, -gy)
					m = math.Max(m, norm)
				}
			}
		}
		bandMax[worker] = m
	})
	maxGrad := 0.0
	for _, m := range bandMax {
		maxGrad = math.Max(maxGrad, m)
	}
	if maxGrad == 0 {
		return nil
	}
	// Counting sort into bins, highest first.
	var counts [lsdBins + 1]int
	binOf := func(v float64) int {
		b := int(v * lsdBins / maxGrad)
		if b >= lsdBins {
			b = lsdBins - 1
		}
		return lsdBins - 1 - b
	}
	n := 0
	for i, a := range d.angles {
		if a != lsdNotDef {
			counts[binOf(d.modgrad[i])+1]++
			n++
		}
	}
	for b := 1; b <= lsdBins; b++ {
		counts[b] += counts[b-1]
	}
	order := make([]int32, n)
	for i, a := range d.angles {
		if a != lsdNotDef {
			b := binOf(d.modgrad[i])
			order[counts[b]] = int32(i)
			counts[b]++
		}
	}
	return order
}

func angleDiff(a, b float64) float64 {
	a -= b
	for a <= -math.Pi {
		a += 2 * math.Pi
	}
	for a > math.Pi {
		a -= 2 * math.Pi
	}
	return math.Abs(a)
}

func angleDiffSigned(a, b float64) float64 {
	a -= b
	for a <= -math.Pi {
		a += 2 * math.Pi
	}
	for a > math.Pi {
		a -= 2 * math.Pi
	}
	return a
}

func (d *lsd) aligned(i int, theta, prec float64) bool {
	a := d.angles[i]
	if a == lsdNotDef {
		return false
	}
	// Both angles lie in [-pi, pi], so the difference needs at most one wrap.
	a -= theta
	if a < 0 {
		a = -a
	}
	if a > math.Pi {
		a = 2*math.Pi - a
	}
	return a <= prec
}

// regionGrow collects into d.reg the connected pixels aligned with the seed's growing
// mean orientation and returns that orientation.
func (d *lsd) regionGrow(x, y int, prec float64) float64 {
	w, h := d.w, d.h
	d.reg = d.reg[:0]
	i := y*w + x
	d.reg = append(d.reg, lsdPoint{int32(x), int32(y)})
	regAngle := d.angles[i]
	sumdx, sumdy := math.Cos(regAngle), math.Sin(regAngle)
	d.used[i] = lsdUsed
	for k := 0; k < len(d.reg); k++ {
		px, py := int(d.reg[k].x), int(d.reg[k].y)
		for yy := py - 1; yy <= py+1; yy++ {
			if yy < 0 || yy >= h {
				continue
			}
			for xx := px - 1; xx <= px+1; xx++ {
				if xx < 0 || xx >= w {
					continue
				}
				j := yy*w + xx
				if d.used[j] != lsdUsed && d.aligned(j, regAngle, prec) {
					d.used[j] = lsdUsed
					d.reg = append(d.reg, lsdPoint{int32(xx), int32(yy)})
					sumdx += math.Cos(d.angles[j])
					sumdy += math.Sin(d.angles[j])
					regAngle = math.Atan2(sumdy, sumdx)
				}
			}
		}
	}
	return regAngle
}

// regionToRect approximates the region by a rectangle: center of mass and principal
// axis weighted by gradient magnitude.
func (d *lsd) regionToRect(regAngle, prec, p float64) lsdRect {
	var x, y, sum float64
	for _, q := range d.reg {
		wgt := d.modgrad[int(q.y)*d.w+int(q.x)]
		x += float64(q.x) * wgt
		y += float64(q.y) * wgt
		sum += wgt
	}
	x /= sum
	y /= sum
	theta := d.regionTheta(x, y, regAngle, prec)
	dx, dy := math.Cos(theta), math.Sin(theta)
	var lMin, lMax, wMin, wMax float64
	for _, q := range d.reg {
		l := (float64(q.x)-x)*dx + (float64(q.y)-y)*dy
		ww := -(float64(q.x)-x)*dy + (float64(q.y)-y)*dx
		lMin, lMax = math.Min(lMin, l), math.Max(lMax, l)
		wMin, wMax = math.Min(wMin, ww), math.Max(wMax, ww)
	}
	r := lsdRect{
		x1: x + lMin*dx, y1: y + lMin*dy, x2: x + lMax*dx, y2: y + lMax*dy,
		width: wMax - wMin, x: x, y: y, theta: theta, dx: dx, dy: dy, prec: prec, p: p,
	}
	if r.width < 1 {
		r.width = 1
	}
	return r
}

func (d *lsd) regionTheta(x, y, regAngle, prec float64) float64 {
	var ixx, iyy, ixy float64
	for _, q := range d.reg {
		wgt := d.modgrad[int(q.y)*d.w+int(q.x)]
		fx, fy := float64(q.x)-x, float64(q.y)-y
		ixx += fy * fy * wgt
		iyy += fx * fx * wgt
		ixy -= fx * fy * wgt
	}
	lambda := 0.5 * (ixx + iyy - math.Sqrt((ixx-iyy)*(ixx-iyy)+4*ixy*ixy))
	var theta float64
	if math.Abs(ixx) > math.Abs(iyy) {
		theta = math.Atan2(lambda-ixx, ixy)
	} else {
		theta = math.Atan2(ixy, lambda-iyy)
	}
	if angleDiff(theta, regAngle) > prec {
		theta += math.Pi
	}
	return theta
}

func (r *lsdRect) length() float64 { return math.Hypot(r.x2-r.x1, r.y2-r.y1) }

// refine tightens a region whose rectangle is too sparse: first by regrowing with an
// angle tolerance estimated near the seed, then by shrinking its radius.
func (d *lsd) refine(rec lsdRect, prec, p float64) (lsdRect, bool) {
	density := float64(len(d.reg)) / (rec.length() * rec.width)
	if density >= lsdDensity {
		return rec, true
	}
	seed := d.reg[0]
	xc, yc := float64(seed.x), float64(seed.y)
	angC := d.angles[int(seed.y)*d.w+int(seed.x)]
	var sum, sSum float64
	n := 0
	for _, q := range d.reg {
		d.used[int(q.y)*d.w+int(q.x)] = lsdNotUsed
		if math.Hypot(xc-float64(q.x), yc-float64(q.y)) < rec.width {
			a := angleDiffSigned(d.angles[int(q.y)*d.w+int(q.x)], angC)
			sum += a
			sSum += a * a
			n++
		}
	}
	if n == 0 {
		return rec, false
	}
	mean := sum / float64(n)
	tau := 2 * math.Sqrt(math.Max(0, (sSum-2*mean*sum)/float64(n)+mean*mean))
	regAngle := d.regionGrow(int(seed.x), int(seed.y), tau)
	if len(d.reg) < 2 {
		return rec, false
	}
	rec = d.regionToRect(regAngle, prec, p)
	density = float64(len(d.reg)) / (rec.length() * rec.width)
	if density < lsdDensity {
		return d.reduceRadius(rec, regAngle, prec, p)
	}
	return rec, true
}

func (d *lsd) reduceRadius(rec lsdRect, regAngle, prec, p float64) (lsdRect, bool) {
	seed := d.reg[0]
	xc, yc := float64(seed.x), float64(seed.y)
	rad := math.Max(math.Hypot(xc-rec.x1, yc-rec.y1), math.Hypot(xc-rec.x2, yc-rec.y2))
	density := float64(len(d.reg)) / (rec.length() * rec.width)
	for density < lsdDensity {
		rad *= 0.75
		kept := d.reg[:0]
		for _, q := range d.reg {
			if math.Hypot(xc-float64(q.x), yc-float64(q.y)) <= rad {
				kept = append(kept, q)
			} else {
				d.used[int(q.y)*d.w+int(q.x)] = lsdNotUsed
			}
		}
		d.reg = kept
		if len(d.reg) < 2 {
			return rec, false
		}
		rec = d.regionToRect(regAngle, prec, p)
		density = float64(len(d.reg)) / (rec.length() * rec.width)
	}
	return rec, true
}

// rectNFA counts the pixels inside the rectangle and those aligned with it, and
// returns -log10(NFA).
func (d *lsd) rectNFA(r *lsdRect) float64 {
	half := r.width / 2
	// Corners of the rectangle, for its bounding box.
	cx := [4]float64{r.x1 - r.dy*half, r.x2 - r.dy*half, r.x2 + r.dy*half, r.x1 + r.dy*half}
	cy := [4]float64{r.y1 + r.dx*half, r.y2 + r.dx*half, r.y2 - r.dx*half, r.y1 - r.dx*half}
	x0, x1 := math.Floor(min(cx[0], cx[1], cx[2], cx[3])), math.Ceil(max(cx[0], cx[1], cx[2], cx[3]))
	y0, y1 := math.Floor(min(cy[0], cy[1], cy[2], cy[3])), math.Ceil(max(cy[0], cy[1], cy[2], cy[3]))
	lLo := (r.x1-r.x)*r.dx + (r.y1-r.y)*r.dy
	lHi := (r.x2-r.x)*r.dx + (r.y2-r.y)*r.dy
	if lLo > lHi {
		lLo, lHi = lHi, lLo
	}
	// The perpendicular offset of the center line from the rectangle center (nonzero
	// after one-sided width reduction).
	off := -(r.x1-r.x)*r.dy + (r.y1-r.y)*r.dx
	n, k := 0, 0
	for y := max(0, int(y0)); y <= min(d.h-1, int(y1)); y++ {
		for x := max(0, int(x0)); x <= min(d.w-1, int(x1)); x++ {
			fx, fy := float64(x)-r.x, float64(y)-r.y
			l := fx*r.dx + fy*r.dy
			ww := -fx*r.dy + fy*r.dx - off
			if l < lLo-0.5 || l > lHi+0.5 || ww < -half || ww > half {
				continue
			}
			n++
			if d.aligned(y*d.w+x, r.theta, r.prec) {
				k++
			}
		}
	}
	return nfa(n, k, r.p, d.logNT)
}

// nfa returns -log10(NFA) for k aligned points among n with probability p each.
func nfa(n, k int, p, logNT float64) float64 {
	if n == 0 || k == 0 {
		return -logNT
	}
	if n == k {
		return -logNT - float64(n)*math.Log10(p)
	}
	pTerm := p / (1 - p)
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	fn, fk := float64(n), float64(k)
	log1 := lg(fn+1) - lg(fk+1) - lg(fn-fk+1) + fk*math.Log(p) + (fn-fk)*math.Log(1-p)
	term := math.Exp(log1)
	if term == 0 || math.Abs(term) < 1e-300 {
		if fk > fn*p {
			return -log1/math.Ln10 - logNT
		}
		return -logNT
	}
	binTail := term
	const tolerance = 0.1
	for i := k + 1; i <= n; i++ {
		binTerm := float64(n-i+1) / float64(i)
		multTerm := binTerm * pTerm
		term *= multTerm
		binTail += term
		if binTerm < 1 {
			err := term * ((1-math.Pow(multTerm, float64(n-i+1)))/(1-multTerm) - 1)
			if err < tolerance*math.Abs(-math.Log10(binTail)-logNT)*binTail {
				break
			}
		}
	}
	return -math.Log10(binTail) - logNT
}

// rectImprove tries finer angle tolerances and thinner rectangles to raise the
// rectangle's significance, keeping the best variant in rec.
func (d *lsd) rectImprove(rec *lsdRect) float64 {
	const delta = 0.5
	best := d.rectNFA(rec)
	if best > lsdLogEps {
		return best
	}
	try := func(mut func(r *lsdRect) bool) {
		r := *rec
		for n := 0; n < 5; n++ {
			if !mut(&r) {
				break
			}
			if v := d.rectNFA(&r); v > best {
				best = v
				*rec = r
			}
		}
	}
	finer := func(r *lsdRect) bool { r.p /= 2; r.prec = r.p * math.Pi; return true }
	try(finer)
	if best > lsdLogEps {
		return best
	}
	try(func(r *lsdRect) bool {
		if r.width-delta < 0.5 {
			return false
		}
		r.width -= delta
		return true
	})
	if best > lsdLogEps {
		return best
	}
	for _, side := range []float64{1, -1} {
		try(func(r *lsdRect) bool {
			if r.width-delta < 0.5 {
				return false
			}
			r.x1 += -r.dy * delta / 2 * side
			r.y1 += r.dx * delta / 2 * side
			r.x2 += -r.dy * delta / 2 * side
			r.y2 += r.dx * delta / 2 * side
			r.width -= delta
			return true
		})
		if best > lsdLogEps {
			return best
		}
	}
	try(finer)
	return best
}
