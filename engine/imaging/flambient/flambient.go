// Package flambient blends a flash frame into the ambient exposure of the same
// scene, the way interior photographers edit "flambient" shots: the flash frame's
// colour and local contrast, the ambient's light distribution, and the windows from
// the darkest frame where the ambient is clipped.
//
// The blend works on luminance ratios. Let F be the flash frame and A the ambient
// (the merge of the ambient brackets, or the one ambient frame), lF and lA their log
// luminances. The ratio r = lA - lF is smoothed by a guided filter steered by lF (He
// et al. 2013, computed at a sixteenth of the pixels and applied at full size
// through its linear coefficients, so its edges are the flash frame's and flash
// fall-off across a depth edge leaves no halo). The output's log luminance is
// lF + m + ambientShare·(r̃ - m) + lift, with m the rooms' median ratio: large-scale
// the room takes the ambient's light (most of it: a flash laid over the ambient in
// luminosity mode at partial opacity, as editors do), small-scale the flash's detail
// passes through, and the output takes the flash pixel's chromaticity. lift brings
// the rooms' whites up to the brighter frame's.
//
// What the flash gets wrong is taken from the ambient, white-balanced to the flash
// (one diagonal gain measured where both are well exposed). It is found from the
// ratio's residual against the ratio smoothed along the ambient's edges instead
// (steered by the flash, the filter would take a shadow's edge for the scene's):
//
//   - flash shadows: the flash is darker than the ratio around predicts by 0.2 to
//     0.45 and more (log), a dark edge the ambient does not have;
//   - hot spots: the flash is brighter than predicted by 0.3 to 0.7 and more while
//     among its own brightest pixels (a specular reflection of the flash);
//   - what the flash did not reach (too little flash light to carry colour).
//
// Windows are where the ambient is clipped or far brighter than the flash frame sees
// it (daylight the flash's short exposure cuts), closed into whole regions so that
// no window is patched together from two frames. There the output is the darkest
// flash frame, scaled so the view sits bright but unclipped: the flash frames are
// the darkest frames of a flambient set for daylight (a fraction of the ambient's
// shutter time), and where the ambient merge is clipped every ambient bracket was.
//
// Several flash frames (the flash moved between pops) are combined first: the
// brightest per pixel for the room (a "lighten" blend), the darkest for the windows.
//
// The ambient image is replaced in place; the flash frames are only read and may be
// held narrow. The full-size passes run in row bands across imaging.Workers() with
// per-worker scratch and stop within a band piece of a cancel; the analysis between
// them works on the reduced planes only.
package flambient

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Report says what the blend did, for notes and tests.
type Report struct {
	// Shares of the frame (0..1) where the output came from the ambient because of
	// flash shadows, hot spots or no flash light, and from the flash frame's windows.
	Shadows, HotSpots, Unlit, Windows float64
	// Gains are the white balance that turns the ambient's colour into the flash's
	// (R, G, B at equal luminance), used where the ambient fills in.
	Gains [3]float64
	// WindowGain is the scale applied to the darkest flash frame in the windows.
	WindowGain float64
	// Lift is the log of the output's level over the ambient's.
	Lift float64
}

// Tuning. Log luminances are natural logs.
const (
	midEdge   = 1100   // long edge of the reduced planes
	logEps    = 1e-3   // luminance floor of the logs (about -7 EV from white)
	gfRadius  = 0.03   // guided filter radius, share of the reduced long edge
	gfEps     = 0.02   // guided filter regulariser (log luminance squared)
	shadowLo  = 0.2    // residual above which a pixel starts to count as flash shadow
	shadowHi  = 0.45   // ... and fully does
	hotLo     = 0.3    // residual below -hotLo starts a hot spot
	hotHi     = 0.7    //
	unlitLo   = 0.0015 // flash luminance below which the flash carries no colour
	unlitHi   = 0.006  //
	clipLevel = 0.96   // ambient channel at or above this is clipped
	windowTop = 0.72   // the windows' 97th percentile luminance after scaling
	// The ambient-to-flash ratio above the room's median (log) from which a cell
	// counts as seen through a window.
	outsideLo = 1.4
	outsideHi = 2.2
	// windowClose is the radius of the closing that makes a window whole, share
	// of the reduced long edge.
	windowClose = 0.025
	// liftAt is the percentile of the rooms' luminance at which the output is as
	// bright as the brighter frame: the whites, which an edit keeps white.
	liftAt = 0.9
	// ambientShare is how much of the light's distribution is the ambient's: the
	// rest is the flash's own, as an editor lays the flash frame in luminosity mode
	// at partial opacity over the ambient, for a crisper room.
	ambientShare = 0.7
)

