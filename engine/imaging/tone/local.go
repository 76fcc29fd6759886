package tone

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// The local highlight and shadow controls change each pixel's exposure by an amount
// that depends on the brightness of its surroundings, not of the pixel itself: that
// keeps texture (a pixel and its neighbours move together) while dark rooms open up
// and bright windows come down. "Surroundings" is an edge-aware base layer of log2
// luminance: a bilateral filter (Durand and Dorsey) computed with a bilateral grid
// (Chen, Paris and Durand) built from a downscaled copy. The grid is sliced at full
// resolution with each pixel's own luminance, so the base layer follows
// full-resolution edges and a bright window does not bleed a halo onto the wall next
// to it, while textured regions (bookshelves, foliage) are smoothed as one area.

const (
	// thumbSide is the long side of the analysis copy.
	thumbSide = 640
	// gridSpatial is the bilateral grid's cell size as a fraction of the long side.
	gridSpatial = 0.04
	// gridRange is the grid's cell size in stops: with the 5-tap blur, luminance
	// steps of more than about three stops are edges the base layer keeps.
	gridRange = 1.2
	// gridFallback is the weight of a pixel's own luminance in the slice, which only
	// matters where the grid holds no data (highlights too small for the copy).
	gridFallback = 0.05
	// lumFloor keeps log2 finite on black pixels.
	lumFloor = 1.0 / 65536
	// Stops of exposure change at slider +-100 where the weight is full.
	shadowStops        = 2.0
	highlightStopsDown = 1.5
	highlightStopsUp   = 1.0
	// minBaseSlope keeps the base layer's tone map increasing: no region may overtake
	// a brighter one.
	minBaseSlope = 0.25
)

// thumb is a box-downscaled copy of the image after white balance and exposure gains.
type thumb struct {
	w, h, k int
	rgb     []float32 // 3 channels, interleaved
}

// makeThumb averages k x k blocks of the gained image (partial blocks at the right
// and bottom edges average what they have).
func makeThumb(img *imaging.Image, gains [3]float32) *thumb {
	W, H := img.W(), img.H()
	k := 1
	for max(W, H)/k > thumbSide {
		k++
	}
	t := &thumb{w: (W + k - 1) / k, h: (H + k - 1) / k, k: k}
	t.rgb = make([]float32, t.w*t.h*3)
	c := img.C
	imaging.Bands(t.h, func(_, ty0, ty1 int) {
		for ty := ty0; ty < ty1; ty++ {
			out := t.rgb[ty*t.w*3 : (ty+1)*t.w*3]
			y0, y1 := ty*k, min((ty+1)*k, H)
			for y := y0; y < y1; y++ {
				row := img.Row(y)
				for tx := 0; tx < t.w; tx++ {
					x0, x1 := tx*k, min((tx+1)*k, W)
					var r, g, b float32
					for o := x0 * c; o < x1*c; o += c {
						r += row[o]
						g += row[o+1]
						b += row[o+2]
					}
					out[tx*3] += r
					out[tx*3+1] += g
					out[tx*3+2] += b
				}
			}
			rows := float32(y1 - y0)
			for tx := 0; tx < t.w; tx++ {
				n := rows * float32(min((tx+1)*k, W)-tx*k)
				out[tx*3] *= gains[0] / n
				out[tx*3+1] *= gains[1] / n
				out[tx*3+2] *= gains[2] / n
			}
		}
	})
	return t
}

// baseLayer is a bilateral grid of log2 luminance: cells of ss x ss full-resolution
// pixels by sr stops holding sums of log luminance (num) and counts (den), blurred.
type baseLayer struct {
	gw, gh, gd int
	ss         float64 // full-resolution pixels per spatial cell
	sr, lmin   float32 // stops per range cell, and the log luminance of cell 0
	num, den   []float32
	col        []int32   // left grid column for each full-resolution column
	colFr      []float32 // weight of the right one
}

