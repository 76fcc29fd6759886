package sky

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// spillLine is how far from the ground-to-sky line (of the spill's length) a colour
// may lie and still count as spill; skySpread is how far (linear RGB) the old sky
// behind a pixel may differ from the local estimate of it (a deeper blue pocket in a
// canopy, the sky brightening towards the sun).
const (
	spillLine = 0.25
	skySpread = 0.1
)

// compositor blends the new sky into the photo, one full-resolution row at a time.
//
// A skyline pixel is a mix I = alpha*S_old + (1-alpha)*F of the old sky and the
// foreground. The foreground's share (1-alpha)*F = I - alpha*S_old is recovered with the
// local old-sky colour (colour decontamination), so the old sky leaves no halo, and the
// result is (1-alpha)*F*gain + alpha*S_new. Pixels just outside the matte (alpha 0,
// a.near) are only cleaned of sky spill: a JPEG's chroma and a lens's flare bleed the
// old sky a pixel or two into the ground, which would stay as a rim over the new sky.
// Decontamination only undoes mixes; a surface at the skyline that carries the old
// sky's light (a flashing, a sunlit coping, leaf edges) keeps its colour, so within the
// skyline's first pixels that light is swapped for the new sky's (edgelight.go).
type compositor struct {
	a              *analysis
	newSky, oldSky *imaging.Image
	fg             *imaging.Image // the local ground colour, on oldSky's grid; nil: sky@4.0.0's composite
	gain           [3]float32

	nx0, nx1, ny0, ny1 []int32 // bilinear taps into newSky
	nfx, nfy           []float32
	ox0, ox1, oy0, oy1 []int32 // and into oldSky
	ofx, ofy           []float32
	gx, gy             []int32   // nearest guide pixel, for a.near
	nearRow            []bool    // guide rows with any a.near pixel
	light              []float32 // edge lighting weight per guide pixel (edgeLight), on oldSky's grid; nil: none
	lightRow           []bool    // guide rows with any weight
}

func (k *compositor) prepare(w, h int) {
	k.nx0, k.nx1, k.nfx = bilinearTaps(w, k.newSky.W())
	k.ny0, k.ny1, k.nfy = bilinearTaps(h, k.newSky.H())
	k.ox0, k.ox1, k.ofx = bilinearTaps(w, k.oldSky.W())
	k.oy0, k.oy1, k.ofy = bilinearTaps(h, k.oldSky.H())
	if k.a.near != nil {
		gw, gh := k.a.guide.W(), k.a.guide.H()
		k.gx, k.gy = make([]int32, w), make([]int32, h)
		for x := range k.gx {
			k.gx[x] = int32(min(x*gw/w, gw-1))
		}
		for y := range k.gy {
			k.gy[y] = int32(min(y*gh/h, gh-1))
		}
		k.nearRow = make([]bool, gh)
		for p, v := range k.a.near {
			k.nearRow[p/gw] = k.nearRow[p/gw] || v
		}
	}
}

// maxSample bounds input samples under the sky (HDR data may exceed 1, not infinity).
const maxSample = 1e6

// scratch is one worker's row buffers.
type scratch struct {
	alpha []float32
}

func newScratch(w int) *scratch { return &scratch{alpha: make([]float32, w)} }

// bilinear samples a 3-channel image at the tap pair (x0, x1) x (y0, y1) into px.
func bilinear(r0, r1 []float32, x0, x1 int32, fx, fy float32, px *[3]float32) {
	a, b := int(x0)*3, int(x1)*3
	for c := 0; c < 3; c++ {
		top := r0[a+c] + fx*(r0[b+c]-r0[a+c])
		bot := r1[a+c] + fx*(r1[b+c]-r1[a+c])
		px[c] = top + fy*(bot-top)
	}
}

