package cull

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// AnalysisEdge is the longest edge frames are measured at: large enough that a
// blur of a few pixels at a listing photo's size still shows, small enough that a
// scene is measured in a few tens of milliseconds. Larger frames are reduced to it.
const AnalysisEdge = 1024

// tileSize is the side of the squares sharpness is summed over; two frames are
// compared over the squares well exposed in both.
const tileSize = 16

// Directions and steps of the differences: horizontal, vertical and the two
// diagonals (down-right, up-right), each at 1 and 4 pixels. Blur removes the short differences first, so
// the ratio of short to long ones says how sharp a frame is whatever its contrast
// (and so whatever its exposure and tone curve). The differences are of sRGB codes,
// not of log luminance: a camera's noise and its JPEG's rounding are about even in
// codes, while in log luminance a dark bracket's noise reads as detail.
var steps = [nSteps]int{1, 4}

const nSteps = 2

// A pixel takes part when its linear luminance lies between these: above the noise
// and quantisation floor of an 8-bit file (sRGB code about 24) and below clipping
// (about 240).
const (
	validLo = 0.009
	validHi = 0.87
)

// energies are a tile's sums of squared differences of sRGB codes, by direction
// and step, and how many pairs went into each direction.
type energies struct {
	e [4][nSteps]float64
	n [4][nSteps]int32
}

// stats is what Judge measures of one frame.
type stats struct {
	w, h   int
	tw, th int        // tiles across and down
	tiles  []energies // tw×th
	tileOK []bool     // at least tileValid of the tile's pixels are well exposed

	hist [256]int32 // histogram of the luminance's 8-bit sRGB codes
	n    int        // pixels
	// logMean is log2 of the mean linear luminance.
	logMean float64
	// thumb is a small box-averaged copy of the luminance (thumbEdge on the long
	// edge), for the structure measures.
	thumb      []float32
	thW, thH   int
	validShare float64 // share of pixels well exposed

	lum   *imaging.Image // the analysis-size luminance, for edges
	edges []float32      // gradient magnitude at alignEdge, made when first needed
	edW   int
}

// tileValid is the share of well-exposed pixels that makes a tile count.
const tileValid = 0.9

// thumbEdge is the long edge of the structure thumbnail.
const thumbEdge = 64

// luminance returns the frame's linear luminance fitted within AnalysisEdge.
func luminance(img *imaging.Image) *imaging.Image {
	w, h := img.W(), img.H()
	lum := imaging.New(w, h, 1)
	imaging.Bands(h, func(_, y0, y1 int) {
		var buf []float32
		if img.IsNarrow() {
			buf = make([]float32, w*img.C)
		}
		for y := y0; y < y1; y++ {
			row := img.LinearRow(y, buf)
			out := lum.Row(y)
			switch {
			case img.C >= 3:
				for x := range out {
					o := x * img.C
					out[x] = 0.2126*row[o] + 0.7152*row[o+1] + 0.0722*row[o+2]
				}
			case img.C == 2:
				for x := range out {
					out[x] = row[2*x]
				}
			default:
				copy(out, row)
			}
		}
	})
	if aw, ah := imaging.FitWithin(w, h, AnalysisEdge); aw != w || ah != h {
		lum = imaging.Resize(lum, aw, ah)
	}
	return lum
}