func newBaseLayer(t *thumb, fullW int) *baseLayer {
	n := t.w * t.h
	l := make([]float32, n)
	lmin, lmax := float32(math.Inf(1)), float32(math.Inf(-1))
	for i := range l {
		y := lumR*t.rgb[3*i] + lumG*t.rgb[3*i+1] + lumB*t.rgb[3*i+2]
		l[i] = fastLog2(y)
		lmin, lmax = min(lmin, l[i]), max(lmax, l[i])
	}
	cs := max(2.0, math.Round(gridSpatial*float64(max(t.w, t.h)))) // thumbnail pixels per cell
	bl := &baseLayer{
		gw: int(float64(t.w)/cs) + 2, gh: int(float64(t.h)/cs) + 2,
		ss: cs * float64(t.k), sr: gridRange, lmin: lmin - gridRange,
	}
	bl.gd = int((lmax-bl.lmin)/bl.sr) + 3
	size := bl.gw * bl.gh * bl.gd
	bl.num, bl.den = make([]float32, size), make([]float32, size)
	// Splat every thumbnail pixel into its 8 neighbouring cells.
	for j := 0; j < t.h; j++ {
		gy := (float64(j) + 0.5) / cs
		for i := 0; i < t.w; i++ {
			v := l[j*t.w+i]
			gx := (float64(i) + 0.5) / cs
			gz := float64((v - bl.lmin) / bl.sr)
			x0, y0, z0 := int(gx), int(gy), int(gz)
			fx, fy, fz := float32(gx)-float32(x0), float32(gy)-float32(y0), float32(gz)-float32(z0)
			for dy := 0; dy < 2; dy++ {
				wy := fy
				if dy == 0 {
					wy = 1 - fy
				}
				for dx := 0; dx < 2; dx++ {
					wx := fx
					if dx == 0 {
						wx = 1 - fx
					}
					o := ((y0+dy)*bl.gw+x0+dx)*bl.gd + z0
					w0, w1 := wy*wx*(1-fz), wy*wx*fz
					bl.num[o] += w0 * v
					bl.den[o] += w0
					bl.num[o+1] += w1 * v
					bl.den[o+1] += w1
				}
			}
		}
	}
	bl.blur(bl.num)
	bl.blur(bl.den)
	bl.col = make([]int32, fullW)
	bl.colFr = make([]float32, fullW)
	for x := 0; x < fullW; x++ {
		g := min((float64(x)+0.5)/bl.ss, float64(bl.gw-1)-1e-6)
		bl.col[x], bl.colFr[x] = int32(g), float32(g-math.Floor(g))
	}
	return bl
}

// blur smooths a grid array with the binomial kernel 1 4 6 4 1 along each axis
// (zero beyond the edges: num and den fade together, so their ratio does not).
func (bl *baseLayer) blur(g []float32) {
	tmp := make([]float32, len(g))
	k := [5]float32{1.0 / 16, 4.0 / 16, 6.0 / 16, 4.0 / 16, 1.0 / 16}
	strides := [3]int{bl.gd, bl.gw * bl.gd, 1}
	dims := [3]int{bl.gw, bl.gh, bl.gd}
	for axis := 0; axis < 3; axis++ {
		st, n := strides[axis], dims[axis]
		for o := range g {
			// Index along this axis.
			var c int
			switch axis {
			case 0:
				c = (o / bl.gd) % bl.gw
			case 1:
				c = o / (bl.gw * bl.gd)
			default:
				c = o % bl.gd
			}
			var acc float32
			for t := -2; t <= 2; t++ {
				if cc := c + t; cc >= 0 && cc < n {
					acc += k[t+2] * g[o+t*st]
				}
			}
			tmp[o] = acc
		}
		copy(g, tmp)
	}
}

// slab is one full-resolution row's worth of the grid: the two grid rows around it
// blended, for num and den, gw x gd each.
type slab struct{ num, den []float32 }

func (bl *baseLayer) newSlab() slab {
	return slab{make([]float32, bl.gw*bl.gd), make([]float32, bl.gw*bl.gd)}
}

// rows fills s for full-resolution row y.
func (bl *baseLayer) rows(y int, s slab) {
	g := min((float64(y)+0.5)/bl.ss, float64(bl.gh-1)-1e-6)
	j := int(g)
	f := float32(g - float64(j))
	n := bl.gw * bl.gd
	a, b := bl.num[j*n:(j+1)*n], bl.num[(j+1)*n:(j+2)*n]
	c, d := bl.den[j*n:(j+1)*n], bl.den[(j+1)*n:(j+2)*n]
	for i := 0; i < n; i++ {
		s.num[i] = a[i] + (b[i]-a[i])*f
		s.den[i] = c[i] + (d[i]-c[i])*f
	}
}

// at returns the base layer (log2 luminance) at full-resolution column x for a pixel
// of log2 luminance l, from the row's slab.
func (bl *baseLayer) at(x int, l float32, s slab) float32 {
	gz := (l - bl.lmin) / bl.sr
	if !(gz > 0) {
		gz = 0
	}
	if gz > float32(bl.gd-1)-1e-3 {
		gz = float32(bl.gd-1) - 1e-3
	}
	z := int(gz)
	fz := gz - float32(z)
	i := int(bl.col[x])
	fx := bl.colFr[x]
	o0 := i*bl.gd + z
	o1 := o0 + bl.gd
	n0 := s.num[o0] + (s.num[o0+1]-s.num[o0])*fz
	n1 := s.num[o1] + (s.num[o1+1]-s.num[o1])*fz
	d0 := s.den[o0] + (s.den[o0+1]-s.den[o0])*fz
	d1 := s.den[o1] + (s.den[o1+1]-s.den[o1])*fz
	num := n0 + (n1-n0)*fx
	den := d0 + (d1-d0)*fx
	return (num + gridFallback*l) / (den + gridFallback)
}