// ErrSize is returned when the frames differ in size.
var ErrSize = errors.New("flambient: the ambient and flash frames differ in size")

// Blend blends the flash frames into ambient (a float32 3-channel image, replaced in
// place). flashes are 3-channel frames of the same size, float or narrow.
func Blend(ctx context.Context, ambient *imaging.Image, flashes []*imaging.Image) (Report, error) {
	if len(flashes) == 0 {
		return Report{}, errors.New("flambient: no flash frame")
	}
	if ambient.IsNarrow() || ambient.C != 3 {
		return Report{}, errors.New("flambient: the ambient must be a float32 RGB image")
	}
	for _, f := range flashes {
		if !imaging.SameSize(ambient, f) || f.C != 3 {
			return Report{}, ErrSize
		}
	}
	b := newBlender(ambient, flashes)
	if err := b.reduce(ctx); err != nil {
		return Report{}, err
	}
	if err := ctx.Err(); err != nil {
		return Report{}, err
	}
	b.analyse()
	if err := b.apply(ctx); err != nil {
		return Report{}, err
	}
	return b.rep, nil
}

// plane is a reduced single-channel buffer.
type plane []float32

// blender holds the reduced planes of one blend.
type blender struct {
	amb     *imaging.Image
	flashes []*imaging.Image
	w, h    int // full size
	s       int // reduction factor
	mw, mh  int // reduced size

	// Reduced means of the ambient and flash (lighten) RGB, the darkest flash
	// luminance, and the ambient's clipped share.
	aR, aG, aB, fR, fG, fB, dY, clip plane
	// Outputs of the analysis, upsampled in apply: the guided filter's coefficients
	// (r = ga*lF + gb), the ambient's weight and the window's weight.
	ga, gb, wAmb, wWin plane

	gains [3]float32
	winK  float32
	lift  float32 // added to the ratio's log: the output's level over the ambient's
	mid   float32 // the ratio's median log, about which ambientShare scales it
	rep   Report
}

func newBlender(amb *imaging.Image, flashes []*imaging.Image) *blender {
	w, h := amb.W(), amb.H()
	s := max(1, (max(w, h)+midEdge-1)/midEdge)
	mw, mh := (w+s-1)/s, (h+s-1)/s
	n := mw * mh
	b := &blender{amb: amb, flashes: flashes, w: w, h: h, s: s, mw: mw, mh: mh}
	for _, p := range []*plane{&b.aR, &b.aG, &b.aB, &b.fR, &b.fG, &b.fB, &b.dY, &b.clip, &b.ga, &b.gb, &b.wAmb, &b.wWin} {
		*p = make(plane, n)
	}
	return b
}

func lum(r, g, b float32) float32 { return 0.2126*r + 0.7152*g + 0.0722*b }

// flashRows reads row y of every flash frame (into bufs when narrow) and returns, per
// pixel, the lightest (room) and darkest (windows) flash pixel: both are the one
// frame's row when there is one flash frame.
func flashRows(flashes []*imaging.Image, y int, bufs, rows [][]float32, light, dark []float32) ([]float32, []float32) {
	for i, f := range flashes {
		rows[i] = f.LinearRow(y, bufs[i])
	}
	if len(flashes) == 1 {
		return rows[0], rows[0]
	}
	n := len(light) / 3
	for x := 0; x < n; x++ {
		o := x * 3
		li, di := 0, 0
		lv, dv := float32(-1), float32(math.MaxFloat32)
		for i, r := range rows {
			v := lum(r[o], r[o+1], r[o+2])
			if v > lv {
				lv, li = v, i
			}
			if v < dv {
				dv, di = v, i
			}
		}
		copy(light[o:o+3], rows[li][o:o+3])
		copy(dark[o:o+3], rows[di][o:o+3])
	}
	return light, dark
}

