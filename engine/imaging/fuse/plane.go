package fuse

import "github.com/porchlight/porchlight/engine/imaging"

// plane is one float32 channel, row-major without padding.
type plane struct {
	w, h int
	pix  []float32
}

func newPlane(w, h int) *plane { return &plane{w: w, h: h, pix: make([]float32, w*h)} }

func (p *plane) row(y int) []float32 { return p.pix[y*p.w : (y+1)*p.w] }

// rgb is a planar three-channel image.
type rgb [3]*plane

func newRGB(w, h int) rgb { return rgb{newPlane(w, h), newPlane(w, h), newPlane(w, h)} }

// reflect101 maps an index outside [0, n) back inside by mirroring without repeating
// the edge sample (…2 1 | 0 1 2 … n-1 | n-2 …), as pyramid filters expect.
func reflect101(i, n int) int {
	if n == 1 {
		return 0
	}
	for i < 0 || i >= n {
		if i < 0 {
			i = -i
		}
		if i >= n {
			i = 2*(n-1) - i
		}
	}
	return i
}

// pyrDown blurs p with the 5-tap binomial kernel [1 4 6 4 1]/16 in both directions and
// keeps every other sample: the next level of a Gaussian pyramid.
func pyrDown(p *plane) *plane {
	w, h := (p.w+1)/2, (p.h+1)/2
	tmp := newPlane(w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			n := p.w
			for x := range dst {
				c := 2 * x
				if c >= 2 && c+2 < n {
					dst[x] = (src[c-2] + src[c+2] + 4*(src[c-1]+src[c+1]) + 6*src[c]) * (1.0 / 16)
					continue
				}
				dst[x] = (src[reflect101(c-2, n)] + src[reflect101(c+2, n)] +
					4*(src[reflect101(c-1, n)]+src[reflect101(c+1, n)]) + 6*src[reflect101(c, n)]) * (1.0 / 16)
			}
		}
	})
	out := newPlane(w, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			c := 2 * y
			r0, r1, r2 := tmp.row(reflect101(c-2, p.h)), tmp.row(reflect101(c-1, p.h)), tmp.row(reflect101(c, p.h))
			r3, r4 := tmp.row(reflect101(c+1, p.h)), tmp.row(reflect101(c+2, p.h))
			dst := out.row(y)
			for x := range dst {
				dst[x] = (r0[x] + r4[x] + 4*(r1[x]+r3[x]) + 6*r2[x]) * (1.0 / 16)
			}
		}
	})
	return out
}

// pyrUp expands p to w×h (w is 2·p.w or 2·p.w-1, likewise h) by inserting zeros and
// filtering with 4·[1 4 6 4 1]/16, the inverse step of pyrDown.
func pyrUp(p *plane, w, h int) *plane {
	tmp := newPlane(w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			upRow(p.row(y), tmp.row(y))
		}
	})
	out := newPlane(w, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.row(y)
			i := y / 2
			if y%2 == 0 {
				a, b, c := tmp.row(reflect101(i-1, p.h)), tmp.row(i), tmp.row(reflect101(i+1, p.h))
				for x := range dst {
					dst[x] = (a[x] + c[x] + 6*b[x]) * (1.0 / 8)
				}
			} else {
				a, b := tmp.row(i), tmp.row(reflect101(i+1, p.h))
				for x := range dst {
					dst[x] = (a[x] + b[x]) * 0.5
				}
			}
		}
	})
	return out
}

// upRow is the horizontal half of pyrUp for one row.
func upRow(src, dst []float32) {
	n := len(src)
	for x := range dst {
		i := x / 2
		if x%2 == 0 {
			dst[x] = (src[reflect101(i-1, n)] + src[reflect101(i+1, n)] + 6*src[i]) * (1.0 / 8)
		} else {
			dst[x] = (src[i] + src[reflect101(i+1, n)]) * 0.5
		}
	}
}
