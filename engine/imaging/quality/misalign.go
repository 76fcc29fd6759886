package quality

import (
	"errors"
	"fmt"
	"math"
	"math/cmplx"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Shift is a measured translation: b(x, y) ≈ a(x − DX, y − DY). Peak is the height of
// the phase-correlation peak (1 for identical content, near 0 when nothing matches).
type Shift struct {
	DX, DY, Peak float64
}

// Len is the length of the shift in pixels.
func (s Shift) Len() float64 { return math.Hypot(s.DX, s.DY) }

// Misalignment is the residual misalignment between two images of one scene.
type Misalignment struct {
	Global Shift   // from the largest centred power-of-two square
	Tiles  []Shift // from a grid of tiles, row by row; reveals rotation and warps
	Max    float64 // longest tile shift among tiles whose peak is trustworthy
}

// MisalignOptions configures MeasureMisalignment.
type MisalignOptions struct {
	// Tile is the side of the square tiles (a power of two); 0 means 512.
	Tile int
	// Grid is the number of tiles per row and column; 0 means 3.
	Grid int
}

// minPeak is the phase-correlation peak below which a tile is considered to have too
// little shared structure to measure.
const minPeak = 0.2

// lowPass is the σ of the frequency taper as a fraction of the transform size.
var lowPass = 0.12

// MeasureMisalignment measures how far b is shifted relative to a by phase
// correlation of their gradients (the complex image gx + i·gy of histogram-equalized
// luma under a Hann window), refined to 1/50 pixel by a local upsampled DFT. The
// equalization and the gradients make it insensitive to exposure, so it compares
// brackets directly.
func MeasureMisalignment(a, b *imaging.Image, opt MisalignOptions) (Misalignment, error) {
	if a == nil || b == nil {
		return Misalignment{}, errors.New("misalignment: nil image")
	}
	if !imaging.SameSize(a, b) {
		return Misalignment{}, fmt.Errorf("misalignment: sizes differ: %dx%d and %dx%d", a.W(), a.H(), b.W(), b.H())
	}
	tile, grid := opt.Tile, opt.Grid
	if tile <= 0 {
		tile = 512
	}
	if grid <= 0 {
		grid = 3
	}
	if tile&(tile-1) != 0 || tile < 32 {
		return Misalignment{}, fmt.Errorf("misalignment: tile %d is not a power of two of at least 32", tile)
	}
	pa, err := luma(a)
	if err != nil {
		return Misalignment{}, fmt.Errorf("misalignment: %w", err)
	}
	pb, err := luma(b)
	if err != nil {
		return Misalignment{}, fmt.Errorf("misalignment: %w", err)
	}
	n := 1
	for n*2 <= min(pa.w, pa.h) && n*2 <= 1024 {
		n *= 2
	}
	if n < 32 {
		return Misalignment{}, fmt.Errorf("misalignment: %dx%d is too small", pa.w, pa.h)
	}
	var res Misalignment
	res.Global = phaseCorrelate(pa, pb, (pa.w-n)/2, (pa.h-n)/2, n)
	t := min(tile, n)
	for gy := 0; gy < grid; gy++ {
		for gx := 0; gx < grid; gx++ {
			x0, y0 := 0, 0
			if grid > 1 {
				x0 = gx * (pa.w - t) / (grid - 1)
				y0 = gy * (pa.h - t) / (grid - 1)
			}
			s := phaseCorrelate(pa, pb, x0, y0, t)
			res.Tiles = append(res.Tiles, s)
			if s.Peak >= minPeak {
				res.Max = math.Max(res.Max, s.Len())
			}
		}
	}
	return res, nil
}

// phaseCorrelate measures the shift between the n×n squares at (x0, y0) of a and b.
func phaseCorrelate(a, b *plane, x0, y0, n int) Shift {
	fa := gradientSpectrum(a, x0, y0, n)
	fb := gradientSpectrum(b, x0, y0, n)
	// Normalized cross-power spectrum, tapered by a Gaussian in frequency: the top
	// octave carries aliasing and interpolation phase errors that bias sub-pixel
	// estimates towards whole pixels.
	r := make([]complex128, n*n)
	sigma := float64(n) * lowPass
	var gsum float64
	for i := range r {
		c := cmplx.Conj(fa[i]) * fb[i]
		if m := cmplx.Abs(c); m > 1e-12 {
			u, v := float64(i%n), float64(i/n)
			if u > float64(n/2) {
				u -= float64(n)
			}
			if v > float64(n/2) {
				v -= float64(n)
			}
			g := math.Exp(-(u*u + v*v) / (2 * sigma * sigma))
			r[i] = c * complex(g/m, 0)
			gsum += g
		}
	}
	corr := append([]complex128(nil), r...)
	fft2(corr, n, true)
	best, bi := -1.0, 0
	for i, v := range corr {
		if re := real(v); re > best {
			best, bi = re, i
		}
	}
	px, py := bi%n, bi/n
	if px > n/2 {
		px -= n
	}
	if py > n/2 {
		py -= n
	}
	dx, dy, peak := refinePeak(r, n, float64(px), float64(py))
	if gsum == 0 {
		return Shift{}
	}
	return Shift{DX: dx, DY: dy, Peak: peak / gsum}
}

// gradientSpectrum is the 2-D DFT of gx + i·gy of the equalized, Hann-windowed square.
func gradientSpectrum(p *plane, x0, y0, n int) []complex128 {
	vals := make([]float64, 0, n*n)
	for y := y0; y < y0+n; y++ {
		vals = append(vals, p.row(y)[x0:x0+n]...)
	}
	// Equalize: each value becomes its mid-rank among the square's values (luma is
	// 0..255; 4096 bins are finer than an 8-bit source).
	const bins = 4096
	var hist [bins]int
	bin := func(v float64) int { return min(max(int(v*(bins-1)/255), 0), bins-1) }
	for _, v := range vals {
		hist[bin(v)]++
	}
	var cdf [bins]float64
	below := 0
	for i, c := range hist {
		cdf[i] = (float64(below) + float64(c)/2) / float64(len(vals))
		below += c
	}
	eq := make([]float64, len(vals))
	for i, v := range vals {
		eq[i] = cdf[bin(v)]
	}
	win := make([]float64, n)
	for i := range win {
		win[i] = 0.5 - 0.5*math.Cos(2*math.Pi*float64(i)/float64(n-1))
	}
	out := make([]complex128, n*n)
	for y := 1; y < n-1; y++ {
		for x := 1; x < n-1; x++ {
			gx := (eq[y*n+x+1] - eq[y*n+x-1]) / 2
			gy := (eq[(y+1)*n+x] - eq[(y-1)*n+x]) / 2
			w := win[x] * win[y]
			out[y*n+x] = complex(gx*w, gy*w)
		}
	}
	fft2(out, n, false)
	return out
}

// refinePeak evaluates the inverse DFT of the normalized cross-power spectrum r on a
// fine grid around (px, py) (a matrix-multiply DFT, after Guizar-Sicairos et al.
// 2008) and returns the location and height of its maximum.
func refinePeak(r []complex128, n int, px, py float64) (float64, float64, float64) {
	const up = 50 // 1/50 pixel
	const half = 75
	freq := func(k int) float64 {
		if k > n/2 {
			return float64(k - n)
		}
		return float64(k)
	}
	best, bx, by := math.Inf(-1), px, py
	// Two passes: ±1.5 pixels at 1/10, then ±0.15 at 1/100 around the best.
	for pass, step := range []float64{0.1, 1.0 / up} {
		cx, cy := bx, by
		m := 15
		if pass == 1 {
			m = half / 10
		}
		// Separable evaluation: first along x for each frequency row.
		xs := make([]float64, 2*m+1)
		ys := make([]float64, 2*m+1)
		for i := range xs {
			xs[i] = cx + float64(i-m)*step
			ys[i] = cy + float64(i-m)*step
		}
		// ex[u][i] = exp(2πi·u·xs[i]/n)
		ex := make([][]complex128, n)
		for u := 0; u < n; u++ {
			ex[u] = make([]complex128, len(xs))
			for i, x := range xs {
				ex[u][i] = cmplx.Rect(1, 2*math.Pi*freq(u)*x/float64(n))
			}
		}
		// rowSum[v][i] = Σ_u r[v][u]·ex[u][i]
		rowSum := make([][]complex128, n)
		imaging.Bands(n, func(_, v0, v1 int) {
			for v := v0; v < v1; v++ {
				s := make([]complex128, len(xs))
				row := r[v*n : (v+1)*n]
				for u, c := range row {
					if c == 0 {
						continue
					}
					e := ex[u]
					for i := range s {
						s[i] += c * e[i]
					}
				}
				rowSum[v] = s
			}
		})
		for j, y := range ys {
			ey := make([]complex128, n)
			for v := 0; v < n; v++ {
				ey[v] = cmplx.Rect(1, 2*math.Pi*freq(v)*y/float64(n))
			}
			for i, x := range xs {
				var s complex128
				for v := 0; v < n; v++ {
					s += rowSum[v][i] * ey[v]
				}
				if real(s) > best {
					best, bx, by = real(s), x, y
				}
			}
			_ = j
		}
	}
	return bx, by, best
}