// scratch is one worker's row buffers.
type scratch struct {
	bufs, rows  [][]float32 // the flash frames' row buffers, and their rows
	light, dark []float32
	acc         []float32 // reduced row sums: 8 planes
	cnt         []float32
	mid         []float32 // apply: the reduced planes interpolated to one row, 4 × mw
}

func (b *blender) scratches() []scratch {
	out := make([]scratch, imaging.Workers())
	for i := range out {
		sc := &out[i]
		sc.bufs = make([][]float32, len(b.flashes))
		sc.rows = make([][]float32, len(b.flashes))
		for k := range sc.bufs {
			sc.bufs[k] = make([]float32, b.w*3)
		}
		if len(b.flashes) > 1 {
			sc.light = make([]float32, b.w*3)
			sc.dark = make([]float32, b.w*3)
		}
		sc.acc = make([]float32, 8*b.mw)
		sc.cnt = make([]float32, b.mw)
		sc.mid = make([]float32, 4*b.mw)
	}
	return out
}

// reduce fills the reduced planes: box means over s×s cells.
func (b *blender) reduce(ctx context.Context) error {
	scs := b.scratches()
	mw, s := b.mw, b.s
	return imaging.BandsCtx(ctx, b.mh, func(worker, y0, y1 int) {
		sc := &scs[worker]
		for my := y0; my < y1; my++ {
			clear(sc.acc)
			clear(sc.cnt)
			for y := my * s; y < min(b.h, my*s+s); y++ {
				ar := b.amb.Row(y)
				fl, dk := flashRows(b.flashes, y, sc.bufs, sc.rows, sc.light, sc.dark)
				for x := 0; x < b.w; x++ {
					o, m := x*3, x/s
					a := sc.acc[m*8 : m*8+8 : m*8+8]
					a[0] += ar[o]
					a[1] += ar[o+1]
					a[2] += ar[o+2]
					a[3] += fl[o]
					a[4] += fl[o+1]
					a[5] += fl[o+2]
					a[6] += lum(dk[o], dk[o+1], dk[o+2])
					if max(ar[o], ar[o+1], ar[o+2]) >= clipLevel {
						a[7]++
					}
					sc.cnt[m]++
				}
			}
			for m := 0; m < mw; m++ {
				k := 1 / max(sc.cnt[m], 1)
				a := sc.acc[m*8 : m*8+8]
				i := my*mw + m
				b.aR[i], b.aG[i], b.aB[i] = a[0]*k, a[1]*k, a[2]*k
				b.fR[i], b.fG[i], b.fB[i] = a[3]*k, a[4]*k, a[5]*k
				b.dY[i], b.clip[i] = a[6]*k, a[7]*k
			}
		}
	})
}

func smoothstep(lo, hi, v float32) float32 {
	t := min(max((v-lo)/(hi-lo), 0), 1)
	return t * t * (3 - 2*t)
}

