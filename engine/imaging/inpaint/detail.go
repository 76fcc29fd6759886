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
// edges clamped to the box.
// It stops within a few rows once ctx is done; the caller must then drop the result.
func (l *level) blurBox(ctx context.Context, box image.Rectangle, sigma float64) []float32 {
	k := gaussKernel(sigma)
	r := len(k) / 2
	bw, bh, nc, w := box.Dx(), box.Dy(), l.nc, l.w
	tmp := make([]float32, bw*bh*nc)
	out := make([]float32, bw*bh*nc)
	imaging.Bands(bh, func(_, y0, y1 int) {
		for by := y0; by < y1; by++ {
			if imaging.Canceled(ctx) {
				return
			}
			row := l.lin[((by+box.Min.Y)*w+box.Min.X)*nc:]
			for bx := 0; bx < bw; bx++ {
				for c := 0; c < nc; c++ {
					var s float32
					for i, kv := range k {
						xx := min(bw-1, max(0, bx+i-r))
						s += kv * row[xx*nc+c]
					}
					tmp[(by*bw+bx)*nc+c] = s
				}
			}
		}
	})
	imaging.Bands(bh, func(_, y0, y1 int) {
		for by := y0; by < y1; by++ {
			if imaging.Canceled(ctx) {
				return
			}
			for bx := 0; bx < bw; bx++ {
				for c := 0; c < nc; c++ {
					var s float32
					for i, kv := range k {
						yy := min(bh-1, max(0, by+i-r))
						s += kv * tmp[(yy*bw+bx)*nc+c]
					}
					out[(by*bw+bx)*nc+c] = s
				}
			}
		}
	})
	return out
}

// membraneBox is the harmonic interpolation over box of the photo's pixels bordering
// the hole (box-local, nc per pixel; meaningful on hole pixels).
func (l *level) membraneBox(ctx context.Context, box image.Rectangle) []float32 {
	bw, bh, nc, w := box.Dx(), box.Dy(), l.nc, l.w
	unk := make([]bool, bw*bh)
	fix := make([]bool, bw*bh)
	val := make([]float32, bw*bh*nc)
	for by := 0; by < bh; by++ {
		for bx := 0; bx < bw; bx++ {
			x, y := bx+box.Min.X, by+box.Min.Y
			q, b := y*w+x, by*bw+bx
			if l.hole[q] {
				unk[b] = true
			} else if l.touchesHole(x, y) {
				fix[b] = true
				copy(val[b*nc:b*nc+nc], l.lin[q*nc:q*nc+nc])
			}
		}
	}
	return membrane(ctx, unk, fix, val, bw, bh, nc)
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
// the hole of the full-resolution level. Once ctx is done it stops within a few rows
// and returns ctx.Err(); the level is then unusable.
func (l *level) refineDetail(ctx context.Context) error {
	box := l.holeBox(int(math.Ceil(3*detailSigma)) + 1)
	if box.Empty() {
		return nil
	}
	lf := l.blurBox(ctx, box, detailSigma)
	mem := l.membraneBox(ctx, box)
	if err := ctx.Err(); err != nil {
		return err
	}
	bw, nc, w := box.Dx(), l.nc, l.w
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
				for c := 0; c < nc; c++ {
					lo := lf[b*nc+c]
					hi := l.lin[q*nc+c] - lo
					lo += a * (mem[b*nc+c] - lo)
					// Light is never negative.
					l.lin[q*nc+c] = max(0, lo+k*hi)
				}
			}
		}
	})
}
