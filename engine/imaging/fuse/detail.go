package fuse

import (
	"context"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// restoreDetail produces the full-size result from the fused reduced image: each
// bracket's detail finer than the reduction (its encoded pixels minus its upsampled
// block means) is added to the upsampled base with that bracket's detail weight. One
// streaming pass over the brackets, row by row in parallel bands, with per-band rows.
// The brackets may be narrow (sRGB codes). It stops within a row once ctx is done.
func restoreDetail(ctx context.Context, imgs []*imaging.Image, lows []*lowres, dw []*plane, base rgb, s int) (*imaging.Image, error) {
	W, H := imgs[0].W(), imgs[0].H()
	w, h := base[0].w, base[0].h
	x0 := make([]int32, W)
	tx := make([]float32, W)
	for x := range W {
		j, t := lerpPos(x, s, w)
		x0[x], tx[x] = int32(j), t
	}
	// Runs of output columns that share their two reduced neighbours, so the loops
	// below hoist those loads out of the per-pixel work.
	var runs []run
	for x := 0; x < W; {
		e := x
		for e < W && x0[e] == x0[x] {
			e++
		}
		runs = append(runs, run{x, e, int(x0[x])})
		x = e
	}
	out := imaging.New(W, H, 3)
	imaging.Bands(H, func(_, ya, yb int) {
		// Vertically interpolated reduced-width rows (padded by one for the right
		// neighbour): the base, then per bracket its weight and block means.
		vrow := func() []float32 { return make([]float32, w+1) }
		var bRows, lRows [3][]float32
		for c := range 3 {
			bRows[c], lRows[c] = vrow(), vrow()
		}
		dRow := vrow()
		acc := make([]float32, 3*W)
		ebuf := make([]float32, W*4)
		for y := ya; y < yb; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			j, ty := lerpPos(y, s, h)
			j1 := min(j+1, h-1)
			vlerp := func(dst []float32, p *plane) {
				a, b := p.row(j), p.row(j1)
				for i := range a {
					dst[i] = a[i] + ty*(b[i]-a[i])
				}
				dst[w] = dst[w-1]
			}
			for c := range 3 {
				vlerp(bRows[c], base[c])
			}
			for _, r := range runs {
				b0, b1, b2 := bRows[0][r.j], bRows[1][r.j], bRows[2][r.j]
				e0, e1, e2 := bRows[0][r.j+1]-b0, bRows[1][r.j+1]-b1, bRows[2][r.j+1]-b2
				a := acc[3*r.x0 : 3*r.x1]
				for k, t := range tx[r.x0:r.x1] {
					a[3*k] = b0 + t*e0
					a[3*k+1] = b1 + t*e1
					a[3*k+2] = b2 + t*e2
				}
			}
			for b, m := range imgs {
				vlerp(dRow, dw[b])
				for c := range 3 {
					vlerp(lRows[c], lows[b].img[c])
				}
				if m.Pix8 != nil && m.C == 3 {
					// 8-bit codes are read as they are: no encoded copy of the row.
					o := y * m.Stride
					addDetail8(acc, m.Pix8[o:o+3*W], runs, tx, dRow, &lRows)
					continue
				}
				addDetail(acc, encRow(m, y, ebuf), m.C, runs, tx, dRow, &lRows)
			}
			dst := out.Row(y)
			for i, v := range acc {
				dst[i] = dec(v)
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// run is a span of output columns [x0, x1) between reduced samples j and j+1.
type run struct{ x0, x1, j int }

// addDetail adds one bracket's detail share times its detail (encoded samples p, nc
// per pixel, minus the interpolated block means in lRows) to the row accumulator acc.
func addDetail(acc, p []float32, nc int, runs []run, tx, dRow []float32, lRows *[3][]float32) {
	for _, r := range runs {
		if dRow[r.j] < skipShare && dRow[r.j+1] < skipShare {
			continue // this bracket adds nothing visible here
		}
		d0, dd := dRow[r.j], dRow[r.j+1]-dRow[r.j]
		l0, l1, l2 := lRows[0][r.j], lRows[1][r.j], lRows[2][r.j]
		m0, m1, m2 := lRows[0][r.j+1]-l0, lRows[1][r.j+1]-l1, lRows[2][r.j+1]-l2
		a := acc[3*r.x0 : 3*r.x1]
		q := p[r.x0*nc : r.x1*nc]
		for k, t := range tx[r.x0:r.x1] {
			d := d0 + t*dd
			var v0, v1, v2 float32
			if nc == 1 {
				v0 = q[k]
				v1, v2 = v0, v0
			} else {
				s := q[k*nc : k*nc+3]
				v0, v1, v2 = s[0], s[1], s[2]
			}
			o := a[3*k : 3*k+3]
			o[0] += d * (v0 - (l0 + t*m0))
			o[1] += d * (v1 - (l1 + t*m1))
			o[2] += d * (v2 - (l2 + t*m2))
		}
	}
}

// enc8 maps an 8-bit code to its encoded value.
var enc8 = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return
}()

// addDetail8 is addDetail for 8-bit RGB codes.
func addDetail8(acc []float32, p []uint8, runs []run, tx, dRow []float32, lRows *[3][]float32) {
	for _, r := range runs {
		if dRow[r.j] < skipShare && dRow[r.j+1] < skipShare {
			continue
		}
		d0, dd := dRow[r.j], dRow[r.j+1]-dRow[r.j]
		l0, l1, l2 := lRows[0][r.j], lRows[1][r.j], lRows[2][r.j]
		m0, m1, m2 := lRows[0][r.j+1]-l0, lRows[1][r.j+1]-l1, lRows[2][r.j+1]-l2
		a := acc[3*r.x0 : 3*r.x1]
		q := p[3*r.x0 : 3*r.x1]
		for k, t := range tx[r.x0:r.x1] {
			d := d0 + t*dd
			s := q[3*k : 3*k+3 : 3*k+3]
			o := a[3*k : 3*k+3 : 3*k+3]
			o[0] += d * (enc8[s[0]] - (l0 + t*m0))
			o[1] += d * (enc8[s[1]] - (l1 + t*m1))
			o[2] += d * (enc8[s[2]] - (l2 + t*m2))
		}
	}
}

// skipShare is the detail share below which a bracket's detail is not added: at most
// a thousandth of its amplitude, well under a code value.
const skipShare = 1e-3

// lerpPos maps full-size coordinate x to the reduced grid of n samples (sample j
// covers [j·s, (j+1)·s)): the left sample index and the interpolation fraction. The
// right sample is index+1, which callers pad.
func lerpPos(x, s, n int) (int, float32) {
	u := (float64(x)+0.5)/float64(s) - 0.5
	if u <= 0 {
		return 0, 0
	}
	j := int(math.Floor(u))
	if j >= n-1 {
		return n - 1, 0
	}
	return j, float32(u - float64(j))
}
