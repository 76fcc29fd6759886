package inpaint

import (
	"context"
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// holeBox is the bounding box of the hole grown by pad pixels, clipped to the level.
func (l *level) holeBox(pad int) image.Rectangle {
	box := image.Rectangle{}
	for y, hs := range l.holeSpans {
		if hs[0] < hs[1] {
			box = box.Union(image.Rect(int(hs[0]), y, int(hs[1]), y+1))
		}
	}
	if box.Empty() {
		return box
	}
	return box.Inset(-pad).Intersect(image.Rect(0, 0, l.w, l.h))
}

// gaussKernel returns a normalised Gaussian of standard deviation sigma, radius ceil(3σ).
func gaussKernel(sigma float64) []float32 {
	r := int(math.Ceil(3 * sigma))
	k := make([]float32, 2*r+1)
	s := 0.0
	for i := range k {
		d := float64(i - r)
		v := math.Exp(-d * d / (2 * sigma * sigma))
		k[i] = float32(v)
		s += v
	}
	for i := range k {
		k[i] = float32(float64(k[i]) / s)
	}
	return k
}

// blurBox returns the Gaussian blur of l.lin over box (nc per pixel, box-local rows),
// edges clamped to the box, at the hole's pixels only (elsewhere the values are
// meaningless): the vertical pass runs over the hole, the horizontal one over the
// columns that the hole's rows within the kernel's reach span.
// It stops within a few rows once ctx is done; the caller must then drop the result.
func (l *level) blurBox(ctx context.Context, box image.Rectangle, sigma float64) []float32 {
	k := gaussKernel(sigma)
	r := len(k) / 2
	bw, bh, nc, w := box.Dx(), box.Dy(), l.nc, l.w
	// Box-local hole span of each row, and the columns each row's horizontal pass must
	// cover: the union of the spans of the rows within r.
	span := func(by int) (int, int) {
		hs := l.holeSpans[by+box.Min.Y]
		return max(0, int(hs[0])-box.Min.X), min(bw, int(hs[1])-box.Min.X)
	}
	need := make([][2]int, bh)
	for by := range need {
		lo, hi := bw, 0
		for yy := max(0, by-r); yy <= min(bh-1, by+r); yy++ {
			if a, b := span(yy); a < b {
				lo, hi = min(lo, a), max(hi, b)
			}
		}
		need[by] = [2]int{lo, hi}
	}
	tmp := make([]float32, bw*bh*nc)
	out := make([]float32, bw*bh*nc)
	// Each output sums its taps in kernel order, whichever loop runs them, so the
	// unclamped fast paths give the same values as the clamped ones.
	imaging.Bands(bh, func(_, y0, y1 int) {
		for by := y0; by < y1; by++ {
			if imaging.Canceled(ctx) {
				return
			}
			row := l.lin[((by+box.Min.Y)*w+box.Min.X)*nc : ((by+box.Min.Y)*w+box.Max.X)*nc]
			trow := tmp[by*bw*nc : (by+1)*bw*nc]
			for bx := need[by][0]; bx < need[by][1]; bx++ {
				if bx < r || bx+r >= bw || nc != 3 {
					for c := 0; c < nc; c++ {
						var s float32
						for i, kv := range k {
							xx := min(bw-1, max(0, bx+i-r))
							s += kv * row[xx*nc+c]
						}
						trow[bx*nc+c] = s
					}
					continue
				}
				src := row[(bx-r)*3 : (bx+r+1)*3]
				var s0, s1, s2 float32
				for i, kv := range k {
					p := src[3*i : 3*i+3]
					s0 += kv * p[0]
					s1 += kv * p[1]
					s2 += kv * p[2]
				}
				trow[3*bx], trow[3*bx+1], trow[3*bx+2] = s0, s1, s2
			}
		}
	})
	imaging.Bands(bh, func(_, y0, y1 int) {
		for by := y0; by < y1; by++ {
			if imaging.Canceled(ctx) {
				return
			}
			a, b := span(by)
			if a >= b {
				continue
			}
			// Row by row over the span (hole pixels and the few known ones between):
			// tap i of every output comes from row by+i-r, clamped to the box.
			orow := out[(by*bw+a)*nc : (by*bw+b)*nc]
			for i, kv := range k {
				yy := min(bh-1, max(0, by+i-r))
				trow := tmp[(yy*bw+a)*nc : (yy*bw+b)*nc]
				trow = trow[:len(orow)]
				for j, v := range trow {
					orow[j] += kv * v
				}
			}
		}
	})
	return out
}

// Detail: the fill is split into its low frequencies (a Gaussian blur of σ =
// detailSigma px) and the detail above them. The full-resolution fill is copied from
// the photo by the most coherent patch, so its detail is the photo's own and is kept
// whole (detailNear, detailDeep): attenuating it is what made earlier fills read as
// a smear, keeping well under half of the gradient of what the hole hid.
//
// Right at the border the low frequencies are pulled towards the harmonic
// interpolation of the photo around the hole (weight borderMix·e^(-(d-1)/borderReach)
// at d px deep): the smooth continuation of the photo is the best guess of what lies a
// pixel or two inside, where a patch from elsewhere can still be a shade or an edge
// off, and the texture carries on over it.
const (
	detailSigma = 2.5
	detailNear  = 1
	detailDeep  = 1
	detailDepth = 8
	borderMix   = 0.7
	borderReach = 2
)

// refineDetail applies the detail attenuation and the border continuation above to
// the hole of the full-resolution level; channels nc..2·nc of sol hold the photo's
// harmonic interpolation over mbox, the hole's box and its border. Once ctx is done
// it stops within a few rows and returns ctx.Err(); the level is then unusable.
func (l *level) refineDetail(ctx context.Context, mbox image.Rectangle, sol []float32) error {
	box := l.holeBox(int(math.Ceil(3*detailSigma)) + 1)
	lf := l.blurBox(ctx, box, detailSigma)
	if err := ctx.Err(); err != nil {
		return err
	}
	bw, nc, w := box.Dx(), l.nc, l.w
	mw := mbox.Dx()
	var mixTable [3*detailDepth + 1]float32
	for i := range mixTable {
		mixTable[i] = float32(borderMix * math.Exp(-(float64(i)/3-1)/borderReach))
	}
	return imaging.BandsCtx(ctx, box.Dy(), func(_, y0, y1 int) {
		for by := y0; by < y1; by++ {
			for bx := 0; bx < bw; bx++ {
				q := (by+box.Min.Y)*w + bx + box.Min.X
				if !l.hole[q] {
					continue
				}
				d := int(l.depth[q])
				t := min(1, float32(d)/(3*detailDepth))
				k := detailNear*(1-t) + detailDeep*t
				a := float32(0)
				if d < len(mixTable) {
					a = min(1, mixTable[d])
				}
				b := by*bw + bx
				m := (by+box.Min.Y-mbox.Min.Y)*mw + bx + box.Min.X - mbox.Min.X
				for c := 0; c < nc; c++ {
					lo := lf[b*nc+c]
					hi := l.lin[q*nc+c] - lo
					lo += a * (sol[(2*m+1)*nc+c] - lo)
					// Light is never negative.
					l.lin[q*nc+c] = max(0, lo+k*hi)
				}
			}
		}
	})
}
