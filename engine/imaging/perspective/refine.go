package perspective

import (
	"math"
)

// refineNearVertical re-fits a near-vertical segment to sub-pixel edge positions: on
// every row it crosses, the edge is located at the peak of the horizontal gradient
// (of the segment's polarity) with a parabolic fit, and a line x = a*y + b is fitted
// to those peaks by weighted least squares with outlier rejection. LSD's region
// inertia is accurate to about a degree on short segments; this brings a 50-pixel
// edge to a few hundredths, which both the vanishing point and tilt measurements
// need. ok is false when too few rows hold a clear edge.
func refineNearVertical(gray []float32, w, h int, s segment) (segment, bool) {
	if s.Y1 > s.Y2 {
		s.X1, s.Y1, s.X2, s.Y2 = s.X2, s.Y2, s.X1, s.Y1
	}
	dy := s.Y2 - s.Y1
	if dy < 4 {
		return s, false
	}
	slope := (s.X2 - s.X1) / dy
	// Search half-width: the supporting rectangle plus a pixel.
	r := int(math.Ceil(s.Width/2)) + 1
	r = min(max(r, 2), 5)
	j0 := int(math.Ceil(s.Y1 - 0.5 + 1))
	j1 := int(math.Floor(s.Y2 - 0.5 - 1))
	j0, j1 = max(j0, 0), min(j1, h-1)
	n := j1 - j0 + 1
	if n < 4 {
		return s, false
	}
	ys := make([]float64, 0, n)
	xs := make([]float64, 0, n)
	ws := make([]float64, 0, n)
	// Polarity: the sign of the mean horizontal gradient along the predicted line.
	pol := 0.0
	for j := j0; j <= j1; j++ {
		xc := s.X1 + slope*(float64(j)+0.5-s.Y1) - 0.5
		i := int(math.Round(xc))
		if i >= 1 && i < w-1 {
			pol += float64(gray[j*w+i+1] - gray[j*w+i-1])
		}
	}
	if pol == 0 {
		return s, false
	}
	sign := float32(1)
	if pol < 0 {
		sign = -1
	}
	var prof [11]float32
	for j := j0; j <= j1; j++ {
		xc := s.X1 + slope*(float64(j)+0.5-s.Y1) - 0.5
		ic := int(math.Round(xc))
		if ic-r-1 < 1 || ic+r+1 >= w-1 {
			continue
		}
		row := gray[j*w:]
		best, bi := float32(0), -1
		for k := -r; k <= r; k++ {
			i := ic + k
			g := sign * (row[i+1] - row[i-1]) * 0.5
			prof[k+r] = g
			if g > best {
				best, bi = g, k
			}
		}
		if bi <= -r || bi >= r || best < 2 {
			continue // peak on the window border: no clean edge on this row
		}
		a, b, c := prof[bi+r-1], prof[bi+r], prof[bi+r+1]
		den := a - 2*b + c
		off := 0.0
		if den < 0 {
			off = float64(0.5 * (a - c) / den)
		}
		ys = append(ys, float64(j)+0.5)
		xs = append(xs, float64(ic+bi)+off+0.5)
		ws = append(ws, float64(best))
	}
	if len(ys) < max(4, n/2) {
		return s, false
	}
	ym := (s.Y1 + s.Y2) / 2
	a, b, ok := fitLine(ys, xs, ws, ym)
	if !ok {
		return s, false
	}
	// Reject rows more than a pixel off, then fit again.
	k := 0
	for i := range ys {
		if math.Abs(xs[i]-(a*(ys[i]-ym)+b)) <= 1 {
			ys[k], xs[k], ws[k] = ys[i], xs[i], ws[i]
			k++
		}
	}
	if k < max(4, n/2) {
		return s, false
	}
	a, b, ok = fitLine(ys[:k], xs[:k], ws[:k], ym)
	if !ok {
		return s, false
	}
	s.X1 = a*(s.Y1-ym) + b
	s.X2 = a*(s.Y2-ym) + b
	return s, true
}

// fitLine fits x = a*(y-ym) + b by weighted least squares.
func fitLine(ys, xs, ws []float64, ym float64) (a, b float64, ok bool) {
	var sw, sy, sx, syy, sxy float64
	for i := range ys {
		y := ys[i] - ym
		sw += ws[i]
		sy += ws[i] * y
		sx += ws[i] * xs[i]
		syy += ws[i] * y * y
		sxy += ws[i] * y * xs[i]
	}
	den := sw*syy - sy*sy
	if sw == 0 || math.Abs(den) < 1e-12 {
		return 0, 0, false
	}
	a = (sw*sxy - sy*sx) / den
	b = (sx - a*sy) / sw
	return a, b, true
}

// nearVertical detects segments in the gray plane and returns those leaning at most
// maxLean degrees from vertical and at least minLen long, re-fitted to sub-pixel
// edges where the edge is clean enough.
func nearVertical(gray []float32, w, h int, maxLean, minLen float64) []segment {
	var out []segment
	for _, s := range detectSegments(gray, w, h, maxLean) {
		if s.length() < minLen || math.Abs(s.tiltDeg()) > maxLean {
			continue
		}
		if r, ok := refineNearVertical(gray, w, h, s); ok {
			s = r
		}
		out = append(out, s)
	}
	return out
}
