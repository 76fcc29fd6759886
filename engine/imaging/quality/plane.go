package quality

import (
	"errors"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// plane is a single-channel float64 image, row-major without padding.
type plane struct {
	w, h int
	pix  []float64
}

func newPlane(w, h int) *plane { return &plane{w: w, h: h, pix: make([]float64, w*h)} }

func (p *plane) row(y int) []float64 { return p.pix[y*p.w : (y+1)*p.w] }

// luma returns the Rec. 601 luma of the sRGB-encoded image on a 0..255 scale.
// Single-channel images are taken as gray.
func luma(m *imaging.Image) (*plane, error) {
	if m == nil || m.W() <= 0 || m.H() <= 0 {
		return nil, errors.New("empty image")
	}
	if m.C != 1 && m.C < 3 {
		return nil, fmt.Errorf("unsupported channel count %d", m.C)
	}
	w, h := m.W(), m.H()
	if len(m.Pix) < (h-1)*m.Stride+w*m.C {
		return nil, errors.New("pixel buffer shorter than the image")
	}
	p := newPlane(w, h)
	const k = 255.0 / 65535
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src := m.Row(y)
			dst := p.row(y)
			if m.C == 1 {
				for x := range dst {
					dst[x] = float64(imaging.Encode16(src[x])) * k
				}
				continue
			}
			for x := range dst {
				o := x * m.C
				r := float64(imaging.Encode16(src[o]))
				g := float64(imaging.Encode16(src[o+1]))
				b := float64(imaging.Encode16(src[o+2]))
				dst[x] = (0.2989*r + 0.5870*g + 0.1140*b) * k
			}
		}
	})
	return p, nil
}

// shrinkTo area-averages p so that its longer side is at most maxSide (no-op when it
// already fits or maxSide <= 0).
func shrinkTo(p *plane, maxSide int) *plane {
	long := max(p.w, p.h)
	if maxSide <= 0 || long <= maxSide {
		return p
	}
	s := float64(maxSide) / float64(long)
	w := max(1, int(math.Round(float64(p.w)*s)))
	h := max(1, int(math.Round(float64(p.h)*s)))
	return resizeArea(p, w, h)
}

// resizeArea resamples p to w×h by exact area coverage (a box filter that integrates
// each source pixel's overlap), separably: rows first, then columns.
func resizeArea(p *plane, w, h int) *plane {
	tmp := newPlane(w, p.h)
	xs := areaTaps(p.w, w)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			for x := range dst {
				t := xs[x]
				var s float64
				for i, wt := range t.w {
					s += src[t.first+i] * wt
				}
				dst[x] = s
			}
		}
	})
	out := newPlane(w, h)
	ys := areaTaps(p.h, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			t := ys[y]
			dst := out.row(y)
			for i, wt := range t.w {
				src := tmp.row(t.first + i)
				for x := range dst {
					dst[x] += src[x] * wt
				}
			}
		}
	})
	return out
}

type taps struct {
	first int
	w     []float64
}

// areaTaps gives, for each of m output samples, the weights of the n input samples it
// covers; weights of one output sum to 1.
func areaTaps(n, m int) []taps {
	out := make([]taps, m)
	scale := float64(n) / float64(m)
	for i := range out {
		a, b := float64(i)*scale, float64(i+1)*scale
		first := int(math.Floor(a))
		last := min(n-1, int(math.Ceil(b))-1)
		t := taps{first: first, w: make([]float64, last-first+1)}
		for j := first; j <= last; j++ {
			lo, hi := math.Max(a, float64(j)), math.Min(b, float64(j+1))
			t.w[j-first] = (hi - lo) / scale
		}
		out[i] = t
	}
	return out
}

// halve is the 2×2 mean followed by taking every other sample, as the MEF-SSIM
// reference does between scales (imfilter with ones(2)/4, 'symmetric', then 1:2:end):
// an odd last row or column is mirrored.
func halve(p *plane) *plane {
	w, h := (p.w+1)/2, (p.h+1)/2
	out := newPlane(w, h)
	for y := 0; y < h; y++ {
		r0 := p.row(2 * y)
		r1 := r0
		if 2*y+1 < p.h {
			r1 = p.row(2*y + 1)
		}
		dst := out.row(y)
		for x := range dst {
			x0, x1 := 2*x, 2*x+1
			if x1 >= p.w {
				x1 = x0
			}
			dst[x] = (r0[x0] + r0[x1] + r1[x0] + r1[x1]) / 4
		}
	}
	return out
}

// window is a normalized separable kernel of odd length.
type window []float64

func gaussianWindow(size int, sigma float64) window {
	k := make(window, size)
	c := float64(size-1) / 2
	var s float64
	for i := range k {
		d := float64(i) - c
		k[i] = math.Exp(-d * d / (2 * sigma * sigma))
		s += k[i]
	}
	for i := range k {
		k[i] /= s
	}
	return k
}

func boxWindow(size int) window {
	k := make(window, size)
	for i := range k {
		k[i] = 1 / float64(size)
	}
	return k
}

// filterValid correlates p with the separable kernel k×k and keeps only positions where
// the window lies inside the image ('valid'): the result is (w-n+1)×(h-n+1).
func filterValid(p *plane, k window) *plane {
	if k.uniform() {
		return boxValid(p, len(k))
	}
	n := len(k)
	ow, oh := p.w-n+1, p.h-n+1
	tmp := newPlane(ow, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			for x := range dst {
				s := 0.0
				seg := src[x : x+n]
				for i, v := range seg {
					s += v * k[i]
				}
				dst[x] = s
			}
		}
	})
	out := newPlane(ow, oh)
	imaging.Bands(oh, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.row(y)
			for i, kv := range k {
				src := tmp.row(y + i)
				for x := range dst {
					dst[x] += src[x] * kv
				}
			}
		}
	})
	return out
}

// product returns the pixelwise product of a and b.
func product(a, b *plane) *plane {
	out := newPlane(a.w, a.h)
	for i := range out.pix {
		out.pix[i] = a.pix[i] * b.pix[i]
	}
	return out
}

func (k window) uniform() bool {
	for _, v := range k {
		if v != k[0] {
			return false
		}
	}
	return true
}

// boxValid is filterValid for a uniform kernel, with running sums.
func boxValid(p *plane, n int) *plane {
	ow, oh := p.w-n+1, p.h-n+1
	inv := 1 / float64(n)
	tmp := newPlane(ow, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			var s float64
			for _, v := range src[:n] {
				s += v
			}
			dst[0] = s * inv
			for x := 1; x < ow; x++ {
				s += src[x+n-1] - src[x-1]
				dst[x] = s * inv
			}
		}
	})
	out := newPlane(ow, oh)
	imaging.Bands(oh, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.row(y)
			for i := range n {
				for x, v := range tmp.row(y + i) {
					dst[x] += v
				}
			}
			for x := range dst {
				dst[x] *= inv
			}
		}
	})
	return out
}