// analyse works on the reduced planes: the guided filter of the ratio, the masks of
// what the ambient must fill in, the windows, and the gains.
func (b *blender) analyse() {
	n := b.mw * b.mh
	lF, lA, rho := make(plane, n), make(plane, n), make(plane, n)
	fY := make(plane, n)
	for i := range n {
		aY := lum(b.aR[i], b.aG[i], b.aB[i])
		fY[i] = lum(b.fR[i], b.fG[i], b.fB[i])
		lF[i] = float32(math.Log(float64(fY[i] + logEps)))
		lA[i] = float32(math.Log(float64(aY + logEps)))
		rho[i] = lA[i] - lF[i]
	}
	r := max(2, int(gfRadius*float64(max(b.mw, b.mh))+0.5))
	guided(lF, rho, b.ga, b.gb, b.mw, b.mh, r)
	// The ambient gives the light's distribution, not its level: a flambient edit
	// is as bright as the brighter of the two frames (the rooms' whites at liftAt,
	// windows left out), which the flash usually is.
	var la, lf plane
	for i := range n {
		if b.clip[i] < 0.05 {
			la = append(la, lum(b.aR[i], b.aG[i], b.aB[i]))
			lf = append(lf, fY[i])
		}
	}
	if lift := math.Log(float64(max(percentile(lf, liftAt), 1e-6) / max(percentile(la, liftAt), 1e-6))); lift > 0 {
		b.lift = float32(min(lift, 2))
	}
	b.rep.Lift = float64(b.lift)
	var rs plane
	for i := range n {
		if b.clip[i] < 0.05 {
			rs = append(rs, rho[i])
		}
	}
	b.mid = percentile(rs, 0.5)

	// The residual of the ratio smoothed along the ambient's edges: positive where
	// the flash is darker than the ratio around predicts (its shadows, edges the
	// ambient does not have), negative where brighter (its hot spots). Steered by
	// the flash instead, the ratio would take a shadow's edge for the scene's.
	da, db := make(plane, n), make(plane, n)
	guided(lA, rho, da, db, b.mw, b.mh, r)
	res := make(plane, n)
	for i := range n {
		res[i] = rho[i] - (da[i]*lA[i] + db[i])
	}
	tmp := make(plane, n)
	box(res, res, tmp, b.mw, b.mh, 1) // the sensor's noise is not a shadow
	hotRef := percentile(fY, 0.99)
	shadow, hot, unlit := make(plane, n), make(plane, n), make(plane, n)
	for i := range n {
		shadow[i] = smoothstep(shadowLo, shadowHi, res[i])
		hot[i] = smoothstep(hotLo, hotHi, -res[i]) * smoothstep(0.5, 0.8, fY[i]/max(hotRef, 1e-6))
		unlit[i] = 1 - smoothstep(unlitLo, unlitHi, fY[i])
	}
	// Grow the masks a little and soften them, so what the ambient fills in covers
	// a shadow's penumbra and meets the flash without a seam.
	for _, m := range []plane{shadow, hot} {
		dilate(m, tmp, b.mw, b.mh, 2)
		box(m, m, tmp, b.mw, b.mh, 2)
	}
	box(unlit, unlit, tmp, b.mw, b.mh, 2)

	// Windows: cells clipped in the ambient, grown over the bloom around them and
	// over the blinds' slats between clipped gaps (so a window comes whole from one
	// frame, never slat by slat from two), then softened.
	// The view through a window is also where the ambient is far brighter than
	// the flash frame sees it (daylight the flash's short exposure cuts, about
	// the exposures' ratio above the room's), clipped or not: a window is taken
	// whole, so its unclipped patches do not come out of the room's blend.
	outside := make(plane, n)
	for i := range n {
		outside[i] = max(smoothstep(0.2, 0.6, b.clip[i]), smoothstep(outsideLo, outsideHi, rho[i]-b.mid))
		b.wWin[i] = 0
		if outside[i] > 0.35 {
			b.wWin[i] = 1
		}
	}
	// A closing fills the holes a window's view leaves where it matches the room
	// (a dark branch, a slat), then a small growth covers the bloom. What it takes
	// in by mistake (a mullion) is still the flash frame's own picture of it.
	r = max(2, int(windowClose*float64(max(b.mw, b.mh))+0.5))
	dilate(b.wWin, tmp, b.mw, b.mh, r)
	erode(b.wWin, tmp, b.mw, b.mh, r-2)
	box(b.wWin, b.wWin, tmp, b.mw, b.mh, 3)

	var sh, ht, ul, wn float64
	for i := range n {
		w := b.wWin[i]
		b.wAmb[i] = max(shadow[i], hot[i], unlit[i])
		sh += float64(shadow[i] * (1 - w))
		ht += float64(hot[i] * (1 - w))
		ul += float64(unlit[i] * (1 - w))
		wn += float64(w)
	}
	b.rep.Shadows, b.rep.HotSpots, b.rep.Unlit, b.rep.Windows = sh/float64(n), ht/float64(n), ul/float64(n), wn/float64(n)

	// White balance of the ambient to the flash, where both are well exposed and
	// nothing above applies.
	var sa, sf [3]float64
	for i := range n {
		aY := lum(b.aR[i], b.aG[i], b.aB[i])
		if b.wAmb[i] > 0.1 || b.wWin[i] > 0.1 || aY < 0.01 || aY > 0.8 || fY[i] < 0.01 || fY[i] > 0.8 {
			continue
		}
		sa[0], sa[1], sa[2] = sa[0]+float64(b.aR[i]), sa[1]+float64(b.aG[i]), sa[2]+float64(b.aB[i])
		sf[0], sf[1], sf[2] = sf[0]+float64(b.fR[i]), sf[1]+float64(b.fG[i]), sf[2]+float64(b.fB[i])
	}
	g := [3]float64{1, 1, 1}
	if sa[0] > 0 && sa[1] > 0 && sa[2] > 0 && sf[1] > 0 {
		for c := range 3 {
			g[c] = (sf[c] / sf[1]) / (sa[c] / sa[1])
		}
		y := 0.2126*g[0] + 0.7152*g[1] + 0.0722*g[2]
		for c := range 3 {
			g[c] = min(max(g[c]/y, 0.25), 4)
		}
	}
	b.rep.Gains = g
	b.gains = [3]float32{float32(g[0]), float32(g[1]), float32(g[2])}

	// The windows' scale: the darkest flash's 97th percentile in the windows at
	// windowTop (cells are means, their brightest pixels above it).
	var win plane
	for i := range n {
		if outside[i] > 0.5 {
			win = append(win, b.dY[i])
		}
	}
	b.winK = 1
	if len(win) > 0 {
		if p := percentile(win, 0.97); p > 0 {
			b.winK = min(max(windowTop/p, 0.25), 32)
		}
	}
	b.rep.WindowGain = float64(b.winK)
}

