package perspective

import (
	"fmt"
	"math"
	"strings"
)

// Frame says what a correction does to the frame: how much of the photo the output
// still shows and how unevenly it is magnified.
type Frame struct {
	// KeptArea is the share of the source photo's area that the output shows (1 for no
	// correction).
	KeptArea float64
	// Stretch is the ratio of the largest to the smallest local magnification of the
	// source anywhere in the output, over all directions: 1 for a uniform scale or a
	// rotation, 1.3 when the top of the frame is enlarged 30 % more than the bottom.
	Stretch float64
}

// frameOf measures the correction total (source pixel coordinates to W x H output
// coordinates). ok is false when part of the output maps to infinity.
func frameOf(total Homography, W, H int) (Frame, bool) {
	inv, err := total.Inverse()
	if err != nil {
		return Frame{}, false
	}
	w, h := float64(W), float64(H)
	var q [4][2]float64
	for i, p := range [4][2]float64{{0, 0}, {w, 0}, {w, h}, {0, h}} {
		x, y, ok := inv.Apply(p[0], p[1])
		if !ok {
			return Frame{}, false
		}
		q[i] = [2]float64{x, y}
	}
	area := 0.0
	for i := 0; i < 4; i++ {
		j := (i + 1) % 4
		area += q[i][0]*q[j][1] - q[j][0]*q[i][1]
	}
	f := Frame{KeptArea: math.Abs(area) / 2 / (w * h)}
	// The local magnification of a homography changes monotonically along any line,
	// so its extremes over the frame lie on the border: a 9 x 9 lattice finds them to
	// well under a per cent.
	lo, hi := math.Inf(1), 0.0
	const n = 8
	for i := 0; i <= n; i++ {
		for j := 0; j <= n; j++ {
			x, y := w*float64(i)/n, h*float64(j)/n
			s1, s2, ok := singular(inv, x, y)
			if !ok || s2 <= 0 {
				return Frame{}, false
			}
			// inv shrinks by s: the output magnifies the source by 1/s.
			lo, hi = math.Min(lo, 1/s1), math.Max(hi, 1/s2)
		}
	}
	f.Stretch = hi / lo
	return f, true
}

// singular returns the singular values (largest first) of the Jacobian of h at (x, y).
func singular(h Homography, x, y float64) (s1, s2 float64, ok bool) {
	w := h[6]*x + h[7]*y + h[8]
	if !(w > 1e-12) {
		return 0, 0, false
	}
	u := (h[0]*x + h[1]*y + h[2]) / w
	v := (h[3]*x + h[4]*y + h[5]) / w
	a, b := (h[0]-u*h[6])/w, (h[1]-u*h[7])/w
	c, d := (h[3]-v*h[6])/w, (h[4]-v*h[7])/w
	// Singular values of [[a b] [c d]] in closed form.
	p := a*a + b*b + c*c + d*d
	q := math.Abs(a*d - b*c)
	r := math.Sqrt(math.Max(0, p*p/4-q*q))
	s1 = math.Sqrt(p/2 + r)
	s2 = math.Sqrt(math.Max(0, p/2-r))
	return s1, s2, true
}

// Limits bound how far a correction may warp the frame. A correction that would pass
// any of them is scaled back, along the same rotation, to the strongest one within
// all of them. Zero fields set no limit.
type Limits struct {
	// MaxRotationDeg is the most camera rotation undone, in degrees.
	MaxRotationDeg float64
	// MinKeptArea is the least share of the photo's area the output keeps.
	MinKeptArea float64
	// MaxStretch bounds Frame.Stretch.
	MaxStretch float64
}

// SafeLimits are what delivered photos are corrected within: a correction inside
// them is made in full, a larger one stops at them. The package comment says why
// these figures.
var SafeLimits = Limits{MaxRotationDeg: 15, MinKeptArea: 0.8, MaxStretch: 1.6}

// minKeptFloor is the least share of the frame any limited correction keeps, whatever
// its Limits say.
const minKeptFloor = 0.75

func (l Limits) set() bool { return l.MaxRotationDeg > 0 || l.MinKeptArea > 0 || l.MaxStretch > 0 }

// exceeded lists the limits a correction of rot degrees with frame f passes, or "".
func (l Limits) exceeded(rot float64, f Frame) string {
	var why []string
	if l.MaxRotationDeg > 0 && rot > l.MaxRotationDeg+1e-9 {
		why = append(why, fmt.Sprintf("a %.1f° rotation, more than %.0f°", rot, l.MaxRotationDeg))
	}
	if f.KeptArea < math.Max(l.MinKeptArea, minKeptFloor)-1e-9 {
		why = append(why, fmt.Sprintf("only %.0f%% of the frame kept", 100*f.KeptArea))
	}
	if l.MaxStretch > 0 && f.Stretch > l.MaxStretch+1e-9 {
		why = append(why, fmt.Sprintf("the frame stretched %.2fx", f.Stretch))
	}
	return strings.Join(why, ", ")
}

// limit returns the largest strength up to strength whose correction stays within l,
// and why the full one did not when it is smaller. Kept area falls and stretch and
// rotation grow with the strength, so the boundary is found by bisection.
func (m Model) limit(strength float64, l Limits) (float64, string) {
	full := m.RotationDeg()
	within := func(s float64) (string, bool) {
		total, _, err := m.plan(s)
		if err != nil {
			return "the frame folded over", false
		}
		f, ok := frameOf(total, m.Width, m.Height)
		if !ok {
			return "the frame folded over", false
		}
		why := l.exceeded(full*s, f)
		return why, why == ""
	}
	why, ok := within(strength)
	if ok {
		return strength, ""
	}
	lo, hi := 0.0, strength
	for i := 0; i < 40 && hi-lo > 1e-6; i++ {
		mid := (lo + hi) / 2
		if _, ok := within(mid); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, why
}
