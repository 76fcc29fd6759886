package tone

import (
	"context"
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
	// The grid's range cells are one stop (one binary exponent) tall, so a pixel's
	// cell comes straight from its float exponent; with the 5-tap blur, luminance
	// steps of more than about three stops are edges the base layer keeps.
	// gridFallback is the weight of a cell's own range coordinate in its value, which
	// only matters where the grid holds little data (highlights too small for the
	// analysis copy).
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
// and bottom edges average what they have). Once ctx is done it stops within a few
// rows and returns ctx.Err().
func makeThumb(ctx context.Context, img *imaging.Image, gains [3]float32) (*thumb, error) {
	W, H := img.W(), img.H()
	k := 1
	for max(W, H)/k > thumbSide {
		k++
	}
	t := &thumb{w: (W + k - 1) / k, h: (H + k - 1) / k, k: k}
	t.rgb = make([]float32, t.w*t.h*3)
	c := img.C
	// Large blocks average every other row: the means hardly change and the pass
	// reads half the memory.
	step := 1
	if k >= 4 {
		step = 2
	}
	err := imaging.BandsCtx(ctx, t.h, func(_, ty0, ty1 int) {
		for ty := ty0; ty < ty1; ty++ {
			out := t.rgb[ty*t.w*3 : (ty+1)*t.w*3]
			y0, y1 := ty*k, min((ty+1)*k, H)
			for y := y0; y < y1; y += step {
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
			rows := float32((y1 - y0 + step - 1) / step)
			for tx := 0; tx < t.w; tx++ {
				n := rows * float32(min((tx+1)*k, W)-tx*k)
				out[tx*3] *= gains[0] / n
				out[tx*3+1] *= gains[1] / n
				out[tx*3+2] *= gains[2] / n
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// baseLayer is a bilateral grid of log2 luminance: cells of ss x ss full-resolution
// pixels by one stop. Splatting accumulates sums of log luminance and counts, both
// are blurred, and their ratio is the bilateral mean: the base layer. Cells that saw
// little data are pulled toward their own range coordinate. Each cell then stores
// the exposure multiplier the look assigns to its base value, so slicing a pixel is a
// trilinear interpolation of multipliers, with no logarithm or table lookup.
type baseLayer struct {
	gw, gh, gd int
	ss         float64   // full-resolution pixels per spatial cell
	emin       int       // binary exponent of range cell 0
	mul        []float32 // exposure multiplier per cell
	col        []int32   // left grid column for each full-resolution column
	colFr      []float32 // weight of the right one
}

// rangeCoord is a pixel's position on the grid's range axis: its binary exponent plus
// the mantissa's fraction, a piecewise-linear log2 (within 0.09 stops of it) that
// costs two bit operations. Luminance below lumFloor counts as lumFloor.
func rangeCoord(y float32) (e int, f float32) {
	if !(y > lumFloor) {
		y = lumFloor
	}
	bits := math.Float32bits(y)
	return int(bits>>23) - 127, float32(bits&0x7fffff) * (1.0 / (1 << 23))
}

// newBaseLayer builds the grid from the analysis copy and bakes the look's base
// tone map g and its clarity (-100..100) into it.
func newBaseLayer(t *thumb, fullW int, g *gainTable, clarity float64) *baseLayer {
	n := t.w * t.h
	l := make([]float32, n)
	emin, emax := math.MaxInt32, math.MinInt32
	for i := range l {
		y := lumR*t.rgb[3*i] + lumG*t.rgb[3*i+1] + lumB*t.rgb[3*i+2]
		l[i] = fastLog2(y)
		e, _ := rangeCoord(y)
		emin, emax = min(emin, e), max(emax, e)
	}
	cs := max(2.0, math.Round(gridSpatial*float64(max(t.w, t.h)))) // thumbnail pixels per cell
	bl := &baseLayer{
		gw: int(float64(t.w)/cs) + 2, gh: int(float64(t.h)/cs) + 2,
		ss: cs * float64(t.k), emin: emin - 1,
	}
	bl.gd = emax - bl.emin + 3
	size := bl.gw * bl.gh * bl.gd
	num, den := make([]float32, size), make([]float32, size)
	// Splat every thumbnail pixel into its 8 neighbouring cells.
	for j := 0; j < t.h; j++ {
		gy := (float64(j) + 0.5) / cs
		for i := 0; i < t.w; i++ {
			p := j*t.w + i
			v := l[p]
			e, fz := rangeCoord(lumR*t.rgb[3*p] + lumG*t.rgb[3*p+1] + lumB*t.rgb[3*p+2])
			gx := (float64(i) + 0.5) / cs
			x0, y0, z0 := int(gx), int(gy), e-bl.emin
			fx, fy := float32(gx)-float32(x0), float32(gy)-float32(y0)
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
					num[o] += w0 * v
					den[o] += w0
					num[o+1] += w1 * v
					den[o+1] += w1
				}
			}
		}
	}
	bl.blur(num)
	bl.blur(den)
	bl.mul = num
	k := clarityAt100 * clarity / 100
	for o := range num {
		// A cell's range coordinate is the log2 luminance of the pixels that slice it
		// there, so its distance from the cell's base is their local detail.
		center := float32(bl.emin + o%bl.gd)
		base := (num[o] + gridFallback*center) / (den[o] + gridFallback)
		m := g.at(base)
		if k != 0 {
			m *= clarityGain(k, center, base)
		}
		bl.mul[o] = m
	}
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
// blended, gw x gd multipliers.
type slab []float32

func (bl *baseLayer) newSlab() slab { return make(slab, bl.gw*bl.gd) }

// rows fills s for full-resolution row y.
func (bl *baseLayer) rows(y int, s slab) {
	g := min((float64(y)+0.5)/bl.ss, float64(bl.gh-1)-1e-6)
	j := int(g)
	f := float32(g - float64(j))
	n := bl.gw * bl.gd
	a, b := bl.mul[j*n:(j+1)*n], bl.mul[(j+1)*n:(j+2)*n]
	for i := range s {
		s[i] = a[i] + (b[i]-a[i])*f
	}
}

// at returns the exposure multiplier at full-resolution column x for a pixel of
// linear luminance y, from the row's slab.
func (bl *baseLayer) at(x int, y float32, s slab) float32 {
	e, fz := rangeCoord(y)
	z := e - bl.emin
	if z < 0 {
		z, fz = 0, 0
	} else if z > bl.gd-2 {
		z, fz = bl.gd-2, 1
	}
	o := int(bl.col[x])*bl.gd + z
	c := s[o : o+bl.gd+2 : o+bl.gd+2]
	v0 := c[0] + (c[1]-c[0])*fz
	v1 := c[bl.gd] + (c[bl.gd+1]-c[bl.gd])*fz
	return v0 + (v1-v0)*bl.colFr[x]
}

// Clarity: at +100 a pixel's distance in stops from its surroundings grows by
// clarityAt100 (negative clarity shrinks it). The distance is softly limited to
// clarityLimit stops first, so an edge the grid does not keep apart (a window bar
// against the sky) gains contrast without a halo; the effect fades in above
// clarityFrom (display value of the surroundings) and is full from clarityFull, which
// spares the noise of deep shadows.
const (
	clarityAt100 = 0.6
	clarityLimit = 1.5
	clarityFrom  = 0.04
	clarityFull  = 0.25
	// Bright surroundings (a window's view, veiled by glare and by the merge's
	// compression) get up to 1 + clarityHighlights times the effect, rising from
	// clarityHighlightFrom to white.
	clarityHighlights    = 1.0
	clarityHighlightFrom = 0.55
	// clarityMinSlope is the least slope of output against input stops that negative
	// clarity may leave.
	clarityMinSlope = 0.2
)

// clarityGain is the multiplier clarity k (clarityAt100 at slider 100) gives a pixel
// of log2 luminance v on a base of log2 luminance b. v times it rises with v, so
// clarity never reverses the order of two pixels in one place.
func clarityGain(k float64, v, b float32) float32 {
	d := float64(v - b)
	d = clarityLimit * math.Tanh(d/clarityLimit)
	e := imaging.EncodeSRGB64(math.Exp2(float64(b)))
	w := imaging.Smoothstep(clarityFrom, clarityFull, e) * (1 + clarityHighlights*imaging.Smoothstep(clarityHighlightFrom, 1, e))
	// Flattening stops short of reversing: a slope of 1 + k*w*tanh' stays positive.
	return float32(math.Exp2(math.Max(k*w, clarityMinSlope-1) * d))
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
		e := imaging.EncodeSRGB64(math.Exp2(b))
		ws := imaging.Smoothstep(0, shadowFadeIn, e) * (1 - imaging.Smoothstep(shadowFadeStart, shadowFadeEnd, e))
		wh := imaging.Smoothstep(highlightStart, highlightFullEnd, e)
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

// sample returns the exposure multiplier at full-resolution position (x, y)
// (continuous coordinates) for a pixel of linear luminance lum; the slow path for
// analysis.
func (bl *baseLayer) sample(x, y float64, lum float32) float32 {
	gx := min(x/bl.ss, float64(bl.gw-1)-1e-6)
	gy := min(y/bl.ss, float64(bl.gh-1)-1e-6)
	e, fz := rangeCoord(lum)
	z := e - bl.emin
	if z < 0 {
		z, fz = 0, 0
	} else if z > bl.gd-2 {
		z, fz = bl.gd-2, 1
	}
	i, j := int(gx), int(gy)
	fx, fy := float32(gx-float64(i)), float32(gy-float64(j))
	var v float32
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
			v += wy * wx * (bl.mul[o]*(1-fz) + bl.mul[o+1]*fz)
		}
	}
	return v
}
