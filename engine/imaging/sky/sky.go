package sky

import (
	"context"
	"errors"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging"
)

// segEdge is the long edge of the working copy the sky is segmented on.
const segEdge = 512

// minEdge is the smallest image side accepted: below it there is no sky to speak of.
const minEdge = 16

// ErrInvalid marks bad input: no image, too few channels, too small, or an unknown
// style. Errors returned by this package wrap it.
var ErrInvalid = errors.New("invalid sky input")

// Result describes what the segmentation found.
type Result struct {
	Found    bool    // a sky to replace was found
	Fraction float64 // share of the frame covered by sky (mean matte value)
	Reason   string  // why no sky was found; empty when Found
}

// analysis is the shared front half of Segment and Replace.
type analysis struct {
	img    *imaging.Image
	guide  *imaging.Image // linear RGB, long edge at most matteEdge
	label  *labelling     // hard labelling at segEdge
	mask   []float32      // labelling resampled to the guide, 0..1
	matte  *matteModel
	result Result
	// The original sky's colour around each guide pixel, and its mean.
	oldSky  *imaging.Image
	oldMean [3]float32
	// legacy skips the trimap refinement and the foreground estimate: the matte and
	// composite of sky@4.0.0, kept so tests can measure the edges against it.
	legacy bool
	// The local sky and ground colours of the refinement at the guide resolution
	// (nil when legacy): the compositor's old sky and foreground prior.
	skyLocal, fgLocal *imaging.Image
	// Guide pixels next to the refined matte's edge whose colour the compositor
	// cleans of sky spill even where alpha is 0 (nil when legacy).
	near []bool
}

func validate(img *imaging.Image) error {
	switch {
	case img == nil:
		return fmt.Errorf("sky: no image: %w", ErrInvalid)
	case img.C != 3 && img.C != 4:
		return fmt.Errorf("sky: need an RGB or RGBA image, got %d channel(s): %w", img.C, ErrInvalid)
	case img.W() < minEdge || img.H() < minEdge:
		return fmt.Errorf("sky: image %dx%d is smaller than %dx%d: %w", img.W(), img.H(), minEdge, minEdge, ErrInvalid)
	case len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C:
		return fmt.Errorf("sky: pixel buffer shorter than %dx%dx%d: %w", img.W(), img.H(), img.C, ErrInvalid)
	}
	return nil
}

// analyse finds the sky and builds its matte, checking ctx between its passes.
func analyse(ctx context.Context, img *imaging.Image, legacy bool) (*analysis, error) {
	if err := validate(img); err != nil {
		return nil, err
	}
	a := &analysis{img: img, legacy: legacy}
	var err error
	if a.guide, err = shrink(ctx, img, matteEdge); err != nil {
		return nil, err
	}
	sw, sh := imaging.FitWithin(a.guide.W(), a.guide.H(), segEdge)
	work := a.guide
	if sw != a.guide.W() || sh != a.guide.H() {
		work = imaging.Resize(a.guide, sw, sh)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.label = segmentWork(work, !legacy)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a.label.reason != "" {
		a.result = Result{Reason: a.label.reason}
		return a, nil
	}
	a.mask = upsampleMask(a.label, a.guide.W(), a.guide.H())
	carveThinLines(a.mask, a.guide)
	a.oldSky, a.oldMean = a.oldSkyColour()
	keySkyHoles(a.mask, a.guide, a.oldSky)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if a.legacy {
		a.matte = buildMatte(img.W(), img.H(), a.guide, a.mask, guideRadius, guideEps, alphaLo, alphaHi)
	} else {
		if err := a.refine(ctx); err != nil {
			return nil, err
		}
		a.matte = buildMatte(img.W(), img.H(), a.guide, a.mask, refinedRadius(a.guide.W(), a.guide.H()), refineEps, refineLo, refineHi)
	}
	a.result = Result{Found: true}
	return a, nil
}

// Segment finds the sky of a linear RGB(A) image. It returns a one-channel matte of the
// image's size (1 = sky, soft at the skyline) and what it found. When there is no sky
// the matte is all zero and Result.Reason says why. Once ctx is done it returns
// ctx.Err() within a row of the pass it is in.
func Segment(ctx context.Context, img *imaging.Image) (*imaging.Image, Result, error) {
	return segment(ctx, img, false)
}

func segment(ctx context.Context, img *imaging.Image, legacy bool) (*imaging.Image, Result, error) {
	a, err := analyse(ctx, img, legacy)
	if err != nil {
		return nil, Result{}, err
	}
	w, h := img.W(), img.H()
	matte := imaging.New(w, h, 1)
	if !a.result.Found {
		return matte, a.result, nil
	}
	sums := make([]float64, imaging.Workers())
	imaging.Bands(h, func(worker, y0, y1 int) {
		s := 0.0
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			dst := matte.Row(y)
			a.matte.alphaRow(y, img.Row(y), img.C, dst)
			for _, v := range dst {
				s += float64(v)
			}
		}
		sums[worker] = s
	})
	if err := ctx.Err(); err != nil {
		return nil, Result{}, err
	}
	total := 0.0
	for _, s := range sums {
		total += s
	}
	a.result.Fraction = total / float64(w*h)
	return matte, a.result, nil
}

