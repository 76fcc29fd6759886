package imaging

import (
	"context"
	"image"
	"math"
)

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
	out, _ := ResizeCtx(context.Background(), src, w, h) // never done: no error
	return out
}

// ResizeCtx is Resize for a caller that may cancel it: once ctx is done it stops
// within a few rows and returns ctx.Err().
func ResizeCtx(ctx context.Context, src *Image, w, h int) (*Image, error) {
	sw, sh, c := src.W(), src.H(), src.C
	if w <= 0 || h <= 0 || sw == 0 || sh == 0 {
		return New(max(w, 0), max(h, 0), c), nil
	}
	if w == sw && h == sh {
		return src.Clone(), nil
	}
	if c == 4 {
		src = premultiplied(src)
	}
	kx, ky := newKernel(sw, w), newKernel(sh, h)
	// Run the cheaper order: horizontal first costs sh*w*taps_x + h*w*taps_y.
	hFirst := float64(sh)*float64(w)*float64(kx.taps)+float64(h)*float64(w)*float64(ky.taps) <=
		float64(h)*float64(sw)*float64(ky.taps)+float64(h)*float64(w)*float64(kx.taps)
	var out *Image
	final := c != 4 // the last pass clamps negative ringing; alpha images clamp on unpremultiply
	if hFirst {
		tmp := New(w, sh, c)
		if err := resizeH(ctx, src, tmp, kx, false); err != nil {
			return nil, err
		}
		out = New(w, h, c)
		if err := resizeV(ctx, tmp, out, ky, final); err != nil {
			return nil, err
		}
	} else {
		tmp := New(sw, h, c)
		if err := resizeV(ctx, src, tmp, ky, false); err != nil {
			return nil, err
		}
		out = New(w, h, c)
		if err := resizeH(ctx, tmp, out, kx, final); err != nil {
			return nil, err
		}
	}
	if c == 4 {
		unpremultiply(out)
	}
	return out, nil
}

// ResizeFunc resamples a w×h image with c channels to dw×dh like Resize, but reads the
// source through row(y, buf), which must fill buf (w*c samples) with linear-light row
// y. Decoders use it to resize straight from their own 8- or 16-bit buffers without
// first building the full-size float image: each worker converts one source row at a
// time into its own scratch row. row is called concurrently, with distinct buffers.
func ResizeFunc(w, h, c, dw, dh int, row func(y int, buf []float32)) *Image {
	if dw <= 0 || dh <= 0 || w <= 0 || h <= 0 {
		return New(max(dw, 0), max(dh, 0), c)
	}
	kx, ky := newKernel(w, dw), newKernel(h, dh)
	tmp := New(dw, h, c)
	scratch := make([][]float32, Workers())
	Bands(h, func(worker, y0, y1 int) {
		buf := scratch[worker]
		if buf == nil {
			buf = make([]float32, w*c)
			scratch[worker] = buf
		}
		src := &Image{Pix: buf, Stride: w * c, C: c, Rect: image.Rect(0, 0, w, 1)}
		for y := y0; y < y1; y++ {
			row(y, buf)
			if c == 4 {
				premultiplyRow(buf)
			}
			resizeRow(src.Row(0), tmp.Row(y), kx, c, false)
		}
	})
	out := New(dw, dh, c)
	_ = resizeV(context.Background(), tmp, out, ky, c != 4) // never done: no error
	if c == 4 {
		unpremultiply(out)
	}
	return out
}

// resizeH resamples every row of src into dst's width. clampNeg zeroes negative
// results (ringing below black) on the final pass. Once ctx is done it stops within a
// few rows and returns ctx.Err().
func resizeH(ctx context.Context, src, dst *Image, k kernel, clampNeg bool) error {
	return BandsCtx(ctx, src.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			resizeRow(src.Row(y), dst.Row(y), k, src.C, clampNeg)
		}
	})
}

// resizeRow resamples one row of c-channel pixels into out.
func resizeRow(in, out []float32, k kernel, c int, clampNeg bool) {
	dw, taps := len(out)/c, k.taps
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
			px = px[:len(ws)]
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
	if clampNeg {
		clampRow(out)
	}
}

// resizeV resamples columns: each output row is a weighted sum of whole source rows,
// which streams through memory in order. Taps are taken four at a time so each output
// sample is loaded and stored once per four source rows. Once ctx is done it stops
// within a few rows and returns ctx.Err().
func resizeV(ctx context.Context, src, dst *Image, k kernel, clampNeg bool) error {
	taps := k.taps
	return BandsCtx(ctx, dst.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			out := dst.Row(y)
			n := len(out)
			ws := k.w[y*taps : y*taps+taps]
			s0 := k.start[y]
			t := 0
			for ; t+4 <= taps; t += 4 {
				w0, w1, w2, w3 := ws[t], ws[t+1], ws[t+2], ws[t+3]
				r0 := src.Row(s0 + t)[:n]
				r1 := src.Row(s0 + t + 1)[:n]
				r2 := src.Row(s0 + t + 2)[:n]
				r3 := src.Row(s0 + t + 3)[:n]
				if t == 0 {
					for i := range out {
						out[i] = w0*r0[i] + w1*r1[i] + w2*r2[i] + w3*r3[i]
					}
					continue
				}
				for i := range out {
					out[i] += w0*r0[i] + w1*r1[i] + w2*r2[i] + w3*r3[i]
				}
			}
			for ; t < taps; t++ {
				wt := ws[t]
				r := src.Row(s0 + t)[:n]
				if t == 0 {
					for i := range out {
						out[i] = wt * r[i]
					}
					continue
				}
				for i := range out {
					out[i] += wt * r[i]
				}
			}
			if clampNeg {
				clampRow(out)
			}
		}
	})
}

func clampRow(row []float32) {
	for i, v := range row {
		if v < 0 {
			row[i] = 0
		}
	}
}

func premultiplyRow(row []float32) {
	for i := 0; i+4 <= len(row); i += 4 {
		p := row[i : i+4 : i+4]
		a := Clamp01(p[3])
		p[0], p[1], p[2], p[3] = p[0]*a, p[1]*a, p[2]*a, a
	}
}

func premultiplied(src *Image) *Image {
	dst := New(src.W(), src.H(), 4)
	w := src.W()
	Bands(src.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			in, out := src.Row(y), dst.Row(y)
			for x := 0; x < w; x++ {
				p, o := in[x*4:x*4+4:x*4+4], out[x*4:x*4+4:x*4+4]
				a := Clamp01(p[3])
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
				a := Clamp01(p[3])
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
