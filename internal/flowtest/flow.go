// Package flowtest measures how far one photo's geometry is from another's, for
// tests of geometric corrections: a dense pyramidal Lucas-Kanade optical flow, an
// affine registration fitted to it (a correction may crop and scale) and the
// displacement left after it over textured pixels.
package flowtest

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Gray is a one-channel float image.
type Gray struct {
	W, H int
	P    []float32
}

func (g *Gray) at(x, y int) float32 {
	return g.P[min(max(y, 0), g.H-1)*g.W+min(max(x, 0), g.W-1)]
}

// bilinear samples g at (x, y), clamping to the edge.
func (g *Gray) bilinear(x, y float32) float32 {
	x = min(max(x, 0), float32(g.W-1))
	y = min(max(y, 0), float32(g.H-1))
	x0, y0 := int(x), int(y)
	fx, fy := x-float32(x0), y-float32(y0)
	a, b := g.at(x0, y0), g.at(x0+1, y0)
	c, d := g.at(x0, y0+1), g.at(x0+1, y0+1)
	return (a+fx*(b-a))*(1-fy) + (c+fx*(d-c))*fy
}

// GrayOf is the logarithm of m's sRGB-encoded luma with its local mean removed: a
// smooth change of exposure (vignetting, or its correction) multiplies the luma, so
// it adds a smooth term to the logarithm, and the high pass takes that out, leaving
// the texture the flow follows.
func GrayOf(m *imaging.Image) *Gray {
	g := lumaOf(m)
	f := make([]float64, len(g.P))
	for i, v := range g.P {
		f[i] = math.Log(float64(v) + 0.02)
	}
	s := boxSum(f, g.W, g.H, highPass)
	c := boxSum(onesLike(f), g.W, g.H, highPass)
	for i := range g.P {
		g.P[i] = float32(f[i] - s[i]/c[i])
	}
	return g
}

// highPass is the radius of the local mean GrayOf removes.
const highPass = 12

func onesLike(f []float64) []float64 {
	o := make([]float64, len(f))
	for i := range o {
		o[i] = 1
	}
	return o
}

// lumaOf is the sRGB-encoded luma of m (any storage).
func lumaOf(m *imaging.Image) *Gray {
	w, h := m.W(), m.H()
	g := &Gray{W: w, H: h, P: make([]float32, w*h)}
	row := make([]float32, w*m.C)
	for y := 0; y < h; y++ {
		r := m.EncodedRow(y, row)
		for x := 0; x < w; x++ {
			p := r[x*m.C:]
			g.P[y*w+x] = 0.2126*p[0] + 0.7152*p[1] + 0.0722*p[2]
		}
	}
	return g
}

func half(g *Gray) *Gray {
	w, h := max(1, g.W/2), max(1, g.H/2)
	o := &Gray{W: w, H: h, P: make([]float32, w*h)}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o.P[y*w+x] = 0.25 * (g.at(2*x, 2*y) + g.at(2*x+1, 2*y) + g.at(2*x, 2*y+1) + g.at(2*x+1, 2*y+1))
		}
	}
	return o
}

// boxSum returns the sums of f over (2r+1)² windows, clamped at the borders.
func boxSum(f []float64, w, h, r int) []float64 {
	ii := make([]float64, (w+1)*(h+1))
	for y := 0; y < h; y++ {
		s := 0.0
		for x := 0; x < w; x++ {
			s += f[y*w+x]
			ii[(y+1)*(w+1)+x+1] = ii[y*(w+1)+x+1] + s
		}
	}
	out := make([]float64, w*h)
	for y := 0; y < h; y++ {
		y0, y1 := max(0, y-r), min(h, y+r+1)
		for x := 0; x < w; x++ {
			x0, x1 := max(0, x-r), min(w, x+r+1)
			out[y*w+x] = ii[y1*(w+1)+x1] - ii[y0*(w+1)+x1] - ii[y1*(w+1)+x0] + ii[y0*(w+1)+x0]
		}
	}
	return out
}

// Flow is a dense displacement field: a(x, y) ≈ b(x+U, y+V).
type Flow struct {
	W, H int
	U, V []float32
	// MinEig is the smaller eigenvalue of a's structure tensor per pixel (per
	// window pixel), a measure of texture in both directions.
	MinEig []float32
}

// Radius is the Lucas-Kanade window radius at every pyramid level.
const Radius = 7

// condMin is the least structure-tensor eigenvalue per window pixel for a flow step.
const condMin = 1e-6

