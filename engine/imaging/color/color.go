// Package color makes whites, ceilings and greys neutral under mixed light (recipe
// develop@1.2.0): daylight through windows, tungsten and LED lamps, light bounced off
// coloured walls.
//
// It estimates the illumination on a coarse copy of the photo and divides it out
// per pixel, a von Kries (diagonal) correction in linear light:
//
//   - a global illuminant from grey-edge statistics (van de Weijer et al., first
//     order, Minkowski p = 6), refined by the brightest near-neutral surfaces;
//   - a field of local deviations from it, one per cell of a coarse grid, from the
//     near-neutral surfaces and the edges of the cell (Gijsenij et al.'s
//     multi-illuminant grey-edge, Hsu et al.'s light mixture idea on a grid): first
//     only the affine trend of every cell's edges across the photo, then cells'
//     near-neutral pixels and their edges alone, shrunk towards the trend where a
//     cell has little such evidence and capped, then smoothed across cells with a
//     confidence-weighted (normalised) filter and interpolated bilinearly;
//   - gains normalised to unit luminance, so lightness stays where it was, and
//     faded out towards clipped highlights, which carry no colour to correct.
//
// Every statistic is taken on the coarse copy divided by the current estimate, so
// the whole estimate moves with a global colour cast (a diagonal transform of the
// photo): the same room under 2700 K or 8000 K gives the same result, while the
// local deviations are bounded so the colours of wood, paint and textiles stay.
package color

