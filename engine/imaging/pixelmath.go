package imaging

import "math"

// Small numeric helpers of the per-pixel loops (tone, the sliders), kept in one place.
// The float32 ones use plain comparisons, which compile to fewer instructions than
// the NaN-aware min and max builtins, and are small enough to inline across packages.

// Smoothstep is 0 below e0, 1 above e1 and the cubic 3t²-2t³ between.
func Smoothstep(e0, e1, x float64) float64 {
	t := (x - e0) / (e1 - e0)
	if t <= 0 {
		return 0
	}
	if t >= 1 {
		return 1
	}
	return t * t * (3 - 2*t)
}

// Smoothstep32 is Smoothstep in float32; with constant edges the division folds away
// after inlining.
func Smoothstep32(e0, e1, x float32) float32 {
	t := (x - e0) * (1 / (e1 - e0))
	if t <= 0 {
		return 0
	}
	if t >= 1 {
		return 1
	}
	return t * t * (3 - 2*t)
}

// EncodeSRGB64 is the sRGB transfer function in float64, extended above 1 by the same
// power law so that levels over white keep their order (for tabulated tone curves).
func EncodeSRGB64(v float64) float64 {
	if v <= 0.0031308 {
		return 12.92 * v
	}
	return 1.055*math.Pow(v, 1/2.4) - 0.055
}

// DecodeSRGB64 inverts EncodeSRGB64.
func DecodeSRGB64(x float64) float64 {
	if x <= 0.04045 {
		return x / 12.92
	}
	return math.Pow((x+0.055)/1.055, 2.4)
}

// NonNeg is v, or 0 for a negative v or NaN.
func NonNeg(v float32) float32 {
	if !(v > 0) {
		return 0
	}
	return v
}

// Max3 is the largest of three values.
func Max3(a, b, c float32) float32 {
	if b > a {
		a = b
	}
	if c > a {
		a = c
	}
	return a
}

// Min3 is the smallest of three values.
func Min3(a, b, c float32) float32 {
	if b < a {
		a = b
	}
	if c < a {
		a = c
	}
	return a
}

// Abs32 is |v|.
func Abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}
