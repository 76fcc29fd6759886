package inpaint

import (
	"context"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// confGamma is the spatial confidence of Wexler et al.: a patch one pixel deeper into
// the hole than another votes with 1/confGamma of its weight, so the photo's boundary
// conditions reach into the hole instead of being outvoted by its interior. Beyond
// confDepth pixels the depth no longer matters (all votes for a pixel come from
// patches within a few pixels of each other, and the factor must stay in float32).
const (
	confGamma = 1.3
	confDepth = 30
)

// confTable[d] is confGamma^(-d/3) for a chamfer depth d (3 per pixel).
var confTable = func() (t [3*confDepth + 1]float32) {
	for i := range t {
		t[i] = float32(math.Pow(confGamma, -float64(i)/3))
	}
	return
}()

// weigh measures the typical distance σ² (75th percentile) and sets the vote weight
// of every target within l.refine to exp(-d / 2σ²) (Wexler et al.) times its depth confidence: good
// matches dominate, poor ones still count a little so that no pixel is left without
// votes.
func (l *level) weigh(ctx context.Context) error {
	l.sigma2 = l.percentile75()
	inv := float32(0)
	if l.sigma2 > 0 {
		inv = 1 / (2 * l.sigma2)
	}
	w := l.w
	return imaging.BandsCtx(ctx, l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			sp := l.spans[y]
			for x := int(sp[0]); x < int(sp[1]); x++ {
				if t := y*w + x; l.nnf[t] >= 0 && l.depth[t] <= l.refine {
					match := max(1e-4, float32(math.Exp(float64(-l.dist[t]*inv))))
					l.wt[t] = match * confTable[min(l.depth[t], 3*confDepth)]
				}
			}
		}
	})
}

// percentile75 is the 75th percentile of the distances of the targets within
// l.refine, from a strided sample on big holes.
func (l *level) percentile75() float32 {
	step := max(1, l.nTgt/65536)
	sample := make([]float32, 0, l.nTgt/step+1)
	k := 0
	for y := 0; y < l.h; y++ {
		sp := l.spans[y]
		for x := int(sp[0]); x < int(sp[1]); x++ {
			if t := y*l.w + x; l.nnf[t] >= 0 && l.depth[t] <= l.refine {
				if k%step == 0 {
					sample = append(sample, l.dist[t])
				}
				k++
			}
		}
	}
	if len(sample) == 0 {
		return 0
	}
	slices.Sort(sample)
	return sample[len(sample)*3/4]
}

// vote replaces every hole pixel no deeper than maxDepth (chamfer units) by the
// weighted mean of the source pixels the patches covering it point to: colour, and
// texture too when the level has it. Each
// pixel gathers its own votes, so bands write disjoint pixels. Once ctx is done it
// stops within a few rows and returns ctx.Err().
func (l *level) vote(ctx context.Context, maxDepth int32) error {
	switch {
	case l.nc == 3 && !l.hasTex:
		return l.voteRGB(ctx, maxDepth)
	case l.nc == 3:
		return l.voteRGBTex(ctx, maxDepth)
	}
	w, h, nc := l.w, l.h, l.nc
	tex := l.hasTex
	return imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		var acc [6]float32
		for y := y0; y < y1; y++ {
			hs := l.holeSpans[y]
			for x := int(hs[0]); x < int(hs[1]); x++ {
				q := y*w + x
				if !l.hole[q] || l.depth[q] > maxDepth {
					continue
				}
				acc = [6]float32{}
				var wsum float32
				for dy := max(-l.pr, y-h+1); dy <= min(l.pr, y); dy++ {
					row := (y - dy) * w
					for dx := max(-l.pr, x-w+1); dx <= min(l.pr, x); dx++ {
						p := row + x - dx
						s := l.nnf[p]
						if s < 0 {
							continue
						}
						wt := l.wt[p]
						src := int(s) + dy*w + dx
						sv := l.lin[src*nc : src*nc+nc]
						for c, v := range sv {
							acc[c] += wt * v
						}
						if tex {
							acc[4] += wt * l.tex[2*src]
							acc[5] += wt * l.tex[2*src+1]
						}
						wsum += wt
					}
				}
				if !(wsum > 0) {
					continue // no vote: keep the previous estimate
				}
				inv := 1 / wsum
				dst := l.lin[q*nc : q*nc+nc]
				for c := range dst {
					dst[c] = acc[c] * inv
				}
				if tex {
					l.tex[2*q] = acc[4] * inv
					l.tex[2*q+1] = acc[5] * inv
				}
			}
		}
	})
}