import (
	"errors"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Tuning. Cells are square, about gridCells across the longer side of the photo.
const (
	coarseEdge   = 256  // longer side of the coarse copy, in pixels
	gridCells    = 12   // cells across the longer side
	edgeP        = 6.0  // Minkowski norm of the global grey-edge
	clipLevel    = 0.97 // a coarse pixel reaching this in a channel counts as clipped
	neutralChr   = 0.10 // chroma (relative) below which a pixel counts as near-neutral
	localChr     = 0.30 // the looser bound for local near-neutrals, whose light differs
	edgeChr      = 0.30 // after the first round, edges count only on pixels this near neutral
	maxDeviation = 1.5  // cap of a cell's log deviation from the global illuminant
	localShrinkK = 10.0 // evidence (pixels) at which a cell's deviation gets half weight
	fieldRounds  = 5    // rounds of the local field
	offLocus     = 0.35 // most a local deviation may leave the Planckian locus (log)
	fadeLo       = 0.93 // the correction fades out between these maximum channels
	fadeHi       = 0.995
)

// Result describes the estimate, for notes and tests.
type Result struct {
	Global [3]float32 // the global illuminant, unit luminance
	Gains  [3]float32 // gains of the global correction (1/Global)
	// Neutrals is the share of the coarse copy found near-neutral and bright; a low
	// share means the global estimate rests on edges alone.
	Neutrals float64
	Cells    [2]int // grid size, columns and rows
}

// Correct neutralises the illumination of img (linear light, 3 or 4 channels) in
// place.
func Correct(img *imaging.Image) (Result, error) {
	if err := check(img); err != nil {
		return Result{}, err
	}
	w, h := img.W(), img.H()
	if w < 8 || h < 8 {
		return Result{}, nil // too small to estimate anything
	}
	e := newEstimator(w, h)
	e.downscale(img)
	res := e.estimate()
	e.apply(img)
	return res, nil
}

func check(img *imaging.Image) error {
	if img == nil || img.Pix == nil {
		return errors.New("color: need a linear float image")
	}
	if img.C < 3 {
		return errors.New("color: need an RGB image")
	}
	return nil
}

// Field is an estimated correction, for a caller that applies it row by row while
// it writes the rows anyway (develop applies it as it corrects the lens).
type Field struct {
	e      *estimator
	xa, xb []int32 // per column: the two cells' offsets in a row of gains
	tx     []float32
}

// EstimateRemapped estimates the correction of the photo img becomes once every
// pixel (x, y) of it is taken from img at m(x, y), times gain (a lens correction),
// without making that photo: the coarse copy of img is remapped instead, which the
// estimate cannot tell apart (the map moves and scales content by a few per cent
// over hundreds of pixels, and the estimate works on cells of hundreds of pixels).
// The photo has img's size. It returns nil for a photo too small to estimate.
func EstimateRemapped(img *imaging.Image, m func(x, y float64) (sx, sy, gain float64)) (*Field, Result, error) {
	if err := check(img); err != nil {
		return nil, Result{}, err
	}
	w, h := img.W(), img.H()
	if w < 8 || h < 8 {
		return nil, Result{}, nil
	}
	e := newEstimator(w, h)
	e.downscale(img)
	e.remap(m)
	res := e.estimate()
	return e.asField(), res, nil
}

// remap resamples the coarse copy through m (see EstimateRemapped): each coarse
// pixel is the coarse copy bilinearly at where m takes its centre from, times the
// gain, clipped when a coarse pixel it reads from is.
func (e *estimator) remap(m func(x, y float64) (sx, sy, gain float64)) {
	cw, ch, f := e.cw, e.ch, float64(e.f)
	out := make([]float32, len(e.coarse))
	clip := make([]bool, len(e.clip))
	for cy := range ch {
		for cx := range cw {
			sx, sy, g := m((float64(cx)+0.5)*f-0.5, (float64(cy)+0.5)*f-0.5)
			// Positions within a thousandth of a coarse pixel read that pixel alone.
			u := snap(min(max((sx+0.5)/f-0.5, 0), float64(cw-1)))
			v := snap(min(max((sy+0.5)/f-0.5, 0), float64(ch-1)))
			x0, y0 := int(u), int(v)
			x1, y1 := min(x0+1, cw-1), min(y0+1, ch-1)
			fx, fy := float32(u-float64(x0)), float32(v-float64(y0))
			i := cy*cw + cx
			for c := range 3 {
				a, b := e.coarse[(y0*cw+x0)*3+c], e.coarse[(y0*cw+x1)*3+c]
				d, q := e.coarse[(y1*cw+x0)*3+c], e.coarse[(y1*cw+x1)*3+c]
				top, bot := a+fx*(b-a), d+fx*(q-d)
				out[i*3+c] = (top + fy*(bot-top)) * float32(g)
			}
			clip[i] = e.clip[y0*cw+x0] || fx > 0 && e.clip[y0*cw+x1] ||
				fy > 0 && (e.clip[y1*cw+x0] || fx > 0 && e.clip[y1*cw+x1])
		}
	}
	e.coarse, e.clip = out, clip
}

// snap rounds v to an integer within a thousandth of one.
func snap(v float64) float64 {
	if r := math.Round(v); math.Abs(v-r) < 1e-3 {
		return r
	}
	return v
}

// asField returns the estimate as a Field, with the columns' cells worked out.
func (e *estimator) asField() *Field {
	fd := &Field{e: e, xa: make([]int32, e.w), xb: make([]int32, e.w), tx: make([]float32, e.w)}
	span := float32(e.cell * e.f)
	for x := range e.w {
		fx := (float32(x)+0.5)/span - 0.5
		x0 := int(fx+1) - 1 // floor for fx >= -1
		fd.tx[x] = fx - float32(x0)
		fd.xa[x], fd.xb[x] = int32(clampi(x0, e.gx)*3), int32(clampi(x0+1, e.gx)*3)
	}
	return fd
}

// ApplyRow corrects row y of the photo (its w pixels of nc channels, linear light)
// in place. Rows may be corrected concurrently.
func (fd *Field) ApplyRow(y int, row []float32, nc int) {
	var rg [3 * (gridCells + 1)]float32
	fd.e.rowGains(y, rg[:fd.e.gx*3])
	applyRow(row, nc, rg[:fd.e.gx*3], fd.xa, fd.xb, fd.tx)
}

// estimator holds the coarse copy and the field; it is allocated once per photo.
type estimator struct {
	w, h   int // the photo's size
	f      int // block size of the coarse copy
	cw, ch int
	coarse []float32 // cw*ch*3, linear
	clip   []bool    // coarse pixels touching clipped input
	glob   [3]float64
	gx, gy int       // grid size
	cell   int       // cell size in coarse pixels
	gains  []float32 // gx*gy*3 gains of the smoothed field
	ys     []float64 // scratch: luminances of near-neutral pixels
	neut   float64
}

func newEstimator(w, h int) *estimator {
	f := max(1, (max(w, h)+coarseEdge-1)/coarseEdge)
	cw, ch := max(1, w/f), max(1, h/f)
	cell := max(4, (max(cw, ch)+gridCells-1)/gridCells)
	gx, gy := (cw+cell-1)/cell, (ch+cell-1)/cell
	return &estimator{w: w, h: h, f: f, cw: cw, ch: ch,
		coarse: make([]float32, cw*ch*3), clip: make([]bool, cw*ch),
		gx: gx, gy: gy, cell: cell, gains: make([]float32, gx*gy*3)}
}

// coarseTaps is about how many pixels a block of the coarse copy averages along each
// side: a block of a large photo is sampled on a lattice, every step-th row and
// column, instead of read whole. Reading a 21 MP float image whole costs more than
// the rest of the estimate, and 8×8 samples of a 22×22 block give the same coarse
// statistics (the estimate works on averages over cells of hundreds of blocks).
const coarseTaps = 8

// blockLattice is the step and first offset of the lattice a block of f pixels is
// sampled on, and how many taps it has: every pixel for blocks up to 2×coarseTaps,
// centred in the block.
func blockLattice(f int) (step, first, n int) {
	step = max(1, f/coarseTaps)
	if f < 2*coarseTaps {
		step = 1
	}
	n = (f-1)/step + 1
	return step, (f - 1 - (n-1)*step) / 2, n
}

// downscale averages f×f blocks, sampled on blockLattice, into the coarse copy, row
// bands in parallel.
func (e *estimator) downscale(img *imaging.Image) {
	f, cw := e.f, e.cw
	step, first, n := blockLattice(f)
	inv := 1 / float32(n*n)
	imaging.Bands(e.ch, func(_, y0, y1 int) {
		for cy := y0; cy < y1; cy++ {
			out := e.coarse[cy*cw*3 : (cy+1)*cw*3]
			clear(out)
			clipped := e.clip[cy*cw : (cy+1)*cw]
			clear(clipped)
			for dy := first; dy < f; dy += step {
				row := img.Row(cy*f + dy)
				for cx := 0; cx < cw; cx++ {
					o := cx * 3
					p := (cx*f + first) * img.C
					for dx := first; dx < f; dx += step {
						r, g, b := row[p], row[p+1], row[p+2]
						out[o] += r
						out[o+1] += g
						out[o+2] += b
						if r >= clipLevel || g >= clipLevel || b >= clipLevel {
							clipped[cx] = true
						}
						p += step * img.C
					}
				}
			}
			for i := range out {
				out[i] *= inv
			}
		}
	})
}

// luma is the luminance of linear sRGB (Rec. 709 weights).
func luma(r, g, b float64) float64 { return 0.2126*r + 0.7152*g + 0.0722*b }

// unit scales an illuminant to unit luminance; a degenerate one becomes neutral.
func unit(v [3]float64) [3]float64 {
	y := luma(v[0], v[1], v[2])
	if !(y > 1e-9) || v[0] <= 0 || v[1] <= 0 || v[2] <= 0 {
		return [3]float64{1, 1, 1}
	}
	return [3]float64{v[0] / y, v[1] / y, v[2] / y}
}

// estimate finds the global illuminant and the field of gains.
func (e *estimator) estimate() Result {
	e.glob = unit(e.greyEdge())
	// The brightest near-neutral surfaces (ceilings, white walls, trims) say best
	// what white is; two rounds, each selecting them under the estimate so far.
	for range 2 {
		bn, share := e.brightNeutral(e.glob)
		e.neut = share
		if share <= 0 {
			break
		}
		// Trust them in proportion to how much of the photo they cover, up to 80 %.
		a := 0.8 * math.Min(1, share/0.05)
		var m [3]float64
		for c := range 3 {
			m[c] = math.Exp(a*math.Log(bn[c]) + (1-a)*math.Log(e.glob[c]))
		}
		e.glob = unit(m)
	}
	e.field()
	r := Result{Neutrals: e.neut, Cells: [2]int{e.gx, e.gy}}
	for c := range 3 {
		r.Global[c] = float32(e.glob[c])
		r.Gains[c] = float32(1 / e.glob[c])
	}
	return r
}

// greyEdge returns the Minkowski-p mean of the coarse copy's gradients per channel,
// skipping clipped pixels.
func (e *estimator) greyEdge() [3]float64 {
	cw, ch := e.cw, e.ch
	parts := make([][3]float64, imaging.Workers())
	imaging.Bands(ch-2, func(wk, y0, y1 int) {
		var s [3]float64
		for y := y0 + 1; y < y1+1; y++ {
			for x := 1; x < cw-1; x++ {
				i := y*cw + x
				if e.clip[i] || e.clip[i-1] || e.clip[i+1] || e.clip[i-cw] || e.clip[i+cw] {
					continue
				}
				for c := range 3 {
					gx := float64(e.coarse[(i+1)*3+c] - e.coarse[(i-1)*3+c])
					gy := float64(e.coarse[(i+cw)*3+c] - e.coarse[(i-cw)*3+c])
					m := gx*gx + gy*gy // |grad|^2
					s[c] += m * m * m  // |grad|^6
				}
			}
		}
		parts[wk] = s
	})
	var s [3]float64
	for _, p := range parts {
		for c := range 3 {
			s[c] += p[c]
		}
	}
	if s[0] <= 0 || s[1] <= 0 || s[2] <= 0 {
		return e.greyWorld()
	}
	return [3]float64{math.Pow(s[0], 1/edgeP), math.Pow(s[1], 1/edgeP), math.Pow(s[2], 1/edgeP)}
}

// greyWorld is the fallback for photos without edges.
func (e *estimator) greyWorld() [3]float64 {
	var s [3]float64
	for i := 0; i < e.cw*e.ch; i++ {
		for c := range 3 {
			s[c] += float64(e.coarse[i*3+c])
		}
	}
	return s
}

// chroma is how far a colour, divided by the illuminant ill, is from neutral: the
// largest relative distance of a channel from the luminance. It returns the
// luminance of the divided colour too.
func chroma(p []float32, ill [3]float64) (chr, y float64) {
	r, g, b := float64(p[0])/ill[0], float64(p[1])/ill[1], float64(p[2])/ill[2]
	y = luma(r, g, b)
	if y <= 1e-6 {
		return 1, 0
	}
	return max(math.Abs(r-y), math.Abs(g-y), math.Abs(b-y)) / y, y
}

// brightNeutral averages the coarse pixels that are near-neutral under ill and in
// the brightest quarter of those, weighted by luminance; share is the fraction of
// the coarse copy they make up.
func (e *estimator) brightNeutral(ill [3]float64) (mean [3]float64, share float64) {
	n := e.cw * e.ch
	// The luminance above which a near-neutral pixel counts as bright: the 75th
	// percentile of the near-neutral ones, taken exactly (not from a histogram), so
	// the selection does not change when the whole photo is scaled or cast.
	ys := e.ys[:0]
	for i := range n {
		if e.clip[i] {
			continue
		}
		chr, y := chroma(e.coarse[i*3:i*3+3], ill)
		if chr < neutralChr && y > 0 {
			ys = append(ys, y)
		}
	}
	e.ys = ys
	if len(ys) == 0 {
		return mean, 0
	}
	slices.Sort(ys)
	lo := ys[len(ys)*3/4]
	var sw float64
	sel := 0
	for i := range n {
		if e.clip[i] {
			continue
		}
		p := e.coarse[i*3 : i*3+3]
		chr, y := chroma(p, ill)
		if chr >= neutralChr || y <= 0 || y < lo {
			continue
		}
		w := y * (1 - chr/neutralChr)
		for c := range 3 {
			mean[c] += w * float64(p[c])
		}
		sw += w
		sel++
	}
	if sw <= 0 {
		return mean, 0
	}
	for c := range 3 {
		mean[c] /= sw
	}
	return mean, float64(sel) / float64(n)
}

// field computes each cell's deviation from the global illuminant, smooths the
// deviations across cells and stores the gains of the field.
func (e *estimator) field() {
	gx, gy := e.gx, e.gy
	ncell := gx * gy
	dev := make([]float64, ncell*3) // log deviation per channel, unit luminance
	prev := make([]float64, ncell*3)
	trend := make([]float64, ncell*3)
	wt := make([]float64, ncell)
	sm := make([]float64, ncell*3)
	sw := make([]float64, ncell)
	// Each round selects a cell's near-neutral surfaces under the light the round
	// before found there, so the field can follow a light far from the global one
	// (a lamp at one end of the room, daylight at the other).
	//
	// The first round takes every edge, so a strong cast at one side of the room
	// is seen at all, but keeps only its affine trend: a window-to-lamp gradient
	// is smooth across the photo, the colour of wooden cabinets or a painted wall
	// is not, and their edges are as coloured as they are. Later rounds take edges
	// only on near-neutral pixels under the light found so far, and a cell with
	// little such evidence falls back to the trend, not to its own surfaces.
	for round := range fieldRounds {
		copy(prev, dev)
		ec := math.Inf(1)
		if round > 0 {
			ec = edgeChr
		}
		e.cells(dev, prev, wt, trend, ec)
		e.fitTrend(dev, wt, trend)
		if round == 0 {
			copy(dev, trend)
			continue
		}
		e.smooth(dev, wt, sm, sw)
	}
	for k := range ncell {
		var ill [3]float64
		for c := range 3 {
			ill[c] = e.glob[c] * math.Exp(dev[k*3+c])
		}
		ill = unit(ill)
		for c := range 3 {
			e.gains[k*3+c] = float32(1 / ill[c])
		}
	}
}

// cells estimates each cell's log deviation from the global light into dev, with
// its weight in wt, shrunk towards trend where evidence is thin; prev holds the
// previous round's field. Edges count only on pixels with chroma below edgeChr.
func (e *estimator) cells(dev, prev, wt, trend []float64, edgeChr float64) {
	gx, cell, cw := e.gx, e.cell, e.cw
	imaging.Bands(e.gy, func(_, r0, r1 int) {
		for cyi := r0; cyi < r1; cyi++ {
			for cxi := 0; cxi < gx; cxi++ {
				var nsum, esum [3]float64
				var nw, ew float64
				k := cyi*gx + cxi
				var here [3]float64
				for c := range 3 {
					here[c] = e.glob[c] * math.Exp(prev[k*3+c])
				}
				for y := cyi * cell; y < min(e.ch, (cyi+1)*cell); y++ {
					for x := cxi * cell; x < min(cw, (cxi+1)*cell); x++ {
						i := y*cw + x
						if e.clip[i] {
							continue
						}
						p := e.coarse[i*3 : i*3+3]
						chr, yy := chroma(p, here)
						// Near-neutral surfaces under this cell's light as the last
						// round found it.
						if chr < localChr && yy > 1e-4 {
							w := yy * (1 - chr/localChr)
							for c := range 3 {
								nsum[c] += w * float64(p[c]) / e.glob[c]
							}
							nw += w
						}
						// Edges: the local grey-edge (p = 2), on the divided copy.
						if chr < edgeChr && x > 0 && x < cw-1 && y > 0 && y < e.ch-1 && !e.clip[i+1] && !e.clip[i-1] && !e.clip[i+cw] && !e.clip[i-cw] {
							var m [3]float64
							for c := range 3 {
								dx := float64(e.coarse[(i+1)*3+c]-e.coarse[(i-1)*3+c]) / e.glob[c]
								dy := float64(e.coarse[(i+cw)*3+c]-e.coarse[(i-cw)*3+c]) / e.glob[c]
								m[c] = dx*dx + dy*dy
							}
							if l := luma(m[0], m[1], m[2]); l > 1e-6 {
								for c := range 3 {
									esum[c] += m[c]
								}
								ew++
							}
						}
					}
				}
				var est [3]float64
				var evidence float64
				switch {
				case nw > 0 && ew > 0:
					// Equal parts of both, each on unit luminance.
					nu := unit(nsum)
					eu := unit([3]float64{math.Sqrt(esum[0]), math.Sqrt(esum[1]), math.Sqrt(esum[2])})
					for c := range 3 {
						est[c] = math.Sqrt(nu[c] * eu[c])
					}
					evidence = nw/(yNorm(nsum, nw)+1e-9) + ew*0.5
				case ew > 0:
					est = unit([3]float64{math.Sqrt(esum[0]), math.Sqrt(esum[1]), math.Sqrt(esum[2])})
					evidence = ew * 0.5
				default:
					est = [3]float64{1, 1, 1}
				}
				est = unit(est)
				// Little evidence: the trend; a large deviation: capped, since
				// a cell that differs that much is more likely a coloured surface.
				s := evidence / (evidence + localShrinkK)
				var d [3]float64
				for c := range 3 {
					d[c] = math.Max(-maxDeviation, math.Min(maxDeviation, math.Log(est[c])))
				}
				d = alongLocus(d)
				for c := range 3 {
					t := trend[k*3+c]
					dev[k*3+c] = t + s*(d[c]-t)
				}
				wt[k] = s + 1e-3
			}
		}
	})
}

// smooth filters the field with a confidence-weighted 3×3 binomial filter, so a
// cell with little evidence takes its neighbours' light.
func (e *estimator) smooth(dev, wt, sm, sw []float64) {
	gx, gy := e.gx, e.gy
	for y := range gy {
		for x := range gx {
			var acc [3]float64
			var a float64
			for dy := -1; dy <= 1; dy++ {
				for dx := -1; dx <= 1; dx++ {
					xx, yy := x+dx, y+dy
					if xx < 0 || yy < 0 || xx >= gx || yy >= gy {
						continue
					}
					k := (2 - abs(dx)) * (2 - abs(dy))
					w := float64(k) * wt[yy*gx+xx]
					for c := range 3 {
						acc[c] += w * dev[(yy*gx+xx)*3+c]
					}
					a += w
				}
			}
			for c := range 3 {
				sm[(y*gx+x)*3+c] = acc[c] / a
			}
			sw[y*gx+x] = a / 16
		}
	}
	copy(dev, sm)
	copy(wt, sw)
}

// locusR and locusB are the direction in which lights differ between a window and
// a lamp, in log chroma (log r/g, log b/g): from 6500 K to 2700 K on the Planckian
// locus, normalised.
const locusR, locusB = 0.484, -0.875

// alongLocus keeps a cell's log deviation along the Planckian locus and caps what
// leaves it: rooms are lit by daylight, tungsten and LEDs, which differ from blue to
// amber (their mixtures, made in linear light, bend off the line a little), while a
// large green or magenta deviation is far more often a plant, a painted wall or the
// view through a window than the light.
func alongLocus(d [3]float64) [3]float64 {
	r, b := d[0]-d[1], d[2]-d[1]
	p := r*locusR + b*locusB
	or, ob := r-p*locusR, b-p*locusB
	if m := math.Hypot(or, ob); m > offLocus {
		or, ob = or*offLocus/m, ob*offLocus/m
	}
	r, b = p*locusR+or, p*locusB+ob
	return [3]float64{d[1] + r, d[1], d[1] + b}
}

func yNorm(s [3]float64, n float64) float64 {
	if n <= 0 {
		return 1
	}
	return luma(s[0], s[1], s[2]) / n
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// apply multiplies every pixel by the field's gains, bilinearly interpolated between
// cell centres, faded towards 1 as the pixel nears clipping. Where a column falls
// between the cells is the same on every row: worked out once.
func (e *estimator) apply(img *imaging.Image) {
	fd := e.asField()
	imaging.Bands(e.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			fd.ApplyRow(y, img.Row(y), img.C)
		}
	})
}

