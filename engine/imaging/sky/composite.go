package sky

import "github.com/porchlight/porchlight/engine/imaging"

// compositor blends the new sky into the photo, one full-resolution row at a time.
//
// A skyline pixel is a mix I = alpha*S_old + (1-alpha)*F of the old sky and the
// foreground. The foreground's share (1-alpha)*F = I - alpha*S_old is recovered with the
// local old-sky colour (colour decontamination), so the old sky leaves no halo, and the
// result is (1-alpha)*F*gain + alpha*S_new.
type compositor struct {
	a              *analysis
	newSky, oldSky *imaging.Image
	gain           [3]float32

	nx0, nx1, ny0, ny1 []int32 // bilinear taps into newSky
	nfx, nfy           []float32
	ox0, ox1, oy0, oy1 []int32 // and into oldSky
	ofx, ofy           []float32
}

func (k *compositor) prepare(w, h int) {
	k.nx0, k.nx1, k.nfx = bilinearTaps(w, k.newSky.W())
	k.ny0, k.ny1, k.nfy = bilinearTaps(h, k.newSky.H())
	k.ox0, k.ox1, k.ofx = bilinearTaps(w, k.oldSky.W())
	k.oy0, k.oy1, k.ofy = bilinearTaps(h, k.oldSky.H())
}

// scratch is one worker's row buffers.
type scratch struct {
	coef, alpha, sNew, sOld []float32
}

func newScratch(w int) *scratch {
	return &scratch{
		coef: make([]float32, w*coefPlanes), alpha: make([]float32, w),
		sNew: make([]float32, w*3), sOld: make([]float32, w*3),
	}
}

// sampleRow interpolates a 3-channel image along full-resolution row y into dst.
func sampleRow(img *imaging.Image, y0, y1 int32, fy float32, x0, x1 []int32, fx []float32, dst []float32) {
	r0, r1 := img.Row(int(y0)), img.Row(int(y1))
	for x := range x0 {
		a, b, f := int(x0[x])*3, int(x1[x])*3, fx[x]
		for c := 0; c < 3; c++ {
			top := r0[a+c] + f*(r0[b+c]-r0[a+c])
			bot := r1[a+c] + f*(r1[b+c]-r1[a+c])
			dst[x*3+c] = top + fy*(bot-top)
		}
	}
}

// row composites row y of src into dst (c channels each) and returns the row's alpha sum.
func (k *compositor) row(y int, src, dst []float32, c int, s *scratch) float64 {
	w := len(s.alpha)
	k.a.matte.alphaRow(y, src, c, s.alpha, s.coef)
	any := false
	for _, v := range s.alpha {
		if v > 0 {
			any = true
			break
		}
	}
	g0, g1, g2 := k.gain[0], k.gain[1], k.gain[2]
	if !any {
		for x := 0; x < w; x++ {
			i := x * c
			dst[i], dst[i+1], dst[i+2] = src[i]*g0, src[i+1]*g1, src[i+2]*g2
			if c == 4 {
				dst[i+3] = src[i+3]
			}
		}
		return 0
	}
	sampleRow(k.newSky, k.ny0[y], k.ny1[y], k.nfy[y], k.nx0, k.nx1, k.nfx, s.sNew)
	sampleRow(k.oldSky, k.oy0[y], k.oy1[y], k.ofy[y], k.ox0, k.ox1, k.ofx, s.sOld)
	sum := 0.0
	for x := 0; x < w; x++ {
		i, o := x*c, x*3
		al := s.alpha[x]
		sum += float64(al)
		if c == 4 {
			dst[i+3] = src[i+3]
		}
		if al == 0 {
			dst[i], dst[i+1], dst[i+2] = src[i]*g0, src[i+1]*g1, src[i+2]*g2
			continue
		}
		inv := 1 - al
		for ch := 0; ch < 3; ch++ {
			v := src[i+ch]
			// The foreground's share, bounded by what a foreground can contribute.
			fg := v - al*s.sOld[o+ch]
			fg = max(0, min(fg, inv*max(v, 1)))
			dst[i+ch] = fg*k.gain[ch] + al*s.sNew[o+ch]
		}
	}
	return sum
}
