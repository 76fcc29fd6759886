package align

import (
	"math"
	"math/rand/v2"
	"sort"
)

// fitTranslation estimates a translation robustly: the median displacement, then the
// mean over the matches within inlierDist of it. It returns the translation, the
// inliers and their RMS residual.
func fitTranslation(ms []match, inlierDist float64) (Mat3, []match, float64) {
	dx := make([]float64, len(ms))
	dy := make([]float64, len(ms))
	for i, m := range ms {
		dx[i], dy[i] = m.sx-m.tx, m.sy-m.ty
	}
	mx, my := median(dx), median(dy)
	var in []match
	for i := 0; i < 3; i++ {
		in = in[:0]
		var sx, sy float64
		for _, m := range ms {
			if math.Hypot(m.sx-m.tx-mx, m.sy-m.ty-my) <= inlierDist {
				in = append(in, m)
				sx += m.sx - m.tx
				sy += m.sy - m.ty
			}
		}
		if len(in) == 0 {
			break
		}
		mx, my = sx/float64(len(in)), sy/float64(len(in))
	}
	t := Translation(mx, my)
	return t, in, rms(t, in)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// rms is the root mean square reprojection error of the matches under m.
func rms(m Mat3, ms []match) float64 {
	if len(ms) == 0 {
		return math.Inf(1)
	}
	var s float64
	for _, p := range ms {
		x, y := m.Apply(p.tx, p.ty)
		s += (x-p.sx)*(x-p.sx) + (y-p.sy)*(y-p.sy)
	}
	return math.Sqrt(s / float64(len(ms)))
}

// fitHomography estimates a homography by RANSAC over minimal four-point samples
// (seeded, so the same input gives the same answer) and a least-squares refit on the
// inliers.
func fitHomography(ms []match, inlierDist float64) (Mat3, []match, bool) {
	if len(ms) < 8 {
		return Identity, nil, false
	}
	rng := rand.New(rand.NewPCG(0x706f7263, 0x686c6967))
	best := -1
	var bestH Mat3
	sample := make([]match, 4)
	for it := 0; it < 400; it++ {
		for i := range sample {
			sample[i] = ms[rng.IntN(len(ms))]
		}
		h, ok := solveHomography(sample)
		if !ok {
			continue
		}
		n := 0
		for _, m := range ms {
			if reproj(h, m) <= inlierDist {
				n++
			}
		}
		if n > best {
			best, bestH = n, h
		}
	}
	if best < 8 {
		return Identity, nil, false
	}
	h := bestH
	var in []match
	for i := 0; i < 3; i++ {
		in = in[:0]
		for _, m := range ms {
			if reproj(h, m) <= inlierDist {
				in = append(in, m)
			}
		}
		nh, ok := solveHomography(in)
		if !ok {
			break
		}
		h = nh
	}
	return h, in, len(in) >= 8
}

func reproj(h Mat3, m match) float64 {
	x, y := h.Apply(m.tx, m.ty)
	return math.Hypot(x-m.sx, y-m.sy)
}

// solveHomography fits h (with h33 = 1) mapping target to source points by linear
// least squares on coordinates normalized to their centroid and spread.
func solveHomography(ms []match) (Mat3, bool) {
	if len(ms) < 4 {
		return Identity, false
	}
	nt := normalizer(ms, false)
	ns := normalizer(ms, true)
	var A [8][8]float64
	var B [8]float64
	for _, m := range ms {
		x, y := nt.Apply(m.tx, m.ty)
		u, v := ns.Apply(m.sx, m.sy)
		rows := [2][8]float64{
			{x, y, 1, 0, 0, 0, -u * x, -u * y},
			{0, 0, 0, x, y, 1, -v * x, -v * y},
		}
		rhs := [2]float64{u, v}
		for r := 0; r < 2; r++ {
			for a := 0; a < 8; a++ {
				B[a] += rows[r][a] * rhs[r]
				for b := 0; b < 8; b++ {
					A[a][b] += rows[r][a] * rows[r][b]
				}
			}
		}
	}
	h, ok := solve8(A, B)
	if !ok {
		return Identity, false
	}
	hn := Mat3{h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], 1}
	nsInv, ok := ns.Inverse()
	if !ok {
		return Identity, false
	}
	res := nsInv.Mul(hn).Mul(nt).normalized()
	for _, v := range res {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Identity, false
		}
	}
	return res, true
}

// normalizer moves the (source or target) points' centroid to the origin and scales
// their mean distance to √2 (Hartley's normalization).
func normalizer(ms []match, source bool) Mat3 {
	var cx, cy float64
	for _, m := range ms {
		x, y := m.tx, m.ty
		if source {
			x, y = m.sx, m.sy
		}
		cx += x
		cy += y
	}
	n := float64(len(ms))
	cx, cy = cx/n, cy/n
	var d float64
	for _, m := range ms {
		x, y := m.tx, m.ty
		if source {
			x, y = m.sx, m.sy
		}
		d += math.Hypot(x-cx, y-cy)
	}
	d /= n
	if d == 0 {
		d = 1
	}
	s := math.Sqrt2 / d
	return Mat3{s, 0, -s * cx, 0, s, -s * cy, 0, 0, 1}
}

func solve8(A [8][8]float64, B [8]float64) ([8]float64, bool) {
	var x [8]float64
	for c := 0; c < 8; c++ {
		p := c
		for r := c + 1; r < 8; r++ {
			if math.Abs(A[r][c]) > math.Abs(A[p][c]) {
				p = r
			}
		}
		if math.Abs(A[p][c]) < 1e-12 {
			return x, false
		}
		A[c], A[p] = A[p], A[c]
		B[c], B[p] = B[p], B[c]
		for r := c + 1; r < 8; r++ {
			f := A[r][c] / A[c][c]
			for k := c; k < 8; k++ {
				A[r][k] -= f * A[c][k]
			}
			B[r] -= f * B[c]
		}
	}
	for r := 7; r >= 0; r-- {
		s := B[r]
		for k := r + 1; k < 8; k++ {
			s -= A[r][k] * x[k]
		}
		x[r] = s / A[r][r]
	}
	return x, true
}
