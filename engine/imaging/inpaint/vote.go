package inpaint

import (
	"os"
	"strconv"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// weigh sets every target's vote weight to exp(-d / 2σ²), σ² being the 75th
// percentile of the distances (Wexler et al.): good matches dominate, poor ones still
// count a little so that no pixel is left without votes.
func (l *level) weigh() {
	// The percentile from a strided sample keeps this cheap on big holes.
	step := max(1, l.nTgt/65536)
	sample := make([]float32, 0, l.nTgt/step+1)
	k := 0
	for y := 0; y < l.h; y++ {
		sp := l.spans[y]
		for x := int(sp[0]); x < int(sp[1]); x++ {
			if t := y*l.w + x; l.nnf[t] >= 0 {
				if k%step == 0 {
					sample = append(sample, l.dist[t])
				}
				k++
			}
		}
	}
	if len(sample) == 0 {
		return
	}
	slices.Sort(sample)
	s2 := sample[len(sample)*3/4] * xSigma
	inv := float32(0)
	if s2 > 0 {
		inv = 1 / (2 * s2)
	}
	w := l.w
	imaging.Bands(l.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			sp := l.spans[y]
			for x := int(sp[0]); x < int(sp[1]); x++ {
				if t := y*w + x; l.nnf[t] >= 0 {
					l.wt[t] = max(1e-4, float32(math.Exp(float64(-l.dist[t]*inv))))
				}
			}
		}
	})
}

// confGamma is Wexler et al.'s spatial confidence: a patch one pixel deeper into the
// hole than another votes with 1/confGamma of its weight, so the known photo's
// boundary conditions reach the hole instead of being outvoted by its interior.
const confGamma = 1.3

// confTable[d+confSpan] is confGamma^(d/3) for a chamfer depth difference d.
const confSpan = 64

var confTable = func() (t [2*confSpan + 1]float32) {
	for i := range t {
		t[i] = float32(math.Pow(confGamma, float64(i-confSpan)/3))
	}
	return
}()

var xSigma = func() float32 {
	if v := os.Getenv("X_SIGMA"); v != "" {
		f, _ := strconv.ParseFloat(v, 32)
		return float32(f)
	}
	return 1
}()

// vote replaces every hole pixel by the weighted mean of the source pixels the
// patches covering it point to: colour, and texture too when withTex is set. Each
// pixel gathers its own votes, so bands write disjoint pixels.
func (l *level) vote(withTex bool) {
	w, h, nc := l.w, l.h, l.nc
	imaging.Bands(h, func(_, y0, y1 int) {
		var acc [6]float32
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				q := y*w + x
				if !l.hole[q] {
					continue
				}
				acc = [6]float32{}
				var wsum float32
				dq := l.depth[q]
				for dy := -patchR; dy <= patchR; dy++ {
					py := y - dy
					if py < 0 || py >= h {
						continue
					}
					for dx := -patchR; dx <= patchR; dx++ {
						px := x - dx
						if px < 0 || px >= w {
							continue
						}
						p := py*w + px
						s := l.nnf[p]
						if s < 0 {
							continue
						}
						wt := l.wt[p] * confTable[min(confSpan, max(-confSpan, dq-l.depth[p]))+confSpan]
						src := int(s) + dy*w + dx
						sv := l.lin[src*nc : src*nc+nc]
						for c, v := range sv {
							acc[c] += wt * v
						}
						if withTex {
							acc[4] += wt * l.tex[2*src]
							acc[5] += wt * l.tex[2*src+1]
						}
						wsum += wt
					}
				}
				if !(wsum > 1e-20) {
					continue // no usable vote: keep the previous estimate
				}
				inv := 1 / wsum
				dst := l.lin[q*nc : q*nc+nc]
				for c := range dst {
					dst[c] = acc[c] * inv
				}
				if withTex {
					l.tex[2*q] = acc[4] * inv
					l.tex[2*q+1] = acc[5] * inv
				}
			}
		}
	})
}