// Dense computes the flow from a to b (same size) coarse to fine: at each level the
// flow from the level above is doubled, b is warped by it and Lucas-Kanade steps
// refine it.
func Dense(a, b *Gray) *Flow {
	pa, pb := []*Gray{a}, []*Gray{b}
	for pa[len(pa)-1].W > 48 && pa[len(pa)-1].H > 48 && len(pa) < 7 {
		pa = append(pa, half(pa[len(pa)-1]))
		pb = append(pb, half(pb[len(pb)-1]))
	}
	var u, v []float32
	var eig []float32
	for l := len(pa) - 1; l >= 0; l-- {
		ga, gb := pa[l], pb[l]
		w, h := ga.W, ga.H
		nu, nv := make([]float32, w*h), make([]float32, w*h)
		if u != nil {
			pw, ph := pa[l+1].W, pa[l+1].H
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					px, py := min(x/2, pw-1), min(y/2, ph-1)
					nu[y*w+x] = 2 * u[py*pw+px]
					nv[y*w+x] = 2 * v[py*pw+px]
				}
			}
		}
		u, v = nu, nv
		// a's gradients (central differences) and structure tensor.
		ix, iy := make([]float64, w*h), make([]float64, w*h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				ix[y*w+x] = float64(ga.at(x+1, y)-ga.at(x-1, y)) / 2
				iy[y*w+x] = float64(ga.at(x, y+1)-ga.at(x, y-1)) / 2
			}
		}
		xx, xy, yy := make([]float64, w*h), make([]float64, w*h), make([]float64, w*h)
		for i := range ix {
			xx[i], xy[i], yy[i] = ix[i]*ix[i], ix[i]*iy[i], iy[i]*iy[i]
		}
		sxx, sxy, syy := boxSum(xx, w, h, Radius), boxSum(xy, w, h, Radius), boxSum(yy, w, h, Radius)
		n := float64((2*Radius + 1) * (2*Radius + 1))
		lmin := make([]float64, w*h)
		for i := range lmin {
			t, d := (sxx[i]+syy[i])/2, math.Sqrt((sxx[i]-syy[i])*(sxx[i]-syy[i])/4+sxy[i]*sxy[i])
			lmin[i] = (t - d) / n
		}
		// Each window's residual is taken at its centre's flow, as Lucas-Kanade has it:
		// a neighbour j measured at its own flow u_j is moved to u_i to first order,
		// d_j(u_i) = d_j(u_j) + ∇a_j·(u_i - u_j), which adds G_i u_i - Σ ∇a_j ∇a_jᵀ u_j.
		xt, yt := make([]float64, w*h), make([]float64, w*h)
		for it := 0; it < 10; it++ {
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					i := y*w + x
					d := float64(gb.bilinear(float32(x)+u[i], float32(y)+v[i]) - ga.P[i])
					uu, vv := float64(u[i]), float64(v[i])
					xt[i] = ix[i]*d - xx[i]*uu - xy[i]*vv
					yt[i] = iy[i]*d - xy[i]*uu - yy[i]*vv
				}
			}
			sxt, syt := boxSum(xt, w, h, Radius), boxSum(yt, w, h, Radius)
			for i := range u {
				det := sxx[i]*syy[i] - sxy[i]*sxy[i]
				if lmin[i] < condMin || det <= 0 {
					continue // the aperture problem: no step where texture runs one way
				}
				uu, vv := float64(u[i]), float64(v[i])
				bx := sxt[i] + sxx[i]*uu + sxy[i]*vv
				by := syt[i] + sxy[i]*uu + syy[i]*vv
				du := (syy[i]*bx - sxy[i]*by) / det
				dv := (sxx[i]*by - sxy[i]*bx) / det
				// A step is at most a pixel at this level: larger ones are noise.
				du, dv = max(-1, min(1, du)), max(-1, min(1, dv))
				u[i] -= float32(du)
				v[i] -= float32(dv)
			}
		}
		if l == 0 {
			eig = make([]float32, w*h)
			for i := range eig {
				eig[i] = float32(lmin[i])
			}
		} else {
			// Spread the flow of textured pixels over flat ones before the next level
			// starts from it, weighted by texture.
			wu, wv, c := make([]float64, w*h), make([]float64, w*h), make([]float64, w*h)
			for i := range c {
				c[i] = max(lmin[i], 0) + 1e-9
				wu[i], wv[i] = c[i]*float64(u[i]), c[i]*float64(v[i])
			}
			su, sv, sc := boxSum(wu, w, h, 2*Radius), boxSum(wv, w, h, 2*Radius), boxSum(c, w, h, 2*Radius)
			for i := range u {
				u[i], v[i] = float32(su[i]/sc[i]), float32(sv[i]/sc[i])
			}
		}
	}
	return &Flow{W: a.W, H: a.H, U: u, V: v, MinEig: eig}
}