// voteRGB is vote for the common case, RGB without texture (the full-resolution
// level), written out for speed.
func (l *level) voteRGB(ctx context.Context, maxDepth int32) error {
	w, h := l.w, l.h
	lin, nnf, wts := l.lin, l.nnf, l.wt
	return imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			hs := l.holeSpans[y]
			dy0, dy1 := max(-l.pr, y-h+1), min(l.pr, y)
			for x := int(hs[0]); x < int(hs[1]); x++ {
				q := y*w + x
				if !l.hole[q] || l.depth[q] > maxDepth {
					continue
				}
				var r, g, b, wsum float32
				dx0, dx1 := max(-l.pr, x-w+1), min(l.pr, x)
				for dy := dy0; dy <= dy1; dy++ {
					// Targets p = q - (dx, dy) for dx from dx1 down to dx0.
					base := q - dy*w
					ps := nnf[base-dx1 : base-dx0+1]
					pw := wts[base-dx1 : base-dx0+1]
					pw = pw[:len(ps)]
					for j, s := range ps {
						if s < 0 {
							continue
						}
						wt := pw[j]
						// This target sits at dx = dx1-j from q.
						src := 3 * (int(s) + dy*w + dx1 - j)
						px := lin[src : src+3]
						r += wt * px[0]
						g += wt * px[1]
						b += wt * px[2]
						wsum += wt
					}
				}
				if !(wsum > 0) {
					continue
				}
				inv := 1 / wsum
				lin[3*q], lin[3*q+1], lin[3*q+2] = r*inv, g*inv, b*inv
			}
		}
	})
}

// voteRGBTex is vote for RGB with texture (the coarse levels), written out for speed;
// it sums in the same order as vote, so it gives the same values.
func (l *level) voteRGBTex(ctx context.Context, maxDepth int32) error {
	w, h := l.w, l.h
	lin, tex, nnf, wts := l.lin, l.tex, l.nnf, l.wt
	return imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			hs := l.holeSpans[y]
			dy0, dy1 := max(-l.pr, y-h+1), min(l.pr, y)
			for x := int(hs[0]); x < int(hs[1]); x++ {
				q := y*w + x
				if !l.hole[q] || l.depth[q] > maxDepth {
					continue
				}
				var r, g, b, t0, t1, wsum float32
				dx0, dx1 := max(-l.pr, x-w+1), min(l.pr, x)
				for dy := dy0; dy <= dy1; dy++ {
					base := (y-dy)*w + x
					for dx := dx0; dx <= dx1; dx++ {
						s := nnf[base-dx]
						if s < 0 {
							continue
						}
						wt := wts[base-dx]
						src := int(s) + dy*w + dx
						px := lin[3*src : 3*src+3]
						r += wt * px[0]
						g += wt * px[1]
						b += wt * px[2]
						tp := tex[2*src : 2*src+2]
						t0 += wt * tp[0]
						t1 += wt * tp[1]
						wsum += wt
					}
				}
				if !(wsum > 0) {
					continue
				}
				inv := 1 / wsum
				lin[3*q], lin[3*q+1], lin[3*q+2] = r*inv, g*inv, b*inv
				tex[2*q], tex[2*q+1] = t0*inv, t1*inv
			}
		}
	})
}
