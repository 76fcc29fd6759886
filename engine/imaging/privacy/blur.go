package privacy

import (
	"image"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// The blur is built to destroy, not to soften: inside each region the pixels are first
// averaged over coarse blocks (six across the region's short side), which keeps
// no detail finer than a block; the blocks are then smoothed with a box blur three blocks
// wide so the patch reads as a soft smear instead of a mosaic; finally deterministic
// noise, seeded by the region, is added so that no deconvolution can climb back from
// the smooth result. The region blends in through a feathered mask: an ellipse for
// faces, a rounded rectangle for plates and frames, falling from 1 at the box edge to 0
// one feather width outside it. Everything happens in linear light.

// blurBlocksAcross is the number of pixelation blocks across a region's short side.
const blurBlocksAcross = 6

// noiseAmplitude is the peak noise, in linear-light units, added after the blur.
const noiseAmplitude = 0.02

// Feather returns the width, in pixels, of the soft edge Blur gives a box: 12% of its
// shorter side, at least 2 pixels. The pixels Blur changes lie inside the box grown by
// this much on every side.
func Feather(box image.Rectangle) int {
	return max(2, int(math.Round(0.12*float64(min(box.Dx(), box.Dy())))))
}

// Blur returns a copy of img with every detection's region made unrecognisable. Pixels
// farther than Feather(box) outside every box are left exactly as they were; the alpha
// channel of a 4-channel image is not touched.
func Blur(img *imaging.Image, dets []Detection) *imaging.Image {
	out := img.Clone()
	if checkImage(img) != nil {
		return out
	}
	var s blurScratch
	for _, d := range dets {
		s.apply(out, d)
	}
	return out
}

// blurScratch holds the per-region buffers, reused across detections.
type blurScratch struct {
	region []float32 // the effect, region-sized, colour channels only
	tmp    []float32
	mask   []float32
}

func (s *blurScratch) apply(img *imaging.Image, d Detection) {
	box := d.Box.Sub(img.Rect.Min)
	full := image.Rect(0, 0, img.W(), img.H())
	if box.Intersect(full).Empty() {
		return
	}
	f := Feather(box)
	area := box.Inset(-f).Intersect(full)
	w, h := area.Dx(), area.Dy()
	cc := min(img.C, 3) // colour channels; alpha stays
	n := w * h * cc
	s.region = growF(s.region, n)
	s.tmp = growF(s.tmp, n)
	s.mask = growF(s.mask, w*h)

	// 1. Pixelate: block means over a grid anchored at the box's corner.
	bs := max(2, min(box.Dx(), box.Dy())/blurBlocksAcross)
	for by := floorDiv(area.Min.Y-box.Min.Y, bs); box.Min.Y+by*bs < area.Max.Y; by++ {
		y0 := max(area.Min.Y, box.Min.Y+by*bs)
		y1 := min(area.Max.Y, box.Min.Y+(by+1)*bs)
		for bx := floorDiv(area.Min.X-box.Min.X, bs); box.Min.X+bx*bs < area.Max.X; bx++ {
			x0 := max(area.Min.X, box.Min.X+bx*bs)
			x1 := min(area.Max.X, box.Min.X+(bx+1)*bs)
			var sum [3]float32
			for y := y0; y < y1; y++ {
				row := img.Row(y)
				for x := x0; x < x1; x++ {
					for c := 0; c < cc; c++ {
						sum[c] += row[x*img.C+c]
					}
				}
			}
			inv := 1 / float32((x1-x0)*(y1-y0))
			for y := y0; y < y1; y++ {
				o := ((y-area.Min.Y)*w + (x0 - area.Min.X)) * cc
				for x := x0; x < x1; x++ {
					for c := 0; c < cc; c++ {
						s.region[o+c] = sum[c] * inv
					}
					o += cc
				}
			}
		}
	}
	// 2. Smooth the blocks: two passes of a box blur three blocks wide, which leaves no
	// trace of the block edges and nothing finer than about a third of the region.
	r := max(2, (3*bs+1)/2)
	for pass := 0; pass < 2; pass++ {
		boxBlurH(s.region, s.tmp, w, h, cc, r)
		boxBlurV(s.tmp, s.region, w, h, cc, r)
	}
	// 3. Mask and 4. noise, blended into the image.
	s.buildMask(d.Concept, box, area, f)
	rng := newNoise(uint64(box.Min.X)<<40 ^ uint64(box.Min.Y)<<20 ^ uint64(box.Dx()*31+box.Dy()))
	for y := 0; y < h; y++ {
		row := img.Row(area.Min.Y + y)
		for x := 0; x < w; x++ {
			m := s.mask[y*w+x]
			if m <= 0 {
				continue
			}
			o := (area.Min.X + x) * img.C
			e := (y*w + x) * cc
			nz := noiseAmplitude * (2*rng.float() - 1)
			for c := 0; c < cc; c++ {
				v := max(0, s.region[e+c]+nz)
				row[o+c] += m * (v - row[o+c])
			}
		}
	}
}

// buildMask writes the blend weight of each pixel of area: 1 inside the shape (an
// ellipse inscribed in the box for faces, a rectangle with corners rounded by a fifth
// of the short side otherwise), falling smoothly to 0 at distance f outside it.
func (s *blurScratch) buildMask(concept string, box, area image.Rectangle, f int) {
	w := area.Dx()
	cx := float64(box.Min.X+box.Max.X) / 2
	cy := float64(box.Min.Y+box.Max.Y) / 2
	hw, hh := float64(box.Dx())/2, float64(box.Dy())/2
	ff := float64(f)
	round := 0.2 * math.Min(hw, hh) * 2
	for y := area.Min.Y; y < area.Max.Y; y++ {
		py := float64(y) + 0.5 - cy
		for x := area.Min.X; x < area.Max.X; x++ {
			px := float64(x) + 0.5 - cx
			var dist float64 // distance outside the shape, 0 inside
			if concept == ConceptFace {
				// Distance to the ellipse, approximated by scaling the normalised radius.
				q := math.Hypot(px/hw, py/hh)
				if q > 1 {
					dist = (q - 1) * math.Min(hw, hh)
				}
			} else {
				qx := math.Max(math.Abs(px)-(hw-round), 0)
				qy := math.Max(math.Abs(py)-(hh-round), 0)
				dist = math.Max(math.Hypot(qx, qy)-round, 0)
			}
			var m float32
			if dist < ff {
				t := dist / ff
				m = float32(1 - t*t*(3-2*t)) // smoothstep fall-off
			}
			s.mask[(y-area.Min.Y)*w+(x-area.Min.X)] = m
		}
	}
}

func boxBlurH(src, dst []float32, w, h, cc, r int) {
	inv := 1 / float32(2*r+1)
	for y := 0; y < h; y++ {
		row := src[y*w*cc : (y+1)*w*cc]
		out := dst[y*w*cc : (y+1)*w*cc]
		for c := 0; c < cc; c++ {
			var acc float32
			at := func(x int) float32 { return row[clampInt(x, 0, w-1)*cc+c] }
			for x := -r; x <= r; x++ {
				acc += at(x)
			}
			for x := 0; x < w; x++ {
				out[x*cc+c] = acc * inv
				acc += at(x+r+1) - at(x-r)
			}
		}
	}
}

func boxBlurV(src, dst []float32, w, h, cc, r int) {
	inv := 1 / float32(2*r+1)
	for x := 0; x < w; x++ {
		for c := 0; c < cc; c++ {
			var acc float32
			at := func(y int) float32 { return src[(clampInt(y, 0, h-1)*w+x)*cc+c] }
			for y := -r; y <= r; y++ {
				acc += at(y)
			}
			for y := 0; y < h; y++ {
				dst[(y*w+x)*cc+c] = acc * inv
				acc += at(y+r+1) - at(y-r)
			}
		}
	}
}

func growF(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func floorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// noise is a small xorshift generator: deterministic per region, so the same photo and
// detections always give the same pixels.
type noise struct{ s uint64 }

func newNoise(seed uint64) *noise { return &noise{s: seed*0x9E3779B97F4A7C15 | 1} }

func (n *noise) float() float32 {
	n.s ^= n.s << 13
	n.s ^= n.s >> 7
	n.s ^= n.s << 17
	return float32(n.s>>40) / float32(1<<24)
}
