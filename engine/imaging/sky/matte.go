package sky

import (
	"github.com/porchlight/porchlight/engine/imaging"
)

// Matte refinement: the hard labelling is turned into a soft matte with a colour guided
// filter (He, Sun and Tang) whose guide is the photo itself, so the matte follows roof
// lines, wires and branches. The filter's linear coefficients are computed on a copy of
// at most matteEdge pixels and evaluated against the full-resolution guide (the "fast
// guided filter"): alpha = a . I + b, with I the full-resolution pixel.
const (
	matteEdge   = 1024
	guideRadius = 5     // box radius of the guided filter at the matte resolution
	guideEps    = 4e-4  // regularisation, in (sRGB 0..1)^2: edges weaker than this blur
	alphaLo     = 0.04  // matte values below this are 0: no faint veil over the ground
	alphaHi     = 0.92  // and above this 1: no faint trace of the old sky
	planeCount  = 13    // I (3), I*I (6), p, I*p (3)
	coefPlanes  = 4     // a (3), b
	encodeScale = 65535 // sRGB codes of imaging.Encode16
)

// matteModel maps a full-resolution pixel colour to its sky alpha through coefficients
// on a coarse grid.
type matteModel struct {
	w, h    int       // full resolution
	lo, hi  float32   // the stretch of the filtered alpha to 0..1
	cw, ch  int       // coefficient grid
	coef    []float32 // a0, a1, a2, b per grid pixel
	live    []bool    // grid pixels with any non-zero coefficient
	rowLive []bool    // grid rows with any live pixel
	// Bilinear lookups from full-resolution columns and rows to the grid.
	x0, x1 []int32
	fx     []float32
	y0, y1 []int32
	fy     []float32
}

// srgb encodes a linear value for the guide: the filter works on perceptual values.
func srgb(v float32) float32 { return float32(imaging.Encode16(v)) / encodeScale }

// buildMatte fits the guided-filter coefficients. guide is the photo at the coefficient
// grid resolution (linear RGB), mask the sky labelling resampled to that grid (0..1).
// radius and eps are the filter's window and regularisation; alpha is stretched from
// lo..hi to 0..1.
func buildMatte(w, h int, guide *imaging.Image, mask []float32, radius int, eps, lo, hi float32) *matteModel {
	cw, ch := guide.W(), guide.H()
	n := cw * ch
	planes := make([][]float32, planeCount)
	for i := range planes {
		planes[i] = make([]float32, n)
	}
	imaging.Bands(ch, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := guide.Row(y)
			for x := 0; x < cw; x++ {
				p := y*cw + x
				i := x * guide.C
				r, g, b := srgb(row[i]), srgb(row[i+1]), srgb(row[i+2])
				m := mask[p]
				planes[0][p], planes[1][p], planes[2][p] = r, g, b
				planes[3][p], planes[4][p], planes[5][p] = r*r, r*g, r*b
				planes[6][p], planes[7][p], planes[8][p] = g*g, g*b, b*b
				planes[9][p] = m
				planes[10][p], planes[11][p], planes[12][p] = r*m, g*m, b*m
			}
		}
	})
	for _, pl := range planes {
		boxMean(pl, pl, cw, ch, radius)
	}
	coef := make([]float32, n*coefPlanes)
	imaging.Bands(ch, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < cw; x++ {
				p := y*cw + x
				mr, mg, mb := float64(planes[0][p]), float64(planes[1][p]), float64(planes[2][p])
				mp := float64(planes[9][p])
				cov := [9]float64{
					float64(planes[3][p]) - mr*mr + float64(eps), float64(planes[4][p]) - mr*mg, float64(planes[5][p]) - mr*mb,
					0, float64(planes[6][p]) - mg*mg + float64(eps), float64(planes[7][p]) - mg*mb,
					0, 0, float64(planes[8][p]) - mb*mb + float64(eps),
				}
				cov[3], cov[6], cov[7] = cov[1], cov[2], cov[5]
				cr := float64(planes[10][p]) - mr*mp
				cg := float64(planes[11][p]) - mg*mp
				cb := float64(planes[12][p]) - mb*mp
				inv, det := invert3(cov)
				var a0, a1, a2 float64
				if det > 0 {
					a0 = inv[0]*cr + inv[1]*cg + inv[2]*cb
					a1 = inv[3]*cr + inv[4]*cg + inv[5]*cb
					a2 = inv[6]*cr + inv[7]*cg + inv[8]*cb
				}
				o := p * coefPlanes
				coef[o], coef[o+1], coef[o+2] = float32(a0), float32(a1), float32(a2)
				coef[o+3] = float32(mp - a0*mr - a1*mg - a2*mb)
			}
		}
	})
	// Average the coefficients over the same window (each pixel is covered by many).
	tmp := make([]float32, n)
	for c := 0; c < coefPlanes; c++ {
		for p := 0; p < n; p++ {
			tmp[p] = coef[p*coefPlanes+c]
		}
		boxMean(tmp, tmp, cw, ch, radius)
		for p := 0; p < n; p++ {
			coef[p*coefPlanes+c] = tmp[p]
		}
	}
	m := &matteModel{w: w, h: h, lo: lo, hi: hi, cw: cw, ch: ch, coef: coef, live: make([]bool, n), rowLive: make([]bool, ch)}
	for p := 0; p < n; p++ {
		k := coef[p*coefPlanes : p*coefPlanes+coefPlanes]
		// Far from the sky a = 0 and b = 0 exactly (the mask is 0 over the window).
		if k[0] != 0 || k[1] != 0 || k[2] != 0 || k[3] > lo {
			m.live[p] = true
			m.rowLive[p/cw] = true
		}
	}
	m.x0, m.x1, m.fx = bilinearTaps(w, cw)
	m.y0, m.y1, m.fy = bilinearTaps(h, ch)
	return m
}