// measure computes a frame's stats from its luminance.
func measure(lum *imaging.Image) *stats {
	w, h := lum.W(), lum.H()
	s := &stats{w: w, h: h, n: w * h, lum: lum}
	s.tw, s.th = (w+tileSize-1)/tileSize, (h+tileSize-1)/tileSize
	s.tiles = make([]energies, s.tw*s.th)
	s.tileOK = make([]bool, s.tw*s.th)

	// sRGB codes of the luminance, and which pixels are well exposed: a difference
	// touching one that is not is left out.
	lg := make([]float32, w*h)
	valid := make([]bool, w*h)
	nw := imaging.Workers()
	hists := make([][256]int32, nw)
	sums := make([]float64, nw)
	imaging.Bands(h, func(wk, y0, y1 int) {
		hist := &hists[wk]
		var sum float64
		for y := y0; y < y1; y++ {
			row := lum.Row(y)
			for x, v := range row {
				i := y*w + x
				sum += float64(v)
				hist[imaging.Encode8(v)]++
				if v >= validLo && v <= validHi {
					valid[i] = true
					lg[i] = srgbCode(v)
				}
			}
		}
		sums[wk] = sum
	})
	var sum float64
	for k := range hists {
		for c, n := range hists[k] {
			s.hist[c] += n
		}
		sum += sums[k]
	}
	s.logMean = math.Log2(sum/float64(s.n) + 1e-6)

	// Tile sums, a band of tile rows per worker.
	imaging.Bands(s.th, func(_, ty0, ty1 int) {
		for ty := ty0; ty < ty1; ty++ {
			for tx := 0; tx < s.tw; tx++ {
				t := &s.tiles[ty*s.tw+tx]
				x0, y0 := tx*tileSize, ty*tileSize
				x1, y1 := min(x0+tileSize, w), min(y0+tileSize, h)
				nv := 0
				for y := y0; y < y1; y++ {
					for x := x0; x < x1; x++ {
						i := y*w + x
						if !valid[i] {
							continue
						}
						nv++
						v := lg[i]
						// Written out per direction: this loop is most of Judge's time.
						for k, st := range steps {
							right, down, up := x+st < w, y+st < h, y-st >= 0
							if right {
								if j := i + st; valid[j] {
									dv := lg[j] - v
									t.e[0][k] += float64(dv * dv)
									t.n[0][k]++
								}
							}
							if down {
								if j := i + st*w; valid[j] {
									dv := lg[j] - v
									t.e[1][k] += float64(dv * dv)
									t.n[1][k]++
								}
							}
							if right && down {
								if j := i + st*w + st; valid[j] {
									dv := lg[j] - v
									t.e[2][k] += float64(dv * dv)
									t.n[2][k]++
								}
							}
							if right && up {
								if j := i - st*w + st; valid[j] {
									dv := lg[j] - v
									t.e[3][k] += float64(dv * dv)
									t.n[3][k]++
								}
							}
						}
					}
				}
				s.tileOK[ty*s.tw+tx] = float64(nv) >= tileValid*float64((x1-x0)*(y1-y0))
			}
		}
	})
	nv := 0
	for _, v := range valid {
		if v {
			nv++
		}
	}
	s.validShare = float64(nv) / float64(s.n)

	// Structure thumbnail.
	s.thW, s.thH = imaging.FitWithin(w, h, thumbEdge)
	if s.thW == w && s.thH == h {
		s.thumb = append([]float32(nil), lum.Pix[:w*h]...)
	} else {
		s.thumb = imaging.Resize(lum, s.thW, s.thH).Pix
	}
	return s
}

// percentile returns the sRGB code (0..255) below which share p of the pixels lie.
func (s *stats) percentile(p float64) int {
	target := int32(math.Ceil(p * float64(s.n)))
	var acc int32
	for c, n := range s.hist {
		acc += n
		if acc >= target {
			return c
		}
	}
	return 255
}

// flatness returns how many stops the well-exposed pixels of the thumbnail span
// (2nd to 98th percentile), 0 when under 90 percent of them are well exposed: a grey
// card spans a fraction of a stop, a room several.
func (s *stats) flatness() float64 {
	var lg []float64
	for _, v := range s.thumb {
		if v >= validLo && v <= validHi {
			lg = append(lg, math.Log2(float64(v)))
		}
	}
	if len(lg) < len(s.thumb)*9/10 {
		return math.Inf(1) // clipped or dark: not a card
	}
	sort.Float64s(lg)
	return lg[len(lg)*98/100] - lg[len(lg)*2/100]
}

// lookRatio is the median log2 ratio of b's thumbnail to a's over the pixels well
// exposed in both. ok says enough were to tell; view that they show the same
// view: the correlation of their log luminance there, at the best of the shifts
// within viewReach thumbnail pixels (a handheld repeat moves), is at least
// sameView.
func lookRatio(a, b *stats) (ratio float64, ok, view bool) {
	if len(a.thumb) != len(b.thumb) || a.thW != b.thW {
		return 0, false, false
	}
	// Well above the noise floor only: a dark bracket's floor is the same in every
	// dark bracket.
	const lo = 0.03
	usable := func(v float32) bool { return v >= lo && v <= validHi }
	var r []float64
	for i, va := range a.thumb {
		if vb := b.thumb[i]; usable(va) && usable(vb) {
			r = append(r, math.Log2(float64(vb)/float64(va)))
		}
	}
	// A dark bracket keeps only its windows: a few percent of the frame is enough.
	minN := max(30, len(a.thumb)*3/100)
	if len(r) < minN {
		return 0, false, false
	}
	w, h := a.thW, a.thH
	var la, lb []float64
	for dy := -viewReach; dy <= viewReach && !view; dy++ {
		for dx := -viewReach; dx <= viewReach && !view; dx++ {
			la, lb = la[:0], lb[:0]
			for y := max(0, -dy); y < min(h, h-dy); y++ {
				for x := max(0, -dx); x < min(w, w-dx); x++ {
					va, vb := a.thumb[y*w+x], b.thumb[(y+dy)*w+x+dx]
					if usable(va) && usable(vb) {
						la = append(la, math.Log2(float64(va)))
						lb = append(lb, math.Log2(float64(vb)))
					}
				}
			}
			view = len(la) >= minN && Pearson(la, lb) >= sameView
		}
	}
	return median(r), true, view
}