// rowGains interpolates the cells' gains vertically for row y into rg (gx×3).
func (e *estimator) rowGains(y int, rg []float32) {
	span := float32(e.cell * e.f)
	gx, gy := e.gx, e.gy
	fy := (float32(y)+0.5)/span - 0.5
	y0i := int(math.Floor(float64(fy)))
	ty := fy - float32(y0i)
	ya, yb := clampi(y0i, gy), clampi(y0i+1, gy)
	for x := range gx {
		for c := range 3 {
			a, b := e.gains[(ya*gx+x)*3+c], e.gains[(yb*gx+x)*3+c]
			rg[x*3+c] = a + (b-a)*ty
		}
	}
}

// applyRow multiplies a row of nc-channel pixels by the gains rg interpolated
// between the cells xa and xb of each column, faded towards 1 near clipping.
func applyRow(row []float32, nc int, rg []float32, xa, xb []int32, txs []float32) {
	for x := range xa {
		a := rg[xa[x] : xa[x]+3 : xa[x]+3]
		b := rg[xb[x] : xb[x]+3 : xb[x]+3]
		tx := txs[x]
		gr := a[0] + (b[0]-a[0])*tx
		gg := a[1] + (b[1]-a[1])*tx
		gb := a[2] + (b[2]-a[2])*tx
		p := row[x*nc : x*nc+3 : x*nc+3]
		if m := max(p[0], p[1], p[2]); m > fadeLo {
			t := min(1, (m-fadeLo)/(fadeHi-fadeLo))
			t = t * t * (3 - 2*t)
			gr += (1 - gr) * t
			gg += (1 - gg) * t
			gb += (1 - gb) * t
		}
		p[0] *= gr
		p[1] *= gg
		p[2] *= gb
	}
}

