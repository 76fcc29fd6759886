package inpaint

import (
	"context"
	"errors"
	"fmt"
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Options tunes Erase.
type Options struct {
	// Seed drives the random search; the same image, mask and seed give the same pixels.
	Seed int64
	// Progress, when set, is called on Erase's goroutine with the share of the work
	// done (0..1) as the region is built and as each pyramid level is filled.
	Progress func(done float64)
	// InPlace writes the fill into img and returns img, sparing a copy of the whole
	// photo (a twelfth of a second per 12 MP, and its memory). img is changed only once
	// the fill has succeeded; an error leaves it as it was.
	InPlace bool
}

// progress reports done through o.Progress when it is set.
func (o *Options) progress(done float64) {
	if o.Progress != nil {
		o.Progress(done)
	}
}

// MaxHoleFraction is the largest share of the image a mask may mark.
const MaxHoleFraction = 0.9

// Errors returned by Erase, wrapped with detail; test them with errors.Is.
var (
	ErrBadImage     = errors.New("inpaint: unusable image")
	ErrBadMask      = errors.New("inpaint: unusable mask")
	ErrMaskAspect   = errors.New("inpaint: mask aspect ratio differs from the image's")
	ErrEmptyMask    = errors.New("inpaint: mask marks no pixel")
	ErrMaskTooLarge = errors.New("inpaint: mask leaves too little of the photo to fill from")
)

// patchR is the patch radius: 7×7 patches, as in Wexler et al. and Newson et al.
// (Larger patches at coarse levels were tried: they continue structure no better and
// leave more visible seams.)
const patchR = 3

// Erase returns a copy of img with the pixels that mask marks (values above 0.5)
// replaced by texture synthesised from the rest of the photo. img is linear light
// with 1, 3 or 4 channels; mask has one channel and the image's size or aspect ratio
// (see the package comment for the rules). img and mask are not modified, unless
// opt.InPlace asks for the fill to be written into img. Once ctx
// is done Erase stops within a PatchMatch band or a few rows of the pass it is in
// and returns ctx.Err().
func Erase(ctx context.Context, img *imaging.Image, mask *imaging.Image, opt Options) (*imaging.Image, error) {
	if err := checkImage(img); err != nil {
		return nil, err
	}
	hole, err := holeMask(mask, img.W(), img.H())
	if err != nil {
		return nil, err
	}
	w, h := img.W(), img.H()
	n, bb := maskBounds(hole, w, h)
	if n == 0 {
		return nil, ErrEmptyMask
	}
	if float64(n) > MaxHoleFraction*float64(w*h) {
		return nil, fmt.Errorf("%w: it marks %.1f%% of the image, at most %.0f%% may be erased",
			ErrMaskTooLarge, 100*float64(n)/float64(w*h), 100*MaxHoleFraction)
	}

	grow := growPixels(w, h)
	r, err := newRegion(ctx, img, hole, WorkArea(w, h, bb), grow)
	if err != nil {
		return nil, err
	}
	opt.progress(0.1)
	if err := r.solve(ctx, opt.Seed, opt.progress); err != nil {
		return nil, err
	}
	if err := r.extrapolate(ctx, img, grow); err != nil {
		return nil, err
	}
	if carryLines {
		if _, err := r.levels[0].continueLines(ctx, lineHalfWidth(w, h)); err != nil {
			return nil, err
		}
	}
	out := img
	if !opt.InPlace {
		out = clone(img)
	}
	r.composite(out)
	return out, nil
}

// WorkArea is the part of a w×h image that Erase works on for a mask whose marked
// pixels lie within bounds: the hole's box and a margin of 40% of its longer side
// (at least 64 px) to copy from. Erase's memory grows with its area (see the
// package comment), which is how admission bounds it before the order runs.
func WorkArea(w, h int, bounds image.Rectangle) image.Rectangle {
	// Sources come from a margin around the hole: what lies near it is what it most
	// likely hides, and the locality penalty rarely reaches further anyway.
	side := max(bounds.Dx(), bounds.Dy())
	margin := growPixels(w, h) + max(64, side*2/5)
	return bounds.Inset(-margin).Intersect(image.Rect(0, 0, w, h))
}

// maskBounds counts the set pixels of a w×h mask and bounds them, rows in parallel.
func maskBounds(set []bool, w, h int) (int, image.Rectangle) {
	type rowInfo struct{ n, x0, x1 int }
	rows := make([]rowInfo, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			ri := rowInfo{x0: w}
			for x, v := range set[y*w : (y+1)*w] {
				if v {
					ri.n++
					ri.x0 = min(ri.x0, x)
					ri.x1 = x + 1
				}
			}
			rows[y] = ri
		}
	})
	n, bb := 0, image.Rectangle{}
	for y, ri := range rows {
		if ri.n > 0 {
			n += ri.n
			bb = bb.Union(image.Rect(ri.x0, y, ri.x1, y+1))
		}
	}
	return n, bb
}