// guided sets ga, gb to the guided filter's averaged coefficients of p steered by
// guide I (w×h), box radius r: the filtered p is ga·I + gb.
func guided(I, p, ga, gb plane, w, h, r int) {
	n := len(I)
	mI, mP, cII, cIP, tmp := make(plane, n), make(plane, n), make(plane, n), make(plane, n), make(plane, n)
	for i := range n {
		cII[i] = I[i] * I[i]
		cIP[i] = I[i] * p[i]
	}
	box(I, mI, tmp, w, h, r)
	box(p, mP, tmp, w, h, r)
	box(cII, cII, tmp, w, h, r)
	box(cIP, cIP, tmp, w, h, r)
	for i := range n {
		v := cII[i] - mI[i]*mI[i]
		c := cIP[i] - mI[i]*mP[i]
		a := c / (max(v, 0) + gfEps)
		ga[i] = a
		gb[i] = mP[i] - a*mI[i]
	}
	box(ga, ga, tmp, w, h, r)
	box(gb, gb, tmp, w, h, r)
}

// box is a mean filter of radius r (window clipped at the borders), src to dst
// (which may be src) through tmp.
func box(src, dst, tmp plane, w, h, r int) {
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			in, out := src[y*w:y*w+w], tmp[y*w:y*w+w]
			var s float32
			for x := 0; x <= min(r, w-1); x++ {
				s += in[x]
			}
			for x := 0; x < w; x++ {
				lo, hi := max(0, x-r), min(w-1, x+r)
				out[x] = s / float32(hi-lo+1)
				if x+r+1 < w {
					s += in[x+r+1]
				}
				if x-r >= 0 {
					s -= in[x-r]
				}
			}
		}
	})
	imaging.Bands(w, func(_, x0, x1 int) {
		for x := x0; x < x1; x++ {
			var s float32
			for y := 0; y <= min(r, h-1); y++ {
				s += tmp[y*w+x]
			}
			for y := 0; y < h; y++ {
				lo, hi := max(0, y-r), min(h-1, y+r)
				v := s / float32(hi-lo+1)
				if y+r+1 < h {
					s += tmp[(y+r+1)*w+x]
				}
				if y-r >= 0 {
					s -= tmp[(y-r)*w+x]
				}
				dst[y*w+x] = v
			}
		}
	})
}

// dilate replaces m by its maximum over a (2r+1)² square, through tmp.
func dilate(m, tmp plane, w, h, r int) {
	morph(m, tmp, w, h, r, func(a, b float32) float32 { return max(a, b) })
}

