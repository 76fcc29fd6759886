package align

import "math"

// Mat3 is a row-major 3×3 matrix acting on homogeneous pixel coordinates (x, y, 1),
// with pixel centres at integer coordinates.
type Mat3 [9]float64

// Identity is the identity matrix.
var Identity = Mat3{1, 0, 0, 0, 1, 0, 0, 0, 1}

// Translation returns the matrix that adds (dx, dy).
func Translation(dx, dy float64) Mat3 { return Mat3{1, 0, dx, 0, 1, dy, 0, 0, 1} }

// Mul returns m·n (apply n first, then m).
func (m Mat3) Mul(n Mat3) Mat3 {
	var r Mat3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[3*i+j] = m[3*i]*n[j] + m[3*i+1]*n[3+j] + m[3*i+2]*n[6+j]
		}
	}
	return r
}

// Apply maps the point (x, y).
func (m Mat3) Apply(x, y float64) (float64, float64) {
	w := m[6]*x + m[7]*y + m[8]
	return (m[0]*x + m[1]*y + m[2]) / w, (m[3]*x + m[4]*y + m[5]) / w
}

// Inverse returns the inverse matrix; ok is false when m is singular.
func (m Mat3) Inverse() (Mat3, bool) {
	a, b, c := m[0], m[1], m[2]
	d, e, f := m[3], m[4], m[5]
	g, h, i := m[6], m[7], m[8]
	A := e*i - f*h
	B := -(d*i - f*g)
	C := d*h - e*g
	det := a*A + b*B + c*C
	if det == 0 || math.IsNaN(det) || math.IsInf(det, 0) {
		return Mat3{}, false
	}
	inv := Mat3{
		A, -(b*i - c*h), b*f - c*e,
		B, a*i - c*g, -(a*f - c*d),
		C, -(a*h - b*g), a*e - b*d,
	}
	for k := range inv {
		inv[k] /= det
	}
	return inv.normalized(), true
}

// normalized scales m so that m[8] is 1 (when it is not 0).
func (m Mat3) normalized() Mat3 {
	if m[8] == 0 {
		return m
	}
	s := 1 / m[8]
	for k := range m {
		m[k] *= s
	}
	return m
}

// rescale converts a matrix between pixel grids: given m on a grid where a sample
// stands for f samples of the full grid, it returns the matrix on the full grid.
// Full coordinate X relates to the reduced u by X = f·(u+0.5) − 0.5.
func (m Mat3) rescale(f float64) Mat3 {
	toReduced := Mat3{1 / f, 0, 0.5/f - 0.5, 0, 1 / f, 0.5/f - 0.5, 0, 0, 1}
	toFull := Mat3{f, 0, 0.5*f - 0.5, 0, f, 0.5*f - 0.5, 0, 0, 1}
	return toFull.Mul(m).Mul(toReduced).normalized()
}

// maxDisplacement is the largest distance a point of the w×h rectangle moves under m,
// checked at the corners and edge midpoints (exact for affine maps, close for the
// near-affine homographies of hand-held brackets).
func (m Mat3) maxDisplacement(w, h int) float64 {
	var d float64
	W, H := float64(w-1), float64(h-1)
	for _, p := range [][2]float64{{0, 0}, {W, 0}, {0, H}, {W, H}, {W / 2, 0}, {W / 2, H}, {0, H / 2}, {W, H / 2}, {W / 2, H / 2}} {
		x, y := m.Apply(p[0], p[1])
		d = math.Max(d, math.Hypot(x-p[0], y-p[1]))
	}
	return d
}
