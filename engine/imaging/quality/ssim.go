package quality

import (
	"errors"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging"
)

// SSIMOptions configures SSIM.
type SSIMOptions struct {
	// MaxSide area-averages both images' luma so the longer side is at most this many
	// pixels first; 0 or negative scores at full size.
	MaxSide int
}

// SSIM is the mean structural similarity (Wang et al. 2004) of the luma of a and b:
// Gaussian window 11×11 σ 1.5, K1 0.01, K2 0.03, L 255, 'valid' borders. 1 means
// identical.
func SSIM(a, b *imaging.Image, opt SSIMOptions) (float64, error) {
	if a == nil || b == nil {
		return 0, errors.New("ssim: nil image")
	}
	if !imaging.SameSize(a, b) {
		return 0, fmt.Errorf("ssim: sizes differ: %dx%d and %dx%d", a.W(), a.H(), b.W(), b.H())
	}
	pa, err := luma(a)
	if err != nil {
		return 0, fmt.Errorf("ssim: first image: %w", err)
	}
	pb, err := luma(b)
	if err != nil {
		return 0, fmt.Errorf("ssim: second image: %w", err)
	}
	pa, pb = shrinkTo(pa, opt.MaxSide), shrinkTo(pb, opt.MaxSide)
	if pa.w < mefWindow || pa.h < mefWindow {
		return 0, fmt.Errorf("ssim: %dx%d is smaller than the %d-pixel window", pa.w, pa.h, mefWindow)
	}
	return ssimPlanes(pa, pb), nil
}

func ssimPlanes(a, b *plane) float64 {
	g := gaussianWindow(mefWindow, mefSigma)
	ma, mb := filterValid(a, g), filterValid(b, g)
	saa := filterValid(product(a, a), g)
	sbb := filterValid(product(b, b), g)
	sab := filterValid(product(a, b), g)
	const c1 = (0.01 * 255) * (0.01 * 255)
	const c2 = (0.03 * 255) * (0.03 * 255)
	var sum float64
	for p := range ma.pix {
		mx, my := ma.pix[p], mb.pix[p]
		vx := saa.pix[p] - mx*mx
		vy := sbb.pix[p] - my*my
		cxy := sab.pix[p] - mx*my
		sum += (2*mx*my + c1) * (2*cxy + c2) / ((mx*mx + my*my + c1) * (vx + vy + c2))
	}
	return sum / float64(len(ma.pix))
}