// shrink returns a linear RGB copy of img whose long edge is at most edge, with every
// sample clamped to 0..1 (NaN and negative values to 0): the analysis works on display
// values and a stray NaN must not spread through the filters. Large reductions first
// average whole blocks, which is exact and cheap, then finish with Lanczos. It
// returns ctx.Err() once ctx is done.
func shrink(ctx context.Context, img *imaging.Image, edge int) (*imaging.Image, error) {
	w, h := img.W(), img.H()
	tw, th := imaging.FitWithin(w, h, edge)
	src, err := blockMean(ctx, img, max(1, min(w/tw, h/th)))
	if err != nil {
		return nil, err
	}
	if src.W() == tw && src.H() == th {
		return src, nil
	}
	return imaging.Resize(src, tw, th), nil
}

// blockMean averages k x k blocks of the first three channels, clamping each sample
// (partial blocks at the right and bottom edges are dropped: at most k-1 pixels).
// Once ctx is done it stops within a few rows and returns ctx.Err().
func blockMean(ctx context.Context, src *imaging.Image, k int) (*imaging.Image, error) {
	w, h, c := src.W()/k, src.H()/k, src.C
	out := imaging.New(w, h, 3)
	inv := 1 / float32(k*k)
	err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			d := out.Row(y)
			for yy := y * k; yy < y*k+k; yy++ {
				s := src.Row(yy)
				for x := 0; x < w; x++ {
					b := x * k * c
					var r, g, bl float32
					for i := 0; i < k; i++ {
						r += imaging.Clamp01(s[b+i*c])
						g += imaging.Clamp01(s[b+i*c+1])
						bl += imaging.Clamp01(s[b+i*c+2])
					}
					d[x*3] += r
					d[x*3+1] += g
					d[x*3+2] += bl
				}
			}
			for i := range d {
				d[i] *= inv
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// upsampleMask resamples the hard labelling to w x h with bilinear weights.
func upsampleMask(l *labelling, w, h int) []float32 {
	out := make([]float32, w*h)
	x0, x1, fx := bilinearTaps(w, l.w)
	y0, y1, fy := bilinearTaps(h, l.h)
	val := func(p int) float32 {
		if l.sky[p] {
			return 1
		}
		return 0
	}
	imaging.Bands(h, func(_, ya, yb int) {
		for y := ya; y < yb; y++ {
			r0, r1 := int(y0[y])*l.w, int(y1[y])*l.w
			for x := 0; x < w; x++ {
				a, b := int(x0[x]), int(x1[x])
				top := val(r0+a) + fx[x]*(val(r0+b)-val(r0+a))
				bot := val(r1+a) + fx[x]*(val(r1+b)-val(r1+a))
				out[y*w+x] = top + fy[y]*(bot-top)
			}
		}
	})
	return out
}
