package perspective

import (
	"math"
	"sort"
)

// refineLMedS polishes a vertical vanishing direction by least weighted median of
// squares: among directions within a degree and a half of v0, it picks the one whose
// correction leaves the length-weighted median of |tilt| over the near-vertical
// segments smallest (smoothed: the mean of the 40 to 60 per cent quantiles), plus a
// slight preference for smaller corrections (levelPrior). The median ignores up to half the weight in outliers (curtain
// folds, furniture, clutter) where least squares is pulled toward them, and it
// optimizes exactly what a viewer sees: how vertical the verticals end up.
func refineLMedS(obs []lineObs, v0 [3]float64) [3]float64 {
	if len(obs) < 3 {
		return v0
	}
	v0 = unit(v0)
	ex := [3]float64{1, 0, 0}
	t1 := unit([3]float64{ex[0] - v0[0]*v0[0], -v0[0] * v0[1], -v0[0] * v0[2]})
	t2 := unit(cross(v0, t1))
	at := func(a, b float64) [3]float64 {
		return unit([3]float64{v0[0] + a*t1[0] + b*t2[0], v0[1] + a*t1[1] + b*t2[1], v0[2] + a*t1[2] + b*t2[2]})
	}
	sc := make([]wt, len(obs))
	cost := func(v [3]float64) (float64, float64) {
		m, t := lmedsCost(obs, v, sc)
		return m + levelPrior*math.Acos(math.Min(1, math.Abs(v[1]))), t
	}
	bestA, bestB := 0.0, 0.0
	bestM, bestT := cost(v0)
	deg := math.Pi / 180
	for _, pass := range []struct{ step, span float64 }{{0.1 * deg, 1.5 * deg}, {0.02 * deg, 0.12 * deg}, {0.004 * deg, 0.024 * deg}} {
		ca, cb := bestA, bestB
		for a := ca - pass.span; a <= ca+pass.span+1e-12; a += pass.step {
			for b := cb - pass.span; b <= cb+pass.span+1e-12; b += pass.step {
				m, t := cost(at(a, b))
				if m < bestM-1e-12 || (m <= bestM+1e-12 && t < bestT) {
					bestM, bestT, bestA, bestB = m, t, a, b
				}
			}
		}
	}
	return at(bestA, bestB)
}

// levelPrior adds this much median tan tilt per radian of correction (0.015 degrees of
// tilt per degree), so that of directions that fit about equally the smallest
// correction wins. When the verticals sit mostly on one side of the frame, pitch and
// roll trade against each other along a flat valley of the median, and which point of
// it wins is otherwise decided by a code value more or less in the decoded photo: the
// product's JPEG decoder and the standard library's put the kids' bedroom at 2.0 and
// 0.5 degrees. Across the valley the median rises by about half a degree per degree,
// thirty times the prior's slope, so a correction the lines do determine does not
// move (bedroom 156: 10.55 degrees either way). At 0.01 the valley still decides;
// from 0.015 to 0.04 the bedroom's estimate is the same.
const levelPrior = 0.015

type wt struct{ t, w float64 }

// lmedsCost returns the smoothed weighted median of |tan tilt| after correcting for v
// and, as a tie-break on the median's plateaus, the weighted mean of |tan tilt|
// capped at 2 degrees.
func lmedsCost(obs []lineObs, v [3]float64, sc []wt) (float64, float64) {
	r := rotationBetween(v, [3]float64{0, 1, 0}, 1)
	const capTan = 0.0349 // tan 2 degrees
	total, capped := 0.0, 0.0
	for i := range obs {
		p := rot(r, obs[i].p1)
		q := rot(r, obs[i].p2)
		dx := q[0]/q[2] - p[0]/p[2]
		dy := q[1]/q[2] - p[1]/p[2]
		t := math.Inf(1)
		if dy != 0 {
			t = math.Abs(dx / dy)
		}
		sc[i] = wt{t, obs[i].weight}
		total += obs[i].weight
		capped += obs[i].weight * math.Min(t, capTan)
	}
	sort.Slice(sc, func(i, j int) bool { return sc[i].t < sc[j].t })
	// The mean of the quantiles from 40 to 60 per cent: a median that one segment
	// more or less, found by another detector, does not move by a jump.
	lo, hi := 0.4*total, 0.6*total
	acc, sum := 0.0, 0.0
	for _, e := range sc {
		a, b := math.Max(acc, lo), math.Min(acc+e.w, hi)
		if b > a {
			sum += (b - a) * e.t
		}
		acc += e.w
		if acc >= hi {
			break
		}
	}
	return sum / (hi - lo), capped / total
}

func rot(r [9]float64, p [3]float64) [3]float64 {
	return [3]float64{
		r[0]*p[0] + r[1]*p[1] + r[2]*p[2],
		r[3]*p[0] + r[4]*p[1] + r[5]*p[2],
		r[6]*p[0] + r[7]*p[1] + r[8]*p[2],
	}
}