// erode replaces m by its minimum over a (2r+1)² square, through tmp.
func erode(m, tmp plane, w, h, r int) {
	morph(m, tmp, w, h, r, func(a, b float32) float32 { return min(a, b) })
}

func morph(m, tmp plane, w, h, r int, pick func(a, b float32) float32) {
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				v := m[y*w+x]
				for k := max(0, x-r); k <= min(w-1, x+r); k++ {
					v = pick(v, m[y*w+k])
				}
				tmp[y*w+x] = v
			}
		}
	})
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				v := tmp[y*w+x]
				for k := max(0, y-r); k <= min(h-1, y+r); k++ {
					v = pick(v, tmp[k*w+x])
				}
				m[y*w+x] = v
			}
		}
	})
}

func percentile(v plane, q float64) float32 {
	if len(v) == 0 {
		return 0
	}
	s := append(plane(nil), v...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[int(q*float64(len(s)-1))]
}

// apply writes the blend into the ambient, row by row, with the reduced planes
// interpolated bilinearly.
func (b *blender) apply(ctx context.Context) error {
	scs := b.scratches()
	mw, s := b.mw, b.s
	// Horizontal interpolation: left cell and weight of every column, shared.
	xi := make([]int32, b.w)
	xw := make([]float32, b.w)
	for x := range b.w {
		f := (float32(x)+0.5)/float32(s) - 0.5
		i := int(math.Floor(float64(f)))
		t := f - float32(i)
		if i < 0 {
			i, t = 0, 0
		}
		if i >= mw-1 {
			i, t = mw-1, 0
		}
		xi[x], xw[x] = int32(i), t
	}
	planes := [4]plane{b.ga, b.gb, b.wAmb, b.wWin}
	lift := float32(math.Exp(float64(b.lift)))
	g0, g1, g2, k := b.gains[0]*lift, b.gains[1]*lift, b.gains[2]*lift, b.winK
	return imaging.BandsCtx(ctx, b.h, func(worker, y0, y1 int) {
		sc := &scs[worker]
		for y := y0; y < y1; y++ {
			f := (float32(y)+0.5)/float32(s) - 0.5
			j := int(math.Floor(float64(f)))
			t := f - float32(j)
			if j < 0 {
				j, t = 0, 0
			}
			if j >= b.mh-1 {
				j, t = b.mh-1, 0
			}
			j1 := min(j+1, b.mh-1)
			for p, pl := range planes {
				r0, r1, out := pl[j*mw:j*mw+mw], pl[j1*mw:j1*mw+mw], sc.mid[p*mw:p*mw+mw]
				for m := range mw {
					out[m] = r0[m] + t*(r1[m]-r0[m])
				}
			}
			ar := b.amb.Row(y)
			fl, dk := flashRows(b.flashes, y, sc.bufs, sc.rows, sc.light, sc.dark)
			for x := 0; x < b.w; x++ {
				i, u := int(xi[x]), xw[x]
				i1 := min(i+1, mw-1)
				var v [4]float32
				for p := range 4 {
					row := sc.mid[p*mw : p*mw+mw]
					v[p] = row[i] + u*(row[i1]-row[i])
				}
				o := x * 3
				fr, fg, fb := fl[o], fl[o+1], fl[o+2]
				fy := lum(fr, fg, fb) + logEps
				lf := float32(math.Log(float64(fy)))
				ratio := float32(math.Exp(float64(ambientShare*(v[0]*lf+v[1]-b.mid) + b.mid + b.lift)))
				// The flash's chromaticity at the ambient's light.
				kf := ratio
				r, g, bl := fr*kf, fg*kf, fb*kf
				wa, ww := min(max(v[2], 0), 1), min(max(v[3], 0), 1)
				r += wa * (ar[o]*g0 - r)
				g += wa * (ar[o+1]*g1 - g)
				bl += wa * (ar[o+2]*g2 - bl)
				r += ww * (dk[o]*k - r)
				g += ww * (dk[o+1]*k - g)
				bl += ww * (dk[o+2]*k - bl)
				ar[o], ar[o+1], ar[o+2] = max(r, 0), max(g, 0), max(bl, 0)
			}
		}
	})
}
