package fuse

import (
	"context"

	"github.com/porchlight/porchlight/engine/imaging"
)

// lowres is one bracket reduced by an integer factor: block means of its encoded
// channels, and the variance of encoded luma inside each block (the energy of the
// detail finer than the block, which the full-resolution pass distributes).
type lowres struct {
	img    rgb
	detail *plane // block variance of luma; nil when the factor is 1
	mean   float64
}

// encRow returns row y of m as encoded samples, in buf for a float32 image.
func encRow(m *imaging.Image, y int, buf []float32) []float32 {
	if m.IsNarrow() {
		return m.EncodedRow(y, buf)
	}
	row := m.Row(y)
	buf = buf[:len(row)]
	for i, v := range row {
		buf[i] = enc(v)
	}
	return buf
}

// reduce computes the lowres of m for factor s in one pass over the full image,
// stopping within a block row once ctx is done.
func reduce(ctx context.Context, m *imaging.Image, s int) (*lowres, error) {
	W, H := m.W(), m.H()
	w, h := (W+s-1)/s, (H+s-1)/s
	lr := &lowres{img: newRGB(w, h)}
	if s > 1 {
		lr.detail = newPlane(w, h)
	}
	nc := m.C
	sums := make([]float64, imaging.Workers())
	imaging.Bands(h, func(worker, y0, y1 int) {
		acc := make([]float32, 4*w) // r g b luma² per block
		ebuf := make([]float32, W*nc)
		var total float64
		for by := y0; by < y1; by++ {
			if imaging.Canceled(ctx) {
				return
			}
			clear(acc)
			ya, yb := by*s, min(H, (by+1)*s)
			for y := ya; y < yb; y++ {
				row := encRow(m, y, ebuf)
				for bx := 0; bx < w; bx++ {
					xa, xb := bx*s, min(W, (bx+1)*s)
					p := row[xa*nc : xb*nc]
					var sr, sg, sb, sl float32
					if nc == 1 {
						for _, e := range p {
							sr += e
							sl += e * e
						}
						sg, sb = sr, sr
					} else {
						for len(p) >= 3 {
							r, g, b := p[0], p[1], p[2]
							sr += r
							sg += g
							sb += b
							l := 0.299*r + 0.587*g + 0.114*b
							sl += l * l
							p = p[nc:]
						}
					}
					a := acc[bx*4 : bx*4+4]
					a[0] += sr
					a[1] += sg
					a[2] += sb
					a[3] += sl
				}
			}
			rr, gr, br := lr.img[0].row(by), lr.img[1].row(by), lr.img[2].row(by)
			for bx := 0; bx < w; bx++ {
				n := float32((yb - ya) * (min(W, (bx+1)*s) - bx*s))
				a := acc[bx*4 : bx*4+4]
				r, g, b := a[0]/n, a[1]/n, a[2]/n
				rr[bx], gr[bx], br[bx] = r, g, b
				l := 0.299*r + 0.587*g + 0.114*b
				total += float64(l)
				if s > 1 {
					lr.detail.row(by)[bx] = max(0, a[3]/n-l*l)
				}
			}
		}
		sums[worker] += total
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var t float64
	for _, v := range sums {
		t += v
	}
	lr.mean = t / float64(w*h)
	return lr, nil
}
