package imaging

import "math"

// FitWithin returns the size of a w×h image scaled to fit maxEdge on its longest edge,
// keeping the aspect ratio. It never enlarges and never returns a zero dimension.
func FitWithin(w, h, maxEdge int) (int, int) {
	if w <= 0 || h <= 0 || maxEdge <= 0 || (w <= maxEdge && h <= maxEdge) {
		return w, h
	}
	if w >= h {
		return maxEdge, max(1, int(math.Round(float64(h)*float64(maxEdge)/float64(w))))
	}
	return max(1, int(math.Round(float64(w)*float64(maxEdge)/float64(h)))), maxEdge
}

// lanczosA is the Lanczos window radius: 3 lobes, the usual sharpness/ringing balance.
const lanczosA = 3

func lanczos(x float64) float64 {
	if x == 0 {
		return 1
	}
	if x <= -lanczosA || x >= lanczosA {
		return 0
	}
	px := math.Pi * x
	return lanczosA * math.Sin(px) * math.Sin(px/lanczosA) / (px * px)
}

// kernel holds, for each output sample along one axis, the first source index and a
// fixed number of normalised weights.
type kernel struct {
	taps  int
	start []int
	w     []float32
}

func newKernel(srcN, dstN int) kernel {
	scale := float64(srcN) / float64(dstN)
	fs := math.Max(scale, 1) // widen the filter when shrinking so it also low-passes
	support := lanczosA * fs
	taps0 := int(math.Ceil(2*support)) + 1
	taps := min(taps0, srcN)
	k := kernel{taps: taps, start: make([]int, dstN), w: make([]float32, dstN*taps)}
	acc := make([]float64, taps)
	for i := 0; i < dstN; i++ {
		center := (float64(i)+0.5)*scale - 0.5
		lo := int(math.Floor(center-support)) + 1
		start := min(max(lo, 0), srcN-taps)
		clear(acc)
		sum := 0.0
		for j := lo; j < lo+taps0; j++ {
			wt := lanczos((float64(j) - center) / fs)
			if wt == 0 {
				continue
			}
			jj := min(max(j, 0), srcN-1) // extend the border
			if o := jj - start; o >= 0 && o < taps {
				acc[o] += wt
				sum += wt
			}
		}
		if sum == 0 {
			acc[min(max(int(math.Round(center)), 0), srcN-1)-start] = 1
			sum = 1
		}
		k.start[i] = start
		for t := range acc {
			k.w[i*taps+t] = float32(acc[t] / sum)
		}
	}
	return k
}

// Resize resamples src to w×h with a separable Lanczos-3 filter, widened when shrinking
// so that it also anti-aliases. The data is linear light, so the averaging is
// gamma-correct. Alpha (4 channels) is handled premultiplied so transparent pixels do
// not bleed colour. Negative ringing is clamped to 0. Rows are split across workers.
func Resize(src *Image, w, h int) *Image {
	sw, sh, c := src.W(), src.H(), src.C
	if w <= 0 || h <= 0 || sw == 0 || sh == 0 {
		return New(max(w, 0), max(h, 0), c)
	}
	if w == sw && h == sh {
		return src.Clone()
	}
	if c == 4 {
		src = premultiplied(src)
	}
	kx, ky := newKernel(sw, w), newKernel(sh, h)
	// Run the cheaper order: horizontal first costs sh*w*taps_x + h*w*taps_y.
	hFirst := float64(sh)*float64(w)*float64(kx.taps)+float64(h)*float64(w)*float64(ky.taps) <=
		float64(h)*float64(sw)*float64(ky.taps)+float64(h)*float64(w)*float64(kx.taps)
	var out *Image
	if hFirst {
		tmp := New(w, sh, c)
		resizeH(src, tmp, kx)
		out = New(w, h, c)
		resizeV(tmp, out, ky)
	} else {
		tmp := New(sw, h, c)
		resizeV(src, tmp, ky)
		out = New(w, h, c)
		resizeH(tmp, out, kx)
	}
	if c == 4 {
		unpremultiply(out)
	} else {
		clampNegative(out)
	}
	return out
}