// bilinearTaps maps each of n destination samples to two source samples of an axis of
// length sn and the weight of the second, pixel centres aligned.
func bilinearTaps(n, sn int) (i0, i1 []int32, f []float32) {
	i0, i1, f = make([]int32, n), make([]int32, n), make([]float32, n)
	scale := float64(sn) / float64(n)
	for i := 0; i < n; i++ {
		u := (float64(i)+0.5)*scale - 0.5
		u = max(0, min(u, float64(sn-1)))
		a := int(u)
		b := min(a+1, sn-1)
		i0[i], i1[i], f[i] = int32(a), int32(b), float32(u-float64(a))
	}
	return
}

// alphaRow writes the sky alpha of full-resolution row y, whose linear RGB samples (c
// channels per pixel) are src, into dst. It reports whether any alpha is non-zero.
func (m *matteModel) alphaRow(y int, src []float32, c int, dst []float32) bool {
	y0, y1 := int(m.y0[y]), int(m.y1[y])
	if !m.rowLive[y0] && !m.rowLive[y1] {
		clear(dst)
		return false
	}
	r0 := m.coef[y0*m.cw*coefPlanes:]
	r1 := m.coef[y1*m.cw*coefPlanes:]
	l0, l1 := m.live[y0*m.cw:], m.live[y1*m.cw:]
	fy := m.fy[y]
	live := false
	for x := 0; x < m.w; x++ {
		a, b := int(m.x0[x]), int(m.x1[x])
		if !l0[a] && !l0[b] && !l1[a] && !l1[b] {
			dst[x] = 0
			continue
		}
		fx := m.fx[x]
		var k [coefPlanes]float32
		a *= coefPlanes
		b *= coefPlanes
		for j := 0; j < coefPlanes; j++ {
			top := r0[a+j] + fx*(r0[b+j]-r0[a+j])
			bot := r1[a+j] + fx*(r1[b+j]-r1[a+j])
			k[j] = top + fy*(bot-top)
		}
		i := x * c
		v := m.stretch(k[0]*srgb(src[i]) + k[1]*srgb(src[i+1]) + k[2]*srgb(src[i+2]) + k[3])
		dst[x] = v
		live = live || v > 0
	}
	return live
}

func (m *matteModel) stretch(q float32) float32 {
	v := (q - m.lo) / (m.hi - m.lo)
	if !(v > 0) {
		return 0
	}
	return min(v, 1)
}