// gainTable maps base-layer log2 luminance to a linear exposure multiplier.
type gainTable struct {
	t      []float32
	lo, hi float32 // base range in stops
	scale  float32
}

const (
	gainSize         = 2048
	gainLo, gainHi   = -16.0, 3.0
	shadowFadeIn     = 0.03 // display value where the shadow lift reaches full weight
	shadowFadeStart  = 0.10 // and where it starts to fade out
	shadowFadeEnd    = 0.50 // and is gone
	highlightStart   = 0.45 // display value where the highlight control starts
	highlightFullEnd = 0.95 // and reaches full weight
)

func newGainTable(shadows, highlights float64) *gainTable {
	g := &gainTable{t: make([]float32, gainSize+1), lo: gainLo, hi: gainHi, scale: gainSize / (gainHi - gainLo)}
	hs := highlightStopsDown
	if highlights > 0 {
		hs = highlightStopsUp
	}
	prev := math.Inf(-1)
	for i := range g.t {
		b := gainLo + float64(i)*(gainHi-gainLo)/gainSize
		e := encode(math.Exp2(b))
		ws := smoothstep(0, shadowFadeIn, e) * (1 - smoothstep(shadowFadeStart, shadowFadeEnd, e))
		wh := smoothstep(highlightStart, highlightFullEnd, e)
		stops := shadowStops*shadows/100*ws + hs*highlights/100*wh
		// Keep b + stops increasing with slope >= minBaseSlope.
		if i > 0 {
			step := (gainHi - gainLo) / gainSize
			if b+stops < prev+minBaseSlope*step {
				stops = prev + minBaseSlope*step - b
			}
		}
		prev = b + stops
		g.t[i] = float32(math.Exp2(stops))
	}
	return g
}

func (g *gainTable) at(b float32) float32 {
	p := (b - g.lo) * g.scale
	if !(p > 0) {
		return g.t[0]
	}
	i := int(p)
	if i >= gainSize {
		return g.t[gainSize]
	}
	fr := p - float32(i)
	return g.t[i] + (g.t[i+1]-g.t[i])*fr
}

// fastLog2 approximates log2 for positive normal floats to about 0.0013 stops: the
// exponent comes from the bits and a cubic fits log2 of the mantissa on [1, 2).
func fastLog2(v float32) float32 {
	if !(v > lumFloor) {
		v = lumFloor
	}
	bits := math.Float32bits(v)
	e := float32(int32(bits>>23&0xff) - 127)
	m := math.Float32frombits(bits&0x007fffff | 0x3f800000) // mantissa in [1, 2)
	// A cubic for log2(m) on [1, 2], exact at both ends so the pieces join.
	p := ((0.15824871*m-1.05187502)*m+3.04788415)*m - 2.15425784
	return e + p
}

// sample evaluates the base layer at full-resolution position (x, y) (continuous
// coordinates) for log2 luminance l; the slow path for analysis.
func (bl *baseLayer) sample(x, y float64, l float32) float32 {
	gx := min(x/bl.ss, float64(bl.gw-1)-1e-6)
	gy := min(y/bl.ss, float64(bl.gh-1)-1e-6)
	gz := float64((l - bl.lmin) / bl.sr)
	gz = min(max(gz, 0), float64(bl.gd-1)-1e-3)
	i, j, z := int(gx), int(gy), int(gz)
	fx, fy, fz := float32(gx-float64(i)), float32(gy-float64(j)), float32(gz-float64(z))
	var num, den float32
	for dy := 0; dy < 2; dy++ {
		wy := fy
		if dy == 0 {
			wy = 1 - fy
		}
		for dx := 0; dx < 2; dx++ {
			wx := fx
			if dx == 0 {
				wx = 1 - fx
			}
			o := ((j+dy)*bl.gw+i+dx)*bl.gd + z
			num += wy * wx * (bl.num[o]*(1-fz) + bl.num[o+1]*fz)
			den += wy * wx * (bl.den[o]*(1-fz) + bl.den[o+1]*fz)
		}
	}
	return (num + gridFallback*l) / (den + gridFallback)
}
