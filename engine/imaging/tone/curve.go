package tone

import (
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// spline is a monotone cubic Hermite interpolant (Fritsch-Carlson): it passes through
// every control point and never overshoots between them, so a curve drawn through
// rising points rises everywhere.
type spline struct {
	x, y, m []float64
}

func newSpline(pts []Point) (*spline, error) {
	if len(pts) == 0 {
		return nil, nil
	}
	xs := make([]float64, 0, len(pts)+2)
	ys := make([]float64, 0, len(pts)+2)
	if pts[0].X > 0 {
		xs, ys = append(xs, 0), append(ys, 0)
	}
	for _, p := range pts {
		xs, ys = append(xs, p.X), append(ys, p.Y)
	}
	if pts[len(pts)-1].X < 1 {
		xs, ys = append(xs, 1), append(ys, 1)
	}
	n := len(xs)
	for i := 1; i < n; i++ {
		if !(xs[i] > xs[i-1]) {
			return nil, fmt.Errorf("tone: curve x values must increase")
		}
	}
	d := make([]float64, n-1)
	for i := range d {
		d[i] = (ys[i+1] - ys[i]) / (xs[i+1] - xs[i])
	}
	m := make([]float64, n)
	m[0], m[n-1] = d[0], d[n-2]
	for i := 1; i < n-1; i++ {
		if d[i-1]*d[i] > 0 {
			m[i] = (d[i-1] + d[i]) / 2
		}
	}
	for i := range d {
		if d[i] == 0 {
			m[i], m[i+1] = 0, 0
			continue
		}
		a, b := m[i]/d[i], m[i+1]/d[i]
		if s := a*a + b*b; s > 9 {
			t := 3 / math.Sqrt(s)
			m[i], m[i+1] = t*a*d[i], t*b*d[i]
		}
	}
	return &spline{x: xs, y: ys, m: m}, nil
}

// at evaluates the curve; beyond the last point it continues along the end tangent so
// values above white (HDR data) stay ordered.
func (s *spline) at(x float64) float64 {
	n := len(s.x)
	if x <= s.x[0] {
		return s.y[0] + (x-s.x[0])*s.m[0]
	}
	if x >= s.x[n-1] {
		return s.y[n-1] + (x-s.x[n-1])*s.m[n-1]
	}
	i := 0
	for i < n-2 && x > s.x[i+1] {
		i++
	}
	h := s.x[i+1] - s.x[i]
	t := (x - s.x[i]) / h
	t2, t3 := t*t, t*t*t
	return (2*t3-3*t2+1)*s.y[i] + (t3-2*t2+t)*h*s.m[i] + (-2*t3+3*t2)*s.y[i+1] + (t3-t2)*h*s.m[i+1]
}

// Tone scale constants, in display-encoded units.
const (
	blacksAt100   = 0.06 // Blacks 100 lifts black by this much
	whitesAt100   = 0.15 // Whites 100 raises white by this much
	contrastAt100 = 0.6  // Contrast 100 steepens the midtones by 60 %
)

// toneFunc is the global tone scale of a look in display-encoded values: blacks,
// whites, contrast, then the control-point curve.
type toneFunc struct {
	blacks, whites, contrast float64
	curve                    *spline
}

func newToneFunc(l Look) (toneFunc, error) {
	c, err := newSpline(l.Curve)
	if err != nil {
		return toneFunc{}, err
	}
	return toneFunc{
		blacks:   blacksAt100 * l.Blacks / 100,
		whites:   whitesAt100 * l.Whites / 100,
		contrast: contrastAt100 * l.Contrast / 100,
		curve:    c,
	}, nil
}

func (f toneFunc) identity() bool {
	return f.blacks == 0 && f.whites == 0 && f.contrast == 0 && f.curve == nil
}

// at maps a display-encoded value. Each step is monotone: the blacks and whites
// offsets fade out over half the scale (slope at least 1 - 3*0.15), and the contrast
// S-curve x - k sin(2 pi x) / (2 pi) has slope 1 - k cos(2 pi x) >= 1 - |k|.
func (f toneFunc) at(x float64) float64 {
	if f.blacks != 0 {
		x += f.blacks * (1 - imaging.Smoothstep(0, 0.5, x))
	}
	if f.whites != 0 {
		x += f.whites * imaging.Smoothstep(0.5, 1, x)
	}
	if x < 0 {
		x = 0
	}
	if f.contrast != 0 && x < 1 {
		x -= f.contrast * math.Sin(2*math.Pi*x) / (2 * math.Pi)
	}
	if f.curve != nil {
		x = f.curve.at(x)
	}
	return x
}

// lut is a table of a function of linear light with entries spaced evenly within
// each octave (128 per octave from 2^-16 to 4), so shadows get as many entries as
// highlights and the index comes straight from the float's exponent and mantissa
// bits, with no square root or logarithm per lookup. The table is indexed by
// v + 2^-16, which keeps 0 inside the first octave without a special case, and is
// small enough to inline.
type lut struct {
	t []float32
}

const (
	lutMinExp   = -16
	lutMaxExp   = 2
	lutStepBits = 7 // 128 entries per octave
	lutEntries  = (lutMaxExp - lutMinExp) << lutStepBits
	lutFracBits = 23 - lutStepBits
	lutFracMask = 1<<lutFracBits - 1
	lutBase     = (127 + lutMinExp) << lutStepBits
	lutFracUnit = 1.0 / (1 << lutFracBits)
)

var (
	lutOffset = float32(math.Ldexp(1, lutMinExp))
	// lutTop is the largest table input: just below 2^lutMaxExp, so its index stays
	// inside the table.
	lutTop = math.Nextafter32(float32(math.Ldexp(1, lutMaxExp)), 0)
	// lutMax is the largest linear value the table distinguishes.
	lutMax = lutTop - lutOffset
)

func newLUT(f func(v float64) float64) *lut {
	l := &lut{t: make([]float32, lutEntries+1)}
	for i := range l.t {
		e := lutMinExp + i>>lutStepBits
		m := 1 + float64(i&(1<<lutStepBits-1))/(1<<lutStepBits)
		l.t[i] = float32(f(math.Max(0, math.Ldexp(m, e)-float64(lutOffset))))
	}
	return l
}

// at looks up v with linear interpolation between entries; negative and NaN inputs
// read as 0, inputs above lutMax as lutMax.
func (l *lut) at(v float32) float32 {
	u := lutOffset
	if v > 0 {
		u += v
	}
	if u > lutTop {
		u = lutTop
	}
	bits := math.Float32bits(u)
	i := int(bits>>lutFracBits) - lutBase
	t := l.t[i : i+2 : i+2]
	return t[0] + (t[1]-t[0])*(float32(bits&lutFracMask)*lutFracUnit)
}
