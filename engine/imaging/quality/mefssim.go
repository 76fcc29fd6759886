package quality

import (
	"errors"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// MEFOptions configures MEFSSIM. The zero value gives the reference settings on images
// shrunk to DefaultMEFMaxSide.
type MEFOptions struct {
	// MaxSide area-averages the luma of every image so the longer side is at most this
	// many pixels before scoring. 0 means DefaultMEFMaxSide; negative means full size.
	// The published scores were computed on images of about this size; at 20 MP the
	// finest scale measures sensor noise and JPEG blocks more than fusion quality.
	MaxSide int
}

// DefaultMEFMaxSide is the working size of MEFSSIM when MEFOptions.MaxSide is 0.
const DefaultMEFMaxSide = 1024

// MEFResult is an MEF-SSIM score and its per-scale parts (finest first).
type MEFResult struct {
	Score  float64
	Scales []float64
}

// Reference constants of the MEF-SSIM model.
const (
	mefK      = 0.03
	mefWindow = 11
	mefSigma  = 1.5
	mefScales = 3
	matlabEps = 2.220446049250313e-16
)

// mefScaleWeights are the published per-scale exponents, normalized to sum to 1.
var mefScaleWeights = func() []float64 {
	w := []float64{0.0448, 0.2856, 0.3001}
	s := w[0] + w[1] + w[2]
	for i := range w {
		w[i] /= s
	}
	return w
}()

// MEFSSIM scores fused against its source exposures with the multi-exposure fusion
// structural similarity index of Ma, Zeng and Wang (IEEE TIP 2015): for every 11×11
// patch it builds the desired patch (the strongest source contrast, with a structure
// that is a consistency-weighted mix of the source structures) and compares the fused
// patch with it by SSIM's contrast-structure term, at three scales.
//
// It follows the authors' reference code: 11×11 uniform window for the patch
// statistics, Gaussian window (σ 1.5) for the comparison, C = (0.03·255)², 'valid'
// borders, 2×2 mean between scales, scale weights 0.0448/0.2856/0.3001. Luma is the
// Rec. 601 luma of the sRGB-encoded images (0..255); sizes are reduced first as
// MEFOptions.MaxSide says.
func MEFSSIM(seq []*imaging.Image, fused *imaging.Image, opt MEFOptions) (MEFResult, error) {
	if len(seq) < 2 {
		return MEFResult{}, fmt.Errorf("mef-ssim: need at least 2 source images, got %d", len(seq))
	}
	if fused == nil {
		return MEFResult{}, errors.New("mef-ssim: fused image is nil")
	}
	maxSide := opt.MaxSide
	if maxSide == 0 {
		maxSide = DefaultMEFMaxSide
	}
	f, err := luma(fused)
	if err != nil {
		return MEFResult{}, fmt.Errorf("mef-ssim: fused image: %w", err)
	}
	xs := make([]*plane, len(seq))
	for i, m := range seq {
		if m == nil {
			return MEFResult{}, fmt.Errorf("mef-ssim: source %d is nil", i)
		}
		if !imaging.SameSize(m, fused) {
			return MEFResult{}, fmt.Errorf("mef-ssim: source %d is %dx%d, fused is %dx%d", i, m.W(), m.H(), fused.W(), fused.H())
		}
		if xs[i], err = luma(m); err != nil {
			return MEFResult{}, fmt.Errorf("mef-ssim: source %d: %w", i, err)
		}
		xs[i] = shrinkTo(xs[i], maxSide)
	}
	f = shrinkTo(f, maxSide)
	return mefSSIMPlanes(xs, f)
}

func mefSSIMPlanes(xs []*plane, f *plane) (MEFResult, error) {
	if min(f.w, f.h)>>(mefScales-1) < mefWindow {
		return MEFResult{}, fmt.Errorf("mef-ssim: %dx%d is too small for %d scales of %d-pixel windows", f.w, f.h, mefScales, mefWindow)
	}
	res := MEFResult{Score: 1, Scales: make([]float64, mefScales)}
	for l := 0; l < mefScales; l++ {
		q := mefSSIMScale(xs, f)
		res.Scales[l] = q
		res.Score *= math.Pow(math.Max(q, 0), mefScaleWeights[l])
		if l < mefScales-1 {
			for i := range xs {
				xs[i] = halve(xs[i])
			}
			f = halve(f)
		}
	}
	return res, nil
}

// mefSSIMScale is the single-scale index: the mean of the quality map.
func mefSSIMScale(xs []*plane, f *plane) float64 {
	k := len(xs)
	const n = mefWindow * mefWindow
	box := boxWindow(mefWindow)
	gauss := gaussianWindow(mefWindow, mefSigma)

	// Uniform-window means and covariances of every pair of sources.
	mu := make([]*plane, k)
	for i := range xs {
		mu[i] = filterValid(xs[i], box)
	}
	ow, oh := mu[0].w, mu[0].h
	cov := make([][]*plane, k) // cov[i][j] for j >= i
	for i := range xs {
		cov[i] = make([]*plane, k)
		for j := i; j < k; j++ {
			c := filterValid(product(xs[i], xs[j]), box)
			for p := range c.pix {
				c.pix[p] -= mu[i].pix[p] * mu[j].pix[p]
			}
			cov[i][j] = c
		}
	}

	// Per pixel: the coefficients beta[i] such that the desired patch is
	// sum_i beta[i]·(x_i - mu_i).
	beta := make([]*plane, k)
	for i := range beta {
		beta[i] = newPlane(ow, oh)
	}
	imaging.Bands(oh, func(_, y0, y1 int) {
		ed := make([]float64, k)
		a := make([]float64, k)
		for p := y0 * ow; p < y1*ow; p++ {
			var num, den, maxEd float64
			for i := 0; i < k; i++ {
				v := math.Max(n*cov[i][i].pix[p], 0)
				den += math.Sqrt(v)
				ed[i] = math.Sqrt(v) + 0.001
				maxEd = math.Max(maxEd, ed[i])
				for j := i; j < k; j++ {
					c := cov[i][j].pix[p]
					if j != i {
						c *= 2
					}
					num += c
				}
			}
			num = math.Sqrt(math.Max(n*num, 0))
			r := (num + matlabEps) / (den + matlabEps)
			if r > 1 {
				r = 1 - matlabEps
			}
			if r < 0 {
				r = matlabEps
			}
			pw := math.Min(math.Tan(math.Pi/2*r), 10)
			var wsum float64
			for i := 0; i < k; i++ {
				a[i] = math.Pow(ed[i]/mefWindow, pw) + matlabEps
				wsum += a[i]
			}
			for i := 0; i < k; i++ {
				a[i] /= wsum * ed[i]
			}
			var norm2 float64
			for i := 0; i < k; i++ {
				for j := i; j < k; j++ {
					c := a[i] * a[j] * cov[i][j].pix[p]
					if j != i {
						c *= 2
					}
					norm2 += c
				}
			}
			scale := 0.0
			if norm2 > 0 {
				scale = maxEd / math.Sqrt(n*norm2)
			}
			for i := 0; i < k; i++ {
				beta[i].pix[p] = a[i] * scale
			}
		}
	})
	cov, mu = nil, nil

	// Gaussian-window statistics of the desired and fused patches.
	gm := make([]*plane, k)
	for i := range xs {
		gm[i] = filterValid(xs[i], gauss)
	}
	gf := filterValid(f, gauss)
	varF := filterValid(product(f, f), gauss)
	sig12 := newPlane(ow, oh)
	sig1 := newPlane(ow, oh)
	for i := 0; i < k; i++ {
		c := filterValid(product(xs[i], f), gauss)
		b := beta[i].pix
		for p := range c.pix {
			sig12.pix[p] += b[p] * (c.pix[p] - gm[i].pix[p]*gf.pix[p])
		}
		for j := i; j < k; j++ {
			c := filterValid(product(xs[i], xs[j]), gauss)
			bj := beta[j].pix
			m := 1.0
			if j != i {
				m = 2
			}
			for p := range c.pix {
				sig1.pix[p] += m * b[p] * bj[p] * (c.pix[p] - gm[i].pix[p]*gm[j].pix[p])
			}
		}
	}
	const cc = (mefK * 255) * (mefK * 255)
	var sum float64
	for p := range varF.pix {
		s2 := varF.pix[p] - gf.pix[p]*gf.pix[p]
		sum += (2*sig12.pix[p] + cc) / (sig1.pix[p] + s2 + cc)
	}
	return sum / float64(len(varF.pix))
}
