package perspective

import (
	"math"
	"sort"
)

// lineObs is one near-vertical segment prepared for vanishing point estimation, in
// camera coordinates normalized by the focal length (principal point at 0).
type lineObs struct {
	line   [3]float64 // unit normal of the plane through the camera center and the segment
	p1, p2 [3]float64 // end points (z = 1)
	mid    [2]float64 // midpoint
	dir    [2]float64 // unit direction
	length float64    // in estimation-plane pixels
	weight float64    // how much the segment counts
	tol    float64    // angular tolerance (radians) for counting it as an inlier
	sinTol float64    // its sine
}

// vpFit is the result of fitting a vertical vanishing direction.
type vpFit struct {
	dir     [3]float64 // unit vanishing direction, y component > 0
	inliers []bool
	support float64 // total length of inlier segments
	total   float64 // total length of all segments
	count   int
}

const (
	// maxLean bounds how far from vertical a segment may lean to be considered. The
	// converging verticals of a camera tilted 30 degrees lean up to about 25 degrees at
	// the image edges with a wide lens.
	maxLeanDeg = 30.0
	// maxCorrection bounds the camera rotation the model may undo: a vertical
	// vanishing direction further than this from the image's y axis is not a building's.
	maxCorrectionDeg = 40.0
)

// consistency returns the angle (radians) between the observed segment direction and
// the direction from its midpoint toward the vanishing direction v.
func (o *lineObs) consistency(v [3]float64) float64 {
	return math.Asin(math.Min(1, o.sinConsistency(v)))
}

// sinConsistency is the sine of consistency, cheaper for scoring many candidates.
func (o *lineObs) sinConsistency(v [3]float64) float64 {
	// Direction from the midpoint toward v in the image plane: for a finite vanishing
	// point V = v/vz it is V - m, scaled by vz to stay valid at infinity.
	ex := v[0] - o.mid[0]*v[2]
	ey := v[1] - o.mid[1]*v[2]
	n2 := ex*ex + ey*ey
	if n2 == 0 {
		return 1
	}
	return math.Abs(ex*o.dir[1]-ey*o.dir[0]) / math.Sqrt(n2)
}

// fitVertical finds the vertical vanishing direction supported by the most segment
// length: every pair among the longest segments proposes an intersection (exhaustively,
// so results are deterministic), candidates are scored with a truncated quadratic
// loss on angular consistency, and the best is refined by iteratively reweighted
// least squares on the Gaussian sphere. Slanted curtains, furniture and clutter do
// not share one vanishing point with the architecture, so they fall out as outliers.
func fitVertical(obs []lineObs) (vpFit, bool) {
	if len(obs) < 2 {
		return vpFit{}, false
	}
	idx := make([]int, len(obs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return obs[idx[a]].length > obs[idx[b]].length })
	const proposers = 64
	if len(idx) > proposers {
		idx = idx[:proposers]
	}
	cosMax := math.Cos(maxCorrectionDeg * math.Pi / 180)
	score := func(v [3]float64) float64 {
		s := 0.0
		for i := range obs {
			e := obs[i].sinConsistency(v) / obs[i].sinTol
			if e < 1 {
				s += obs[i].weight * (1 - e*e)
			}
		}
		return s
	}
	best, bestScore := [3]float64{}, -1.0
	for a := 0; a < len(idx); a++ {
		for b := a + 1; b < len(idx); b++ {
			v := cross(obs[idx[a]].line, obs[idx[b]].line)
			if norm(v) < 1e-12 {
				continue
			}
			v = unit(v)
			if v[1] < 0 {
				v = [3]float64{-v[0], -v[1], -v[2]}
			}
			if v[1] < cosMax {
				continue
			}
			if s := score(v); s > bestScore {
				best, bestScore = v, s
			}
		}
	}
	if bestScore <= 0 {
		return vpFit{}, false
	}
	v := best
	inl := make([]bool, len(obs))
	for iter := 0; iter < 6; iter++ {
		var m [9]float64
		any := 0
		for i := range obs {
			e := obs[i].consistency(v) / obs[i].tol
			inl[i] = e < 1
			if !inl[i] {
				continue
			}
			any++
			w := obs[i].weight * (1 - e*e*0.5)
			l := obs[i].line
			for r := 0; r < 3; r++ {
				for c := 0; c < 3; c++ {
					m[3*r+c] += w * l[r] * l[c]
				}
			}
		}
		if any < 2 {
			break
		}
		nv := smallestEigenvector(m)
		if nv[1] < 0 {
			nv = [3]float64{-nv[0], -nv[1], -nv[2]}
		}
		if nv[1] < cosMax {
			break
		}
		if score(nv) < score(v)*0.98 {
			break
		}
		done := dot(nv, v) > 1-1e-14
		v = nv
		if done {
			break
		}
	}
	fit := vpFit{dir: v, inliers: make([]bool, len(obs))}
	for i := range obs {
		fit.total += obs[i].length
		if obs[i].consistency(v) < obs[i].tol {
			fit.inliers[i] = true
			fit.support += obs[i].length
			fit.count++
		}
	}
	return fit, true
}

// smallestEigenvector returns the unit eigenvector of the symmetric 3x3 matrix m with
// the smallest eigenvalue (cyclic Jacobi rotations).
func smallestEigenvector(m [9]float64) [3]float64 {
	a := m
	v := [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	for sweep := 0; sweep < 50; sweep++ {
		off := a[1]*a[1] + a[2]*a[2] + a[5]*a[5]
		if off < 1e-30 {
			break
		}
		for _, pq := range [3][2]int{{0, 1}, {0, 2}, {1, 2}} {
			p, q := pq[0], pq[1]
			apq := a[3*p+q]
			if math.Abs(apq) < 1e-300 {
				continue
			}
			app, aqq := a[3*p+p], a[3*q+q]
			theta := (aqq - app) / (2 * apq)
			t := math.Copysign(1, theta) / (math.Abs(theta) + math.Sqrt(theta*theta+1))
			c := 1 / math.Sqrt(t*t+1)
			s := t * c
			for k := 0; k < 3; k++ { // A = J^T A J
				akp, akq := a[3*k+p], a[3*k+q]
				a[3*k+p] = c*akp - s*akq
				a[3*k+q] = s*akp + c*akq
			}
			for k := 0; k < 3; k++ {
				apk, aqk := a[3*p+k], a[3*q+k]
				a[3*p+k] = c*apk - s*aqk
				a[3*q+k] = s*apk + c*aqk
			}
			for k := 0; k < 3; k++ {
				vkp, vkq := v[3*k+p], v[3*k+q]
				v[3*k+p] = c*vkp - s*vkq
				v[3*k+q] = s*vkp + c*vkq
			}
		}
	}
	k := 0
	for i := 1; i < 3; i++ {
		if a[4*i] < a[4*k] {
			k = i
		}
	}
	return unit([3]float64{v[k], v[3+k], v[6+k]})
}