// viewReach is how far (thumbnail pixels, of thumbEdge) a repeated frame may have
// moved for lookRatio to still see the same view.
const viewReach = 2

// sameView is the least correlation of two frames' log luminance for them to show
// one view: a repeated frame measures 0.9 and more, two rooms far less.
const sameView = 0.75

// Pearson is the correlation of x and y (0 when either is constant or has fewer
// than two values); grouping compares thumbnails with it too.
func Pearson(x, y []float64) float64 {
	n := float64(len(x))
	if n < 2 {
		return 0
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx, my = mx/n, my/n
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// srgbLUT holds sRGB codes (0..255, fractional) of linear values 0..1 in even
// steps, for srgbCode.
var srgbLUT = func() []float32 {
	t := make([]float32, lutN+2)
	for i := range t {
		t[i] = imaging.LinearToSRGB(float32(i)/lutN) * 255
	}
	return t
}()

const lutN = 8192

// srgbCode is the fractional sRGB code of a linear value in 0..1, interpolated.
func srgbCode(v float32) float32 {
	f := v * lutN
	i := int(f)
	i = min(max(i, 0), lutN)
	a := f - float32(i)
	return srgbLUT[i] + a*(srgbLUT[i+1]-srgbLUT[i])
}

// highGap is how far apart (stops) two frames' brightest pixels are, at the 99th
// and 99.9th percentiles, where neither is clipped.
func highGap(a, b *stats) float64 {
	g := 0.0
	for _, p := range []float64{0.99, 0.999} {
		ca, cb := a.percentile(p), b.percentile(p)
		if ca >= 250 || cb >= 250 || ca == 0 || cb == 0 {
			continue
		}
		la, lb := imaging.Decode8(uint8(ca)), imaging.Decode8(uint8(cb))
		g = max(g, math.Abs(math.Log2(float64(la)/float64(lb))))
	}
	return g
}

// alignEdge is the long edge frames are aligned at, and alignReach how far (in its
// pixels) a frame may have moved: a handheld bracket moves a few pixels in 256.
const (
	alignEdge  = 256
	alignReach = 8
)

// edgeMap returns the frame's gradient magnitude (of sRGB codes) at alignEdge.
func (s *stats) edgeMap() ([]float32, int) {
	if s.edges != nil {
		return s.edges, s.edW
	}
	w, h := imaging.FitWithin(s.w, s.h, alignEdge)
	small := s.lum
	if w != s.w || h != s.h {
		small = imaging.Resize(s.lum, w, h)
	}
	c := make([]float32, w*h)
	for y := range h {
		for x, v := range small.Row(y) {
			c[y*w+x] = srgbCode(min(max(v, 0), 1))
		}
	}
	e := make([]float32, w*h)
	for y := 0; y+1 < h; y++ {
		for x := 0; x+1 < w; x++ {
			i := y*w + x
			gx, gy := c[i+1]-c[i], c[i+w]-c[i]
			e[i] = float32(math.Sqrt(float64(gx*gx + gy*gy)))
		}
	}
	s.edges, s.edW = e, w
	return e, w
}

// shift returns how far b has moved against a (pixels at alignEdge): the
// whole-pixel offset within alignReach that best correlates their edges. NaN when
// the frames differ in size.
func shift(a, b *stats) float64 {
	ea, w := a.edgeMap()
	eb, wb := b.edgeMap()
	if w != wb || len(ea) != len(eb) {
		return math.NaN()
	}
	h := len(ea) / w
	const r = alignReach
	if w <= 4*r || h <= 4*r {
		return math.NaN()
	}
	best, bx, by := math.Inf(-1), 0, 0
	for dy := -r; dy <= r; dy++ {
		for dx := -r; dx <= r; dx++ {
			var sab, saa, sbb float64
			for y := r; y < h-r-1; y++ {
				ra := ea[y*w : y*w+w]
				rb := eb[(y+dy)*w : (y+dy)*w+w]
				var ab, aa, bb float32
				for x := r; x < w-r-1; x++ {
					va, vb := ra[x], rb[x+dx]
					ab += va * vb
					aa += va * va
					bb += vb * vb
				}
				sab, saa, sbb = sab+float64(ab), saa+float64(aa), sbb+float64(bb)
			}
			if saa == 0 || sbb == 0 {
				continue
			}
			if c := sab / math.Sqrt(saa*sbb); c > best {
				best, bx, by = c, dx, dy
			}
		}
	}
	return math.Hypot(float64(bx), float64(by))
}
