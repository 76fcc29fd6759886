package grouping

import (
	"math"
	"math/rand/v2"

	"github.com/porchlight/porchlight/engine/imaging"
)

// The degradations the cull measurement applies to real frames, in linear light on
// a decoded frame, each finished like a camera file: sensor-like noise and 8-bit
// sRGB codes.

// motionBlur smears img along a line of length px at angle deg.
func motionBlur(img *imaging.Image, px, deg float64) *imaging.Image {
	n := max(2, int(math.Ceil(px))+1)
	dx, dy := math.Cos(deg*math.Pi/180), math.Sin(deg*math.Pi/180)
	var offs [][2]float64
	for i := range n {
		t := (float64(i)/float64(n-1) - 0.5) * px
		offs = append(offs, [2]float64{t * dx, t * dy})
	}
	return convolve(img, offs)
}

// defocus blurs img with a disc of radius r, the shape of an out-of-focus lens.
func defocus(img *imaging.Image, r float64) *imaging.Image {
	var offs [][2]float64
	ri := int(math.Ceil(r))
	for y := -ri; y <= ri; y++ {
		for x := -ri; x <= ri; x++ {
			if float64(x*x+y*y) <= r*r {
				offs = append(offs, [2]float64{float64(x), float64(y)})
			}
		}
	}
	return convolve(img, offs)
}

// convolve averages img over the offsets, sampled bilinearly, clamped at the edges.
func convolve(img *imaging.Image, offs [][2]float64) *imaging.Image {
	img = img.Widen()
	w, h, c := img.W(), img.H(), img.C
	out := imaging.New(w, h, c)
	inv := float32(1 / float64(len(offs)))
	// Each offset splits into a whole-pixel shift and bilinear weights.
	type tap struct {
		dx, dy             int
		w00, w10, w01, w11 float32
	}
	taps := make([]tap, len(offs))
	for i, o := range offs {
		fx, fy := math.Floor(o[0]), math.Floor(o[1])
		ax, ay := float32(o[0]-fx), float32(o[1]-fy)
		taps[i] = tap{int(fx), int(fy), (1 - ax) * (1 - ay) * inv, ax * (1 - ay) * inv, (1 - ax) * ay * inv, ax * ay * inv}
	}
	clampX := func(x int) int { return min(max(x, 0), w-1) }
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := out.Row(y)
			for _, t := range taps {
				r0 := img.Row(min(max(y+t.dy, 0), h-1))
				r1 := img.Row(min(max(y+t.dy+1, 0), h-1))
				for x := range w {
					x0, x1 := clampX(x+t.dx)*c, clampX(x+t.dx+1)*c
					for k := range c {
						row[x*c+k] += t.w00*r0[x0+k] + t.w10*r0[x1+k] + t.w01*r1[x0+k] + t.w11*r1[x1+k]
					}
				}
			}
		}
	})
	return out
}

// scaled multiplies img's light by k (a frame shot far too dark).
func scaled(img *imaging.Image, k float32) *imaging.Image {
	img = img.Widen()
	out := imaging.New(img.W(), img.H(), img.C)
	for i, v := range img.Pix[:len(out.Pix)] {
		out.Pix[i] = v * k
	}
	return out
}

// flat is a w×h frame of one grey level (linear) with a gentle left-to-right
// gradient of grad (a share of the level): a grey card filling the frame.
func flat(w, h int, level, grad float32) *imaging.Image {
	out := imaging.New(w, h, 3)
	for y := range h {
		row := out.Row(y)
		for x := range w {
			v := level * (1 + grad*(float32(x)/float32(w)-0.5) + 0.3*grad*(float32(y)/float32(h)-0.5))
			row[3*x], row[3*x+1], row[3*x+2] = v, v*0.98, v*1.02
		}
	}
	return out
}

// finish adds noise of sigma 8-bit codes (read noise plus shot noise that grows
// with the signal) and rounds to 8-bit sRGB codes, as a camera JPEG holds them.
func finish(img *imaging.Image, sigma float64, seed uint64) *imaging.Image {
	img = img.Widen()
	rng := rand.New(rand.NewPCG(seed, 7))
	out := imaging.New(img.W(), img.H(), img.C)
	for i, v := range img.Pix[:len(out.Pix)] {
		code := float64(imaging.Encode16(v))/257 + rng.NormFloat64()*sigma
		code = math.Round(min(max(code, 0), 255))
		out.Pix[i] = imaging.Decode8(uint8(code))
	}
	return out
}
