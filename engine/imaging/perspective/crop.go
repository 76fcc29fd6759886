package perspective

import (
	"fmt"
	"math"
)

// cropRect is an axis-aligned rectangle in output-plane coordinates.
type cropRect struct{ X0, Y0, X1, Y1 float64 }

// largestInscribed returns the largest axis-aligned rectangle with aspect ratio
// aspect (width/height) inside the convex quadrilateral q (corners in order). Each
// quad edge gives one linear constraint on (center x, center y, half-height s), taken
// at the rectangle corner that reaches furthest across that edge, so the problem is a
// linear program in three unknowns with four constraints: its optimum lies where three
// of them meet, and the four triples are enumerated.
func largestInscribed(q [4][2]float64, aspect float64) (cropRect, error) {
	// Orient counter-clockwise in a y-up sense is irrelevant: use the signed area to
	// make every edge's inward normal point into the quad.
	area := 0.0
	for i := 0; i < 4; i++ {
		j := (i + 1) % 4
		area += q[i][0]*q[j][1] - q[j][0]*q[i][1]
	}
	if math.Abs(area) < 1e-9 || math.IsNaN(area) {
		return cropRect{}, fmt.Errorf("perspective: degenerate warped frame")
	}
	sign := 1.0
	if area < 0 {
		sign = -1
	}
	// Constraint k: a*cx + b*cy + c*s <= d, with the rectangle half-width = aspect*s.
	var A [4][3]float64
	var D [4]float64
	for i := 0; i < 4; i++ {
		j := (i + 1) % 4
		ex, ey := q[j][0]-q[i][0], q[j][1]-q[i][1]
		// Outward normal for a positively oriented polygon is (ey, -ex).
		nx, ny := sign*ey, -sign*ex
		n := math.Hypot(nx, ny)
		nx, ny = nx/n, ny/n
		A[i] = [3]float64{nx, ny, math.Abs(nx)*aspect + math.Abs(ny)}
		D[i] = nx*q[i][0] + ny*q[i][1]
		// Convexity: the other two corners must lie inside this edge.
		for k := 0; k < 4; k++ {
			if k != i && k != j && nx*q[k][0]+ny*q[k][1] > D[i]+1e-9*math.Abs(area) {
				return cropRect{}, fmt.Errorf("perspective: warped frame is not convex")
			}
		}
	}
	bestS := -1.0
	var best [3]float64
	for skip := 0; skip < 4; skip++ {
		var m [3][3]float64
		var rhs [3]float64
		r := 0
		for i := 0; i < 4; i++ {
			if i == skip {
				continue
			}
			m[r] = A[i]
			rhs[r] = D[i]
			r++
		}
		sol, ok := solve3(m, rhs)
		if !ok || !(sol[2] > 0) {
			continue
		}
		feasible := true
		for i := 0; i < 4; i++ {
			if A[i][0]*sol[0]+A[i][1]*sol[1]+A[i][2]*sol[2] > D[i]+1e-7*(1+math.Abs(D[i])) {
				feasible = false
				break
			}
		}
		if feasible && sol[2] > bestS {
			bestS, best = sol[2], sol
		}
	}
	if bestS <= 0 {
		// Degenerate optimum (a family of centers): shrink around the centroid instead.
		cx := (q[0][0] + q[1][0] + q[2][0] + q[3][0]) / 4
		cy := (q[0][1] + q[1][1] + q[2][1] + q[3][1]) / 4
		s := math.Inf(1)
		for i := 0; i < 4; i++ {
			s = math.Min(s, (D[i]-A[i][0]*cx-A[i][1]*cy)/A[i][2])
		}
		if !(s > 0) {
			return cropRect{}, fmt.Errorf("perspective: no rectangle fits the warped frame")
		}
		best, bestS = [3]float64{cx, cy, s}, s
	}
	hw, hh := best[2]*aspect, best[2]
	return cropRect{best[0] - hw, best[1] - hh, best[0] + hw, best[1] + hh}, nil
}

// solve3 solves m x = r by Cramer's rule.
func solve3(m [3][3]float64, r [3]float64) ([3]float64, bool) {
	det := func(a [3][3]float64) float64 {
		return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
			a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
			a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
	}
	d := det(m)
	if math.Abs(d) < 1e-12 {
		return [3]float64{}, false
	}
	var x [3]float64
	for c := 0; c < 3; c++ {
		mc := m
		for i := 0; i < 3; i++ {
			mc[i][c] = r[i]
		}
		x[c] = det(mc) / d
	}
	return x, true
}
