package perspective

import (
	"fmt"
	"math"
)

// Homography is a 3x3 projective transform in row-major order acting on continuous
// pixel coordinates: the pixel at column i, row j covers [i, i+1) x [j, j+1), so its
// center is (i+0.5, j+0.5). A point (x, y) maps to ((h0x+h1y+h2)/w, (h3x+h4y+h5)/w)
// with w = h6x+h7y+h8.
type Homography [9]float64

// Identity is the homography that maps every point to itself.
var Identity = Homography{1, 0, 0, 0, 1, 0, 0, 0, 1}

// Apply maps a point. ok is false when the point maps to infinity or behind the
// projection center (w <= 0), where the result means nothing for an image.
func (h Homography) Apply(x, y float64) (px, py float64, ok bool) {
	w := h[6]*x + h[7]*y + h[8]
	if !(w > 1e-12) {
		return 0, 0, false
	}
	return (h[0]*x + h[1]*y + h[2]) / w, (h[3]*x + h[4]*y + h[5]) / w, true
}

// Mul returns h*g: the transform that applies g first, then h.
func (h Homography) Mul(g Homography) Homography {
	var r Homography
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			r[3*i+j] = h[3*i]*g[j] + h[3*i+1]*g[3+j] + h[3*i+2]*g[6+j]
		}
	}
	return r
}

// Inverse returns the inverse transform, normalized so that its last entry is
// positive, or an error when h is singular or not finite.
func (h Homography) Inverse() (Homography, error) {
	for _, v := range h {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Homography{}, fmt.Errorf("perspective: homography has a non-finite entry")
		}
	}
	a, b, c, d, e, f, g, k, l := h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7], h[8]
	A := e*l - f*k
	B := -(d*l - f*g)
	C := d*k - e*g
	det := a*A + b*B + c*C
	scale := 0.0
	for _, v := range h {
		scale = math.Max(scale, math.Abs(v))
	}
	if scale == 0 || math.Abs(det) < 1e-12*scale*scale*scale {
		return Homography{}, fmt.Errorf("perspective: homography is singular")
	}
	inv := Homography{
		A, -(b*l - c*k), b*f - c*e,
		B, a*l - c*g, -(a*f - c*d),
		C, -(a*k - b*g), a*e - b*d,
	}
	s := 1 / det
	if inv[8]*s < 0 {
		s = -s
	}
	for i := range inv {
		inv[i] *= s
	}
	return inv, nil
}

// rotationHomography returns K R K^-1 for a pinhole camera with focal length f (pixels)
// and principal point (cx, cy): the image motion of rotating the camera by R.
func rotationHomography(r [9]float64, f, cx, cy float64) Homography {
	k := Homography{f, 0, cx, 0, f, cy, 0, 0, 1}
	kinv := Homography{1 / f, 0, -cx / f, 0, 1 / f, -cy / f, 0, 0, 1}
	return k.Mul(Homography(r)).Mul(kinv)
}

// rotationBetween returns the rotation by angle t*alpha about the axis a x b, where
// alpha is the angle between unit vectors a and b; t = 1 maps a onto b along the
// shortest arc (Rodrigues' formula).
func rotationBetween(a, b [3]float64, t float64) [9]float64 {
	axis := cross(a, b)
	s := norm(axis)
	c := dot(a, b)
	alpha := math.Atan2(s, c) * t
	if s < 1e-15 {
		return [9]float64{1, 0, 0, 0, 1, 0, 0, 0, 1}
	}
	kx, ky, kz := axis[0]/s, axis[1]/s, axis[2]/s
	sa, ca := math.Sin(alpha), math.Cos(alpha)
	v := 1 - ca
	return [9]float64{
		ca + kx*kx*v, kx*ky*v - kz*sa, kx*kz*v + ky*sa,
		ky*kx*v + kz*sa, ca + ky*ky*v, ky*kz*v - kx*sa,
		kz*kx*v - ky*sa, kz*ky*v + kx*sa, ca + kz*kz*v,
	}
}

func cross(a, b [3]float64) [3]float64 {
	return [3]float64{a[1]*b[2] - a[2]*b[1], a[2]*b[0] - a[0]*b[2], a[0]*b[1] - a[1]*b[0]}
}

func dot(a, b [3]float64) float64 { return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] }

func norm(a [3]float64) float64 { return math.Sqrt(dot(a, a)) }

func unit(a [3]float64) [3]float64 {
	n := norm(a)
	if n == 0 {
		return a
	}
	return [3]float64{a[0] / n, a[1] / n, a[2] / n}
}
