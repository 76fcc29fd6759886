package fuse

import (
	"context"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// levelsFor is the pyramid depth for a w×h image: down to a few pixels, as Mertens
// fusion needs the coarsest weights to be nearly global.
func levelsFor(w, h int) int {
	n := int(math.Log2(float64(min(w, h))))
	return max(1, n)
}

// pyramid is the Gaussian pyramid of each channel of one bracket.
type pyramid [3][]*plane

func gaussPyr(p *plane, levels int) []*plane {
	g := make([]*plane, levels+1)
	g[0] = p
	for l := 1; l <= levels; l++ {
		g[l] = pyrDown(g[l-1])
	}
	return g
}

func makePyramid(im rgb, levels int) pyramid {
	var p pyramid
	for c := range 3 {
		p[c] = gaussPyr(im[c], levels)
	}
	return p
}

// blend fuses the brackets by Laplacian-pyramid blending (Burt and Adelson) with the
// Gaussian pyramids of their normalized weights. At the finest detailLevels levels
// each bracket's share is further scaled by the local energy of its own Laplacian
// coefficients to the power detailPower/2, so the fused detail comes mostly from the
// bracket that shows it with the most contrast instead of being averaged flat; the
// shares are renormalized. Only the brackets listed in use take part. ctx is checked
// once per level.
func blend(ctx context.Context, pyrs []pyramid, ws []*plane, use []int, levels int, opt *Options) (rgb, error) {
	K := len(use)
	base := make([]*plane, K)
	for i, k := range use {
		base[i] = ws[k]
	}
	if K < len(ws) {
		// A subset: its weights must sum to one on their own.
		for i := range base {
			base[i] = clonePlane(base[i])
		}
		normalize(base)
	}
	gw := make([][]*plane, K)
	for i := range base {
		gw[i] = gaussPyr(base[i], levels)
	}
	res := make([][3]*plane, levels+1)
	lap := make([][3]*plane, K)
	for l := 0; l <= levels; l++ {
		if err := ctx.Err(); err != nil {
			return rgb{}, err
		}
		w, h := pyrs[use[0]][0][l].w, pyrs[use[0]][0][l].h
		for i, k := range use {
			for c := range 3 {
				g := pyrs[k][c][l]
				if l == levels {
					lap[i][c] = g
					continue
				}
				up := pyrUp(pyrs[k][c][l+1], w, h)
				subInto(up, g) // up = g − up
				lap[i][c] = up
			}
		}
		om := make([]*plane, K)
		for i := range om {
			om[i] = gw[i][l]
		}
		if opt.DetailPower > 0 && l < opt.DetailLevels && l < levels && K > 1 {
			om = energyWeights(lap, om, opt.DetailPower)
		}
		for c := range 3 {
			acc := newPlane(w, h)
			imaging.Bands(h, func(_, y0, y1 int) {
				a := acc.pix[y0*w : y1*w]
				for i := range om {
					wl, lp := om[i].pix[y0*w:y1*w], lap[i][c].pix[y0*w:y1*w]
					for p := range a {
						a[p] += wl[p] * lp[p]
					}
				}
			})
			res[l][c] = acc
		}
	}
	var out rgb
	for c := range 3 {
		g := res[levels][c]
		for l := levels - 1; l >= 0; l-- {
			up := pyrUp(g, res[l][c].w, res[l][c].h)
			addInto(up, res[l][c])
			g = up
		}
		out[c] = g
	}
	return out, nil
}

// energyEps keeps flat regions (no detail in any bracket) on the plain weights.
const energyEps = 1e-5

// energyWeights returns the weights om scaled by (local Laplacian energy + ε)^(p/2)
// and renormalized.
func energyWeights(lap [][3]*plane, om []*plane, p float64) []*plane {
	w, h := om[0].w, om[0].h
	out := make([]*plane, len(om))
	for i := range om {
		e := newPlane(w, h)
		a, b, c := lap[i][0].pix, lap[i][1].pix, lap[i][2].pix
		imaging.Bands(h, func(_, y0, y1 int) {
			for q := y0 * w; q < y1*w; q++ {
				e.pix[q] = a[q]*a[q] + b[q]*b[q] + c[q]*c[q]
			}
		})
		e = blur5(e)
		wp := om[i].pix
		imaging.Bands(h, func(_, y0, y1 int) {
			for q := y0 * w; q < y1*w; q++ {
				v := e.pix[q] + energyEps
				var s float32
				switch p {
				case 4:
					s = v * v
				case 2:
					s = v
				default:
					s = float32(math.Pow(float64(v), p/2))
				}
				e.pix[q] = wp[q] * s
			}
		})
		out[i] = e
	}
	normalize(out)
	return out
}

func clonePlane(p *plane) *plane {
	q := newPlane(p.w, p.h)
	copy(q.pix, p.pix)
	return q
}

// subInto sets dst = a − dst.
func subInto(dst, a *plane) {
	imaging.Bands(dst.h, func(_, y0, y1 int) {
		d, s := dst.pix[y0*dst.w:y1*dst.w], a.pix[y0*dst.w:y1*dst.w]
		for i := range d {
			d[i] = s[i] - d[i]
		}
	})
}

// addInto sets dst += a.
func addInto(dst, a *plane) {
	imaging.Bands(dst.h, func(_, y0, y1 int) {
		d, s := dst.pix[y0*dst.w:y1*dst.w], a.pix[y0*dst.w:y1*dst.w]
		for i := range d {
			d[i] += s[i]
		}
	})
}

// blur5 filters with the binomial [1 4 6 4 1]/16 in both directions.
func blur5(p *plane) *plane {
	tmp := newPlane(p.w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			n := p.w
			for x := range dst {
				if x >= 2 && x+2 < n {
					dst[x] = (src[x-2] + src[x+2] + 4*(src[x-1]+src[x+1]) + 6*src[x]) * (1.0 / 16)
					continue
				}
				dst[x] = (src[reflect101(x-2, n)] + src[reflect101(x+2, n)] + 4*(src[reflect101(x-1, n)]+src[reflect101(x+1, n)]) + 6*src[x]) * (1.0 / 16)
			}
		}
	})
	out := newPlane(p.w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			a, b, c := tmp.row(reflect101(y-2, p.h)), tmp.row(reflect101(y-1, p.h)), tmp.row(y)
			d, e := tmp.row(reflect101(y+1, p.h)), tmp.row(reflect101(y+2, p.h))
			dst := out.row(y)
			for x := range dst {
				dst[x] = (a[x] + e[x] + 4*(b[x]+d[x]) + 6*c[x]) * (1.0 / 16)
			}
		}
	})
	return out
}
