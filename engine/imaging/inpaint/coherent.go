package inpaint

import (
	"context"

	"github.com/porchlight/porchlight/engine/imaging"
)

// copyCoherent completes the hole of the full-resolution level by the most coherent
// patch instead of the mean of all patches covering each pixel. Averaging the 49
// patches over a pixel is what smears a fill: where they disagree by a pixel or two
// their texture cancels out. Here every hole pixel considers the shifts (source minus
// target) of the patches centred on it and on its four neighbours, gives each the
// summed vote weight of the covering patches that use exactly that shift, and copies
// the source pixel of the heaviest one. Neighbouring pixels thus copy runs of the
// photo whole, with real texture, and switch between sources only where the field
// itself switches; the seams that leaves are what adaptColour then smooths away.
// Sources are entirely known, so the copy reads only photo pixels and can be done in
// place. Only the pixels no deeper than maxDepth (chamfer units) are copied. Once ctx
// is done it stops within a few rows and returns ctx.Err().
func (l *level) copyCoherent(ctx context.Context, maxDepth int32) error {
	w, h, nc, pr := l.w, l.h, l.nc, l.pr
	return imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		var cand [5]int
		for y := y0; y < y1; y++ {
			hs := l.holeSpans[y]
			dy0, dy1 := max(-pr, y-h+1), min(pr, y)
			for x := int(hs[0]); x < int(hs[1]); x++ {
				q := y*w + x
				if !l.hole[q] || l.depth[q] > maxDepth {
					continue
				}
				nCand := 0
				for _, p := range [5]int{q, q - 1, q + 1, q - w, q + w} {
					if p < 0 || p >= len(l.nnf) || l.nnf[p] < 0 {
						continue
					}
					off := int(l.nnf[p]) - p
					dup := false
					for _, c := range cand[:nCand] {
						dup = dup || c == off
					}
					if !dup {
						cand[nCand] = off
						nCand++
					}
				}
				if nCand == 0 {
					continue
				}
				best, bestW := cand[0], float32(-1)
				if nCand > 1 {
					var sums [5]float32
					dx0, dx1 := max(-pr, x-w+1), min(pr, x)
					for dy := dy0; dy <= dy1; dy++ {
						for dx := dx0; dx <= dx1; dx++ {
							p := q - dy*w - dx
							s := l.nnf[p]
							if s < 0 {
								continue
							}
							off := int(s) - p
							for k, c := range cand[:nCand] {
								if c == off {
									sums[k] += l.wt[p]
									break
								}
							}
						}
					}
					for k, c := range cand[:nCand] {
						if sums[k] > bestW {
							best, bestW = c, sums[k]
						}
					}
				}
				src := q + best
				if src < 0 || src >= w*h || l.hole[src] {
					continue // cannot happen for a valid source; keep the estimate
				}
				copy(l.lin[q*nc:q*nc+nc], l.lin[src*nc:src*nc+nc])
			}
		}
	})
}