// resizeH resamples every row of src (width sw) into dst (width kx outputs).
func resizeH(src, dst *Image, k kernel) {
	c, dw, taps := src.C, dst.W(), k.taps
	Bands(src.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			in, out := src.Row(y), dst.Row(y)
			switch c {
			case 3:
				for x := 0; x < dw; x++ {
					ws := k.w[x*taps : x*taps+taps]
					px := in[k.start[x]*3 : (k.start[x]+taps)*3]
					var r, g, b float32
					for t, wt := range ws {
						p := px[t*3 : t*3+3 : t*3+3]
						r += wt * p[0]
						g += wt * p[1]
						b += wt * p[2]
					}
					o := out[x*3 : x*3+3 : x*3+3]
					o[0], o[1], o[2] = r, g, b
				}
			case 1:
				for x := 0; x < dw; x++ {
					ws := k.w[x*taps : x*taps+taps]
					px := in[k.start[x] : k.start[x]+taps]
					var v float32
					for t, wt := range ws {
						v += wt * px[t]
					}
					out[x] = v
				}
			case 4:
				for x := 0; x < dw; x++ {
					ws := k.w[x*taps : x*taps+taps]
					px := in[k.start[x]*4 : (k.start[x]+taps)*4]
					var r, g, b, a float32
					for t, wt := range ws {
						p := px[t*4 : t*4+4 : t*4+4]
						r += wt * p[0]
						g += wt * p[1]
						b += wt * p[2]
						a += wt * p[3]
					}
					o := out[x*4 : x*4+4 : x*4+4]
					o[0], o[1], o[2], o[3] = r, g, b, a
				}
			default:
				for x := 0; x < dw; x++ {
					ws := k.w[x*taps : x*taps+taps]
					o := out[x*c : x*c+c]
					clear(o)
					for t, wt := range ws {
						p := in[(k.start[x]+t)*c : (k.start[x]+t)*c+c]
						for i := range o {
							o[i] += wt * p[i]
						}
					}
				}
			}
		}
	})
}

// resizeV resamples columns: each output row is a weighted sum of whole source rows,
// which streams through memory in order.
func resizeV(src, dst *Image, k kernel) {
	taps := k.taps
	Bands(dst.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			out := dst.Row(y)
			ws := k.w[y*taps : y*taps+taps]
			in := src.Row(k.start[y])
			w0 := ws[0]
			for i, v := range in {
				out[i] = w0 * v
			}
			for t := 1; t < taps; t++ {
				wt := ws[t]
				if wt == 0 {
					continue
				}
				in := src.Row(k.start[y] + t)
				in = in[:len(out)]
				for i, v := range in {
					out[i] += wt * v
				}
			}
		}
	})
}

func premultiplied(src *Image) *Image {
	dst := New(src.W(), src.H(), 4)
	w := src.W()
	Bands(src.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			in, out := src.Row(y), dst.Row(y)
			for x := 0; x < w; x++ {
				p, o := in[x*4:x*4+4:x*4+4], out[x*4:x*4+4:x*4+4]
				a := clamp01(p[3])
				o[0], o[1], o[2], o[3] = p[0]*a, p[1]*a, p[2]*a, a
			}
		}
	})
	return dst
}

func unpremultiply(m *Image) {
	w := m.W()
	Bands(m.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := m.Row(y)
			for x := 0; x < w; x++ {
				p := row[x*4 : x*4+4 : x*4+4]
				a := clamp01(p[3])
				p[3] = a
				if a < 1.0/65536 {
					p[0], p[1], p[2] = 0, 0, 0
					continue
				}
				inv := 1 / a
				p[0], p[1], p[2] = max(0, p[0]*inv), max(0, p[1]*inv), max(0, p[2]*inv)
			}
		}
	})
}

func clampNegative(m *Image) {
	Bands(m.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := m.Row(y)
			for i, v := range row {
				if v < 0 {
					row[i] = 0
				}
			}
		}
	})
}
