package quality

import (
	"math"
	"math/bits"
	"math/cmplx"

	"github.com/porchlight/porchlight/engine/imaging"
)

// fft computes the in-place discrete Fourier transform of x (length a power of two);
// inverse selects the unnormalized inverse transform.
func fft(x []complex128, inverse bool) {
	n := len(x)
	shift := 64 - uint(bits.TrailingZeros(uint(n)))
	for i := range x {
		j := int(bits.Reverse64(uint64(i)) >> shift)
		if j > i {
			x[i], x[j] = x[j], x[i]
		}
	}
	sign := -1.0
	if inverse {
		sign = 1
	}
	for size := 2; size <= n; size <<= 1 {
		half := size / 2
		step := cmplx.Rect(1, sign*2*math.Pi/float64(size))
		for start := 0; start < n; start += size {
			w := complex(1, 0)
			for k := 0; k < half; k++ {
				a, b := x[start+k], x[start+k+half]*w
				x[start+k], x[start+k+half] = a+b, a-b
				w *= step
			}
		}
	}
}

// fft2 transforms an n×n row-major array in place: rows, then columns.
func fft2(x []complex128, n int, inverse bool) {
	imaging.Bands(n, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			fft(x[y*n:(y+1)*n], inverse)
		}
	})
	imaging.Bands(n, func(_, x0, x1 int) {
		col := make([]complex128, n)
		for c := x0; c < x1; c++ {
			for y := 0; y < n; y++ {
				col[y] = x[y*n+c]
			}
			fft(col, inverse)
			for y := 0; y < n; y++ {
				x[y*n+c] = col[y]
			}
		}
	})
}