// Marked reports whether a mask value marks its pixel to erase: above one half
// (never NaN).
func Marked(v float32) bool { return v > 0.5 }

// growPixels is how far the hole is grown before filling: a pixel, more on larger
// photos where soft edges and halos are wider (3 at 12 MP).
func growPixels(w, h int) int { return 1 + max(w, h)/1500 }

// clone copies img with its rows in parallel (a 12 MP copy is worth splitting).
func clone(img *imaging.Image) *imaging.Image {
	out := imaging.New(img.W(), img.H(), img.C)
	out.Rect = img.Rect
	imaging.Bands(img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			copy(out.Row(y), img.Row(y))
		}
	})
	return out
}

func checkImage(img *imaging.Image) error {
	switch {
	case img == nil:
		return fmt.Errorf("%w: nil", ErrBadImage)
	case img.C != 1 && img.C != 3 && img.C != 4:
		return fmt.Errorf("%w: %d channels, want 1, 3 or 4", ErrBadImage, img.C)
	case img.W() < 2*patchR+2 || img.H() < 2*patchR+2:
		return fmt.Errorf("%w: %dx%d is too small to inpaint", ErrBadImage, img.W(), img.H())
	case img.Stride < img.W()*img.C || len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C:
		return fmt.Errorf("%w: pixel buffer does not match its size", ErrBadImage)
	}
	return nil
}

// holeMask returns the hole as one bool per image pixel, applying the mask rules.
func holeMask(mask *imaging.Image, w, h int) ([]bool, error) {
	switch {
	case mask == nil:
		return nil, fmt.Errorf("%w: nil", ErrBadMask)
	case mask.C != 1:
		return nil, fmt.Errorf("%w: %d channels, want 1", ErrBadMask, mask.C)
	case mask.W() <= 0 || mask.H() <= 0:
		return nil, fmt.Errorf("%w: empty %dx%d", ErrBadMask, mask.W(), mask.H())
	case mask.Stride < mask.W() || len(mask.Pix) < (mask.H()-1)*mask.Stride+mask.W():
		return nil, fmt.Errorf("%w: pixel buffer does not match its size", ErrBadMask)
	}
	mw, mh := mask.W(), mask.H()
	if mw != w || mh != h {
		ia, ma := float64(w)/float64(h), float64(mw)/float64(mh)
		if math.Abs(ma-ia) > 0.01*ia {
			return nil, fmt.Errorf("%w: mask %dx%d, image %dx%d", ErrMaskAspect, mw, mh, w, h)
		}
	}
	// Nearest neighbour: output pixel x samples mask column floor((x+0.5)·mw/w).
	cols := make([]int, w)
	for x := range cols {
		cols[x] = min(mw-1, int((float64(x)+0.5)*float64(mw)/float64(w)))
	}
	hole := make([]bool, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			my := min(mh-1, int((float64(y)+0.5)*float64(mh)/float64(h)))
			src := mask.Row(my)
			dst := hole[y*w : (y+1)*w]
			for x, mx := range cols {
				dst[x] = Marked(src[mx])
			}
		}
	})
	return hole, nil
}