// Affine maps (x, y) to (A[0]x + A[1]y + A[2], A[3]x + A[4]y + A[5]).
type Affine [6]float64

// Result is a registration's residual.
type Result struct {
	P95, Median float64 // displacement left, in per cent of the diagonal
	Pixels      int     // textured pixels measured
	Fit         Affine  // a's coordinates to b's
}

// TextureMin is the least structure-tensor eigenvalue (squared sRGB gradient per
// pixel) of a pixel counted as textured.
const TextureMin = 1e-3

// ConsistencyMax is how far, in pixels, following the flow forward and back may
// miss the start for a pixel to be measured.
const ConsistencyMax = 0.5

// Residual registers b to a through the flow with an affine fit and measures the
// displacement left: the 95th percentile and median of its length over textured
// pixels of a whose match lies inside b, away from the borders.
func Residual(a, b *imaging.Image) Result {
	ga, gb := GrayOf(a), GrayOf(b)
	f, back := Dense(ga, gb), Dense(gb, ga)
	w, h := f.W, f.H
	m := max(Radius*2, min(w, h)/12)
	var idx []int
	for y := m; y < h-m; y++ {
		for x := m; x < w-m; x++ {
			i := y*w + x
			if f.MinEig[i] < TextureMin {
				continue
			}
			bx, by := float32(x)+f.U[i], float32(y)+f.V[i]
			if bx < float32(m) || by < float32(m) || bx > float32(gb.W-1-m) || by > float32(gb.H-1-m) {
				continue
			}
			// Forward-backward check: a match that does not lead back is a mismatch
			// (repeated texture, an edge's aperture problem), not a displacement.
			bi := int(by+0.5)*gb.W + int(bx+0.5)
			if math.Hypot(float64(f.U[i]+back.U[bi]), float64(f.V[i]+back.V[bi])) > ConsistencyMax {
				continue
			}
			idx = append(idx, i)
		}
	}
	fit := fitAffine(f, idx)
	res := make([]float64, 0, len(idx))
	for _, i := range idx {
		x, y := float64(i%w), float64(i/w)
		ex := fit[0]*x + fit[1]*y + fit[2]
		ey := fit[3]*x + fit[4]*y + fit[5]
		res = append(res, math.Hypot(x+float64(f.U[i])-ex, y+float64(f.V[i])-ey))
	}
	sort.Float64s(res)
	diag := math.Hypot(float64(w), float64(h))
	r := Result{Pixels: len(res), Fit: fit}
	if len(res) > 0 {
		r.P95 = 100 * res[len(res)*95/100] / diag
		r.Median = 100 * res[len(res)/2] / diag
	}
	return r
}

// fitAffine is the least-squares affine map of the pixels idx to their matches.
func fitAffine(f *Flow, idx []int) Affine {
	var n [3][3]float64
	var bx, by [3]float64
	for _, i := range idx {
		x, y := float64(i%f.W), float64(i/f.W)
		p := [3]float64{x, y, 1}
		tx, ty := x+float64(f.U[i]), y+float64(f.V[i])
		for r := 0; r < 3; r++ {
			for c := 0; c < 3; c++ {
				n[r][c] += p[r] * p[c]
			}
			bx[r] += p[r] * tx
			by[r] += p[r] * ty
		}
	}
	sx, sy := solve3(n, bx), solve3(n, by)
	return Affine{sx[0], sx[1], sx[2], sy[0], sy[1], sy[2]}
}

func solve3(a [3][3]float64, b [3]float64) [3]float64 {
	for c := 0; c < 3; c++ {
		p := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		a[c], a[p] = a[p], a[c]
		b[c], b[p] = b[p], b[c]
		if a[c][c] == 0 {
			return [3]float64{}
		}
		for r := c + 1; r < 3; r++ {
			k := a[r][c] / a[c][c]
			for cc := c; cc < 3; cc++ {
				a[r][cc] -= k * a[c][cc]
			}
			b[r] -= k * b[c]
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < 3; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x
}