// row composites row y of src into dst (c channels each) and returns the row's alpha sum.
func (k *compositor) row(y int, src, dst []float32, c int, s *scratch) float64 {
	w := len(s.alpha)
	live := k.a.matte.alphaRow(y, src, c, s.alpha)
	g0, g1, g2 := k.gain[0], k.gain[1], k.gain[2]
	var near []bool
	var l0, l1 []float32
	if k.fg != nil {
		gw := k.a.guide.W()
		gy := int(k.gy[y])
		if k.nearRow[gy] {
			near = k.a.near[gy*gw : gy*gw+gw]
		}
		if y0, y1 := int(k.oy0[y]), int(k.oy1[y]); k.light != nil && (k.lightRow[y0] || k.lightRow[y1]) {
			l0, l1 = k.light[y0*gw:y0*gw+gw], k.light[y1*gw:y1*gw+gw]
		}
	}
	if !live && near == nil && l0 == nil {
		for x := 0; x < w; x++ {
			i := x * c
			dst[i], dst[i+1], dst[i+2] = src[i]*g0, src[i+1]*g1, src[i+2]*g2
			if c == 4 {
				dst[i+3] = src[i+3]
			}
		}
		return 0
	}
	n0, n1 := k.newSky.Row(int(k.ny0[y])), k.newSky.Row(int(k.ny1[y]))
	o0, o1 := k.oldSky.Row(int(k.oy0[y])), k.oldSky.Row(int(k.oy1[y]))
	nfy, ofy := k.nfy[y], k.ofy[y]
	sum := 0.0
	var sNew, sOld, fLoc [3]float32
	var f0, f1 []float32
	if k.fg != nil {
		f0, f1 = k.fg.Row(int(k.oy0[y])), k.fg.Row(int(k.oy1[y]))
	}
	for x := 0; x < w; x++ {
		i := x * c
		al := s.alpha[x]
		if c == 4 {
			dst[i+3] = src[i+3]
		}
		// The edge lighting's weight, where it can show: not in the sky itself.
		var e float32
		if l0 != nil && al < 1-1.0/64 {
			a, b, fx := k.ox0[x], k.ox1[x], k.ofx[x]
			top := l0[a] + fx*(l0[b]-l0[a])
			e = top + ofy*(l1[a]+fx*(l1[b]-l1[a])-top)
		}
		if al == 0 {
			if near != nil && near[k.gx[x]] {
				if e > 0 {
					bilinear(n0, n1, k.nx0[x], k.nx1[x], k.nfx[x], nfy, &sNew)
				}
				bilinear(o0, o1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &sOld)
				bilinear(f0, f1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &fLoc)
				k.decontaminate(src[i:i+3], dst[i:i+3], 0, e, &sOld, &fLoc, &sNew)
				continue
			}
			if e > 0 {
				// Beyond the spill's reach: the ground's colour is its own, only
				// relit.
				bilinear(n0, n1, k.nx0[x], k.nx1[x], k.nfx[x], nfy, &sNew)
				bilinear(o0, o1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &sOld)
				bilinear(f0, f1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &fLoc)
				k.relit(src[i:i+3], dst[i:i+3], e, &sOld, &fLoc, &sNew)
				continue
			}
			dst[i], dst[i+1], dst[i+2] = src[i]*g0, src[i+1]*g1, src[i+2]*g2
			continue
		}
		sum += float64(al)
		bilinear(n0, n1, k.nx0[x], k.nx1[x], k.nfx[x], nfy, &sNew)
		bilinear(o0, o1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &sOld)
		inv := 1 - al
		if f0 != nil {
			bilinear(f0, f1, k.ox0[x], k.ox1[x], k.ofx[x], ofy, &fLoc)
			k.decontaminate(src[i:i+3], dst[i:i+3], al, e, &sOld, &fLoc, &sNew)
			continue
		}
		for ch := 0; ch < 3; ch++ {
			v := clampSample(src[i+ch])
			// The foreground's share, bounded by what a foreground can contribute.
			fg := v - al*sOld[ch]
			fg = max(0, min(fg, inv*max(v, 1)))
			dst[i+ch] = fg*k.gain[ch] + al*sNew[ch]
		}
	}
	return sum
}

// clampSample maps NaN and negative input to 0 and bounds infinite input.
func clampSample(v float32) float32 {
	if !(v >= 0) {
		return 0
	}
	return min(v, maxSample)
}

// relit writes the ground pixel src, relit with weight e (see relight), to dst.
func (k *compositor) relit(src, dst []float32, e float32, sOld, fLoc, sNew *[3]float32) {
	var f [3]float32
	for ch := 0; ch < 3; ch++ {
		f[ch] = clampSample(src[ch])
	}
	v := f
	relight(&f, src, e, sOld, fLoc, sNew)
	for ch := 0; ch < 3; ch++ {
		dst[ch] = max(0, min(f[ch], max(v[ch], fLoc[ch], 1))) * k.gain[ch]
	}
}

// decontaminate composites one pixel of sky alpha al over the new sky sNew, given the
// local old sky sOld and the local ground colour fLoc. The foreground colour F is the
// one that best explains I = al*S + (1-al)*F, held towards fLoc as the pixel becomes
// mostly sky (least squares with a prior of weight fgPrior*al). What is left of the old
// sky in F (its part along sOld - fLoc beyond the local ground's own) is then taken
// out: it is spill from the sky, the pale or cyan rim a leaf or a roof edge would
// otherwise keep over the new sky. With edge lighting weight e > 0 what F still has of
// the old sky's light is then swapped for the new sky's (relight).
func (k *compositor) decontaminate(src, dst []float32, al, e float32, sOld, fLoc, sNew *[3]float32) {
	inv := 1 - al
	pw := fgPrior * al
	var f, u, hi [3]float32
	var uu, fu float32
	for ch := 0; ch < 3; ch++ {
		v := clampSample(src[ch])
		// The line test below looks at the estimate before it is clamped: clamping
		// one channel of a pixel that is all old sky would move it off the line.
		f[ch] = (inv*(v-al*sOld[ch]) + pw*fLoc[ch]) / (inv*inv + pw)
		hi[ch] = max(v, fLoc[ch], 1)
		u[ch] = sOld[ch] - fLoc[ch]
		uu += u[ch] * u[ch]
		fu += (f[ch] - fLoc[ch]) * u[ch]
	}
	if uu > 1e-6 && fu > 0 {
		// Only what reads as a mix with the old sky is spill: a colour off the line
		// from the ground to the sky (a shadowed wall lit blue by the sky, a sky-grey
		// flashing seen flat) is the surface's own and is kept.
		t := fu / uu
		var res float32
		for ch := 0; ch < 3; ch++ {
			e := f[ch] - fLoc[ch] - t*u[ch]
			res += e * e
		}
		// An error e in the local old sky moves F by al/(1-al)*e: mostly-sky pixels
		// are allowed that much further off the line (in each of three channels).
		spread := al / max(inv, 0.05) * skySpread
		t *= float32(math.Exp(float64(-res / (spillLine*spillLine*t*t*uu + 3*spread*spread + 1e-9))))
		for ch := 0; ch < 3; ch++ {
			f[ch] -= t * u[ch]
		}
	}
	if e > 0 {
		relight(&f, src, e, sOld, fLoc, sNew)
	}
	for ch := 0; ch < 3; ch++ {
		f[ch] = max(0, min(f[ch], hi[ch]))
		dst[ch] = inv*f[ch]*k.gain[ch] + al*sNew[ch]
	}
}