func clampi(i, n int) int { return min(n-1, max(0, i)) }

// fitTrend fits each log channel of the field with an affine function of the cell
// position, weighted by wt (least squares), into trend: the large-scale course of
// the light, which single coloured surfaces hardly move.
func (e *estimator) fitTrend(dev, wt, trend []float64) {
	gx, gy := e.gx, e.gy
	var m [3][3]float64
	var rhs [3][3]float64
	for y := range gy {
		for x := range gx {
			k := y*gx + x
			u := cellPos(x, y, gx, gy)
			for i := range 3 {
				for j := range 3 {
					m[i][j] += wt[k] * u[i] * u[j]
				}
				for c := range 3 {
					rhs[c][i] += wt[k] * u[i] * dev[k*3+c]
				}
			}
		}
	}
	var coef [3][3]float64
	for c := range 3 {
		coef[c] = solve3(m, rhs[c])
	}
	for y := range gy {
		for x := range gx {
			k := y*gx + x
			u := cellPos(x, y, gx, gy)
			var d [3]float64
			for c := range 3 {
				d[c] = coef[c][0]*u[0] + coef[c][1]*u[1] + coef[c][2]*u[2]
			}
			d = alongLocus(d)
			copy(trend[k*3:k*3+3], d[:])
		}
	}
}

// cellPos is the affine basis at a cell: 1 and its centre, from -0.5 to 0.5.
func cellPos(x, y, gx, gy int) [3]float64 {
	return [3]float64{1, (float64(x)+0.5)/float64(gx) - 0.5, (float64(y)+0.5)/float64(gy) - 0.5}
}

// solve3 solves m·x = b by Cramer's rule; a singular system (a grid of one row
// or column, or no evidence) gives the constant fit alone, or nothing.
func solve3(m [3][3]float64, b [3]float64) [3]float64 {
	d := det3(m)
	if math.Abs(d) < 1e-12 {
		if m[0][0] > 1e-12 {
			return [3]float64{b[0] / m[0][0], 0, 0}
		}
		return [3]float64{}
	}
	var x [3]float64
	for i := range 3 {
		a := m
		for r := range 3 {
			a[r][i] = b[r]
		}
		x[i] = det3(a) / d
	}
	return x
}

func det3(a [3][3]float64) float64 {
	return a[0][0]*(a[1][1]*a[2][2]-a[1][2]*a[2][1]) -
		a[0][1]*(a[1][0]*a[2][2]-a[1][2]*a[2][0]) +
		a[0][2]*(a[1][0]*a[2][1]-a[1][1]*a[2][0])
}
