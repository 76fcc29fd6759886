package lens

import (
	"context"
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Apply returns src corrected: a new image of the same size and storage (8-bit
// codes stay 8-bit codes, 16-bit stay 16-bit, float32 stays float32). Each output
// pixel samples red, green and blue bilinearly, in linear light, at the map's source
// positions and multiplies them by the vignetting gain there. src must be W×H with 3
// channels. Once ctx is done it stops within a row and returns ctx.Err().
func (c *Correction) Apply(ctx context.Context, src *imaging.Image) (*imaging.Image, error) {
	out, err := c.ApplyAll(ctx, []*imaging.Image{src})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// ApplyRows is Apply for a frame of float32 linear light, calling row with each
// corrected row as soon as it is written, while it is still in the cache: a caller
// that multiplies every pixel by something next (a colour correction) does so
// without another pass over the image. row is called from several goroutines at
// once, each row once.
func (c *Correction) ApplyRows(ctx context.Context, src *imaging.Image, row func(y int, px []float32)) (*imaging.Image, error) {
	if src.Pix == nil {
		return nil, fmt.Errorf("lens: ApplyRows needs a float32 frame")
	}
	out, err := c.applyAll(ctx, []*imaging.Image{src}, row)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Map is where the correction takes output pixel (x, y) from, for green (red and
// blue differ by the chromatic aberration), and the vignetting gain it multiplies
// it by there: the grid's bilinear interpolation, as Apply uses it.
func (c *Correction) Map(x, y float64) (sx, sy, gain float64) {
	u := min(max(x/gridStep, 0), float64(c.gw-1))
	v := min(max(y/gridStep, 0), float64(c.gh-1))
	i, j := min(int(u), max(c.gw-2, 0)), min(int(v), max(c.gh-2, 0))
	i1, j1 := min(i+1, c.gw-1), min(j+1, c.gh-1)
	fu, fv := u-float64(i), v-float64(j)
	var r [3]float64
	for k, q := range []int{2, 3, 6} {
		a, b := float64(c.grid[(j*c.gw+i)*7+q]), float64(c.grid[(j*c.gw+i1)*7+q])
		d, e := float64(c.grid[(j1*c.gw+i)*7+q]), float64(c.grid[(j1*c.gw+i1)*7+q])
		top, bot := a+fu*(b-a), d+fu*(e-d)
		r[k] = top + fv*(bot-top)
	}
	return r[0], r[1], r[2]
}

// ApplyAll corrects brackets that share the lens in one pass, as Apply does each:
// every row's map, and for 8-bit codes its sample positions, are worked out once and
// used for all of them. It holds all the corrected copies at once, so callers pass
// together only frames whose copies fit beside the originals (8-bit brackets). Once
// ctx is done it stops within a row and returns ctx.Err().
func (c *Correction) ApplyAll(ctx context.Context, srcs []*imaging.Image) ([]*imaging.Image, error) {
	return c.applyAll(ctx, srcs, nil)
}

func (c *Correction) applyAll(ctx context.Context, srcs []*imaging.Image, hook func(y int, px []float32)) ([]*imaging.Image, error) {
	w, h := c.W, c.H
	dsts := make([]*imaging.Image, len(srcs))
	// Densely stored frames (stride = 3 × width) take the fast paths: 8-bit codes
	// sampled from positions worked out once per row, in integers, for all of them;
	// a float32 frame alone sampled as its positions are worked out (rowF). 16-bit
	// codes and several float frames take the map row by row.
	fast := w >= 2 && h >= 2
	all8 := true
	for i, src := range srcs {
		if src.W() != w || src.H() != h || src.C != 3 {
			return nil, fmt.Errorf("lens: the correction is for %dx%d RGB, the frame is %dx%d with %d channels",
				w, h, src.W(), src.H(), src.C)
		}
		if err := src.CheckBuffer(); err != nil {
			return nil, err
		}
		dst := &imaging.Image{Stride: w * 3, C: 3, Rect: src.Rect}
		switch {
		case src.Pix8 != nil:
			dst.Pix8 = imaging.MakePixels[uint8](w * h * 3)
		case src.Pix16 != nil:
			dst.Pix16 = imaging.MakePixels[uint16](w * h * 3)
		default:
			dst.Pix = imaging.MakePixels[float32](w * h * 3)
		}
		fast = fast && src.Stride == w*3
		all8 = all8 && src.Pix8 != nil
		dsts[i] = dst
	}
	nw := imaging.Workers()
	maps := make([][]float32, nw) // per worker: one output row's map, 7 floats a pixel
	rows := make([][]float32, nw) // per worker: one linear output row (16-bit storage)
	gridRows := make([][]float32, nw)
	taps := make([][]tap8, nw) // per worker: one row's 8-bit sample positions
	gains := make([][]int32, nw)
	imaging.Bands(h, func(worker, y0, y1 int) {
		if gridRows[worker] == nil {
			rows[worker] = make([]float32, w*3)
			gridRows[worker] = make([]float32, c.gw*7)
			if fast && all8 {
				taps[worker] = make([]tap8, w*3)
				gains[worker] = make([]int32, w)
			} else {
				maps[worker] = make([]float32, w*7)
			}
		}
		m, lin, gr, tp, gn := maps[worker], rows[worker], gridRows[worker], taps[worker], gains[worker]
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			if fast && len(srcs) == 1 && srcs[0].Pix != nil {
				out := dsts[0].Pix[y*w*3 : (y+1)*w*3]
				c.rowF(y, gr, w, h, srcs[0].Pix, out)
				if hook != nil {
					hook(y, out)
				}
				continue
			}
			if fast && all8 {
				c.place8(y, gr, w, h, tp, gn)
				for i, src := range srcs {
					sample8(src.Pix8, w*3, tp, gn, dsts[i].Pix8[y*w*3:(y+1)*w*3])
				}
				continue
			}
			c.mapRow(y, gr, m)
			for i, src := range srcs {
				dst := dsts[i]
				switch {
				case src.Pix8 != nil:
					sample8Slow(src, m, dst.Pix8[y*dst.Stride:y*dst.Stride+w*3])
				case src.Pix16 != nil:
					sample16(src, m, lin)
					dst.PutLinearRow(y, lin)
				default:
					out := dst.Pix[y*dst.Stride : y*dst.Stride+w*3]
					sampleF(src, m, out)
					if hook != nil {
						hook(y, out)
					}
				}
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return dsts, nil
}

// gridRow interpolates row y of the map's grid into gr: the nodes of the grid rows
// above and below it, gw nodes of 7 floats.
func (c *Correction) gridRow(y int, gr []float32) {
	gw := c.gw
	j := y / gridStep
	fy := float32(y-j*gridStep) / gridStep
	j1 := min(j+1, c.gh-1)
	a, b := c.grid[j*gw*7:(j+1)*gw*7], c.grid[j1*gw*7:(j1+1)*gw*7]
	for k := range gr {
		gr[k] = a[k] + fy*(b[k]-a[k])
	}
}

// mapRow interpolates the grid into row y's map: first between the two grid rows
// around y (into gr), then along the row.
func (c *Correction) mapRow(y int, gr, m []float32) {
	gw := c.gw
	c.gridRow(y, gr)
	w := len(m) / 7
	for i := 0; i*gridStep < w; i++ {
		n0 := gr[i*7 : i*7+7 : i*7+7]
		n1 := n0
		if i+1 < gw {
			n1 = gr[(i+1)*7 : (i+1)*7+7 : (i+1)*7+7]
		}
		x0 := i * gridStep
		for k := 0; k < gridStep && x0+k < w; k++ {
			f := float32(k) / gridStep
			o := m[(x0+k)*7 : (x0+k)*7+7 : (x0+k)*7+7]
			for q := range o {
				o[q] = n0[q] + f*(n1[q]-n0[q])
			}
		}
	}
}

// enc8Steps is the resolution of enc8, imaging's own (Encode8 rounds linear light to
// the same 1/16384 steps).
const enc8Steps = 1 << 14

// enc8 maps linear light in enc8Steps steps to 8-bit codes, as imaging.Encode8.
var enc8 = func() (t [enc8Steps + 1]uint8) {
	for i := range t {
		t[i] = imaging.Encode8(float32(i) / enc8Steps)
	}
	return
}()

func encode8(v float32) uint8 {
	if !(v > 0) {
		return 0
	}
	if v >= 1 {
		return 255
	}
	return enc8[int(v*enc8Steps+0.5)]
}

// dec8 is imaging's 8-bit decode table, held here so the inner loop indexes an array.
var dec8 = func() (t [256]float32) {
	for i := range t {
		t[i] = imaging.Decode8(uint8(i))
	}
	return
}()

// at is one channel's source position split into the top-left sample's index
// (relative to the frame) and the weights of the right and lower neighbours. The
// position is clamped to the frame; the neighbour offsets dx, dy are 0 on the last
// column or row.
type at struct {
	off, dx, dy int
	fx, fy      float32
}

func place(sx, sy float32, w, h, stride, ch int) at {
	sx, sy = min(max(sx, 0), float32(w-1)), min(max(sy, 0), float32(h-1))
	x0, y0 := int(sx), int(sy)
	a := at{off: y0*stride + x0*3 + ch, fx: sx - float32(x0), fy: sy - float32(y0)}
	if x0+1 < w {
		a.dx = 3
	}
	if y0+1 < h {
		a.dy = stride
	}
	return a
}

// The samplers interpolate bilinearly in linear light: a cubic kernel keeps a little
// more detail at 100 %, but reads four times the samples, and the step's share of
// develop's time matters more; alignment warps bilinearly too.

// lin8 maps 8-bit codes to linear light in 15-bit fixed point: the 8-bit sampler
// works in integers, as positions in 1/256 pixel and the gain in 1/4096.
var lin8 = func() (t [256]int) {
	for i := range t {
		t[i] = int(imaging.Decode8(uint8(i))*(1<<15) + 0.5)
	}
	return
}()

// tap8 is one output sample's source: the index of the top-left of its four codes
// and the weights of the right and lower ones in 1/256. At the frame's last column or
// row the block steps back one and the weight is 256, so every block lies inside.
type tap8 struct {
	off    int32
	fx, fy uint16
}

// place8 works out row y's sample positions for frames of w×h 8-bit RGB codes (w, h
// at least 2), and each pixel's vignetting gain in 1/4096, straight from the grid:
// between two nodes the positions step by a constant, in 1/65536 pixel, so a pixel
// costs integer adds and shifts. gr is scratch for one grid row.
func (c *Correction) place8(y int, gr []float32, w, h int, tp []tap8, gain []int32) {
	gw := c.gw
	c.gridRow(y, gr)
	s := w * 3
	xMax, yMax := int64(w-1)<<16, int64(h-1)<<16
	for i := 0; i*gridStep < w; i++ {
		n0 := gr[i*7 : i*7+7 : i*7+7]
		n1 := n0
		if i+1 < gw {
			n1 = gr[(i+1)*7 : (i+1)*7+7 : (i+1)*7+7]
		}
		var v, d [7]int64
		for q := 0; q < 6; q++ {
			v[q] = int64(n0[q] * 65536)
			d[q] = int64((n1[q] - n0[q]) * (65536 / gridStep))
		}
		v[6] = int64(n0[6] * 4096 * 65536)
		d[6] = int64((n1[6] - n0[6]) * (4096 * 65536 / gridStep))
		x0 := i * gridStep
		for k := 0; k < gridStep && x0+k < w; k++ {
			x := x0 + k
			gain[x] = int32((v[6] + 1<<15) >> 16)
			t := tp[x*3 : x*3+3 : x*3+3]
			for ch := 0; ch < 3; ch++ {
				px := (min(max(v[2*ch], 0), xMax) + 128) >> 8 // 1/256 pixel, rounded
				py := (min(max(v[2*ch+1], 0), yMax) + 128) >> 8
				sx, fx := int(px>>8), uint16(px&255)
				sy, fy := int(py>>8), uint16(py&255)
				if sx >= w-1 {
					sx, fx = w-2, 256
				}
				if sy >= h-1 {
					sy, fy = h-2, 256
				}
				t[ch] = tap8{off: int32(sy*s + sx*3 + ch), fx: fx, fy: fy}
			}
			for q := range v {
				v[q] += d[q]
			}
		}
	}
}

// sample8 resamples one row of 8-bit codes (stride s) from p at the positions tp, in
// integers: linear light in 15 bits.
func sample8(p []uint8, s int, tp []tap8, gain []int32, out []uint8) {
	for x, g := range gain {
		t := tp[x*3 : x*3+3 : x*3+3]
		o := out[x*3 : x*3+3 : x*3+3]
		for ch := range 3 {
			a := t[ch]
			q := p[a.off : int(a.off)+s+4 : int(a.off)+s+4]
			v00, v01, v10, v11 := lin8[q[0]], lin8[q[3]], lin8[q[s]], lin8[q[s+3]]
			fx, fy := int(a.fx), int(a.fy)
			top := v00<<8 + fx*(v01-v00)
			bot := v10<<8 + fx*(v11-v10)
			v := (top<<8 + fy*(bot-top)) >> 16
			// Linear light to enc8's 1/16384 steps, gain applied and rounded.
			e := (v*int(g) + 1<<12) >> 13
			o[ch] = enc8[min(max(e, 0), enc8Steps)]
		}
	}
}

// rowF resamples row y of one densely stored float32 frame p (w×h RGB, w and h at
// least 2) into out, working out the positions as it goes: a frame corrected alone
// gains nothing from keeping them, and the merge of a tripod set is corrected so.
// Between two nodes every position moves by a constant per pixel; a segment whose
// samples all lie inside the frame (nearly all) skips the clamping.
func (c *Correction) rowF(y int, gr []float32, w, h int, p []float32, out []float32) {
	c.gridRow(y, gr)
	s := w * 3
	xIn, yIn := float32(w-1), float32(h-1) // a block's top-left lies below these
	for i := 0; i*gridStep < w; i++ {
		n0 := gr[i*7 : i*7+7 : i*7+7]
		n1 := n0
		if i+1 < c.gw {
			n1 = gr[(i+1)*7 : (i+1)*7+7 : (i+1)*7+7]
		}
		x0 := i * gridStep
		n := min(gridStep, w-x0)
		var v, d [7]float32
		inside := true
		for q := range 7 {
			v[q] = n0[q]
			d[q] = (n1[q] - n0[q]) * (1.0 / gridStep)
			if q < 6 {
				lim := xIn
				if q&1 == 1 {
					lim = yIn
				}
				last := v[q] + d[q]*float32(n-1)
				inside = inside && v[q] >= 0 && last >= 0 && v[q] < lim && last < lim
			}
		}
		o := out[x0*3 : (x0+n)*3 : (x0+n)*3]
		if !inside {
			for k := range n {
				g := v[6]
				for ch := range 3 {
					a := place(v[2*ch], v[2*ch+1], w, h, s, ch)
					q := p[a.off : a.off+a.dy+a.dx+1 : a.off+a.dy+a.dx+1]
					top := q[0] + a.fx*(q[a.dx]-q[0])
					bot := q[a.dy] + a.fx*(q[a.dy+a.dx]-q[a.dy])
					o[k*3+ch] = (top + a.fy*(bot-top)) * g
				}
				for q := range v {
					v[q] += d[q]
				}
			}
			continue
		}
		// The positions and the gain in locals, so they stay in registers.
		xr, yr, xg, yg, xb, yb, g := v[0], v[1], v[2], v[3], v[4], v[5], v[6]
		dxr, dyr, dxg, dyg, dxb, dyb, dg := d[0], d[1], d[2], d[3], d[4], d[5], d[6]
		for k := range n {
			ix, iy := int(xg), int(yg)
			if int(xr) == ix && int(xb) == ix && int(yr) == iy && int(yb) == iy {
				// The chromatic aberration is within the pixel: one block of four
				// pixels serves all three channels (most of the frame).
				off := iy*s + ix*3
				a := p[off : off+6 : off+6] // two pixels of the upper row
				b := p[off+s : off+s+6 : off+s+6]
				fxr, fyr := xr-float32(ix), yr-float32(iy)
				fxg, fyg := xg-float32(ix), yg-float32(iy)
				fxb, fyb := xb-float32(ix), yb-float32(iy)
				t0, b0 := a[0]+fxr*(a[3]-a[0]), b[0]+fxr*(b[3]-b[0])
				t1, b1 := a[1]+fxg*(a[4]-a[1]), b[1]+fxg*(b[4]-b[1])
				t2, b2 := a[2]+fxb*(a[5]-a[2]), b[2]+fxb*(b[5]-b[2])
				px := o[k*3 : k*3+3 : k*3+3]
				px[0] = (t0 + fyr*(b0-t0)) * g
				px[1] = (t1 + fyg*(b1-t1)) * g
				px[2] = (t2 + fyb*(b2-t2)) * g
			} else {
				px := o[k*3 : k*3+3 : k*3+3]
				px[0] = bilinear(p, s, xr, yr) * g
				px[1] = bilinear(p[1:], s, xg, yg) * g
				px[2] = bilinear(p[2:], s, xb, yb) * g
			}
			xr, yr, xg, yg, xb, yb, g = xr+dxr, yr+dyr, xg+dxg, yg+dyg, xb+dxb, yb+dyb, g+dg
		}
	}
}

// bilinear samples channel 0 of p (RGB rows of stride s) at (x, y), which lie inside
// the frame's last column and row.
func bilinear(p []float32, s int, x, y float32) float32 {
	ix, iy := int(x), int(y)
	fx, fy := x-float32(ix), y-float32(iy)
	off := iy*s + ix*3
	a, b := p[off:off+4:off+4], p[off+s:off+s+4:off+s+4]
	top := a[0] + fx*(a[3]-a[0])
	bot := b[0] + fx*(b[3]-b[0])
	return top + fy*(bot-top)
}

// sample8Slow is sample8 for a frame whose stride differs from its width.
func sample8Slow(src *imaging.Image, m []float32, out []uint8) {
	w, h, s := src.W(), src.H(), src.Stride
	p := src.Pix8
	fw, fh := float32(w-1), float32(h-1)
	for x := 0; x < len(out)/3; x++ {
		mp := m[x*7 : x*7+7 : x*7+7]
		gi := int(mp[6]*4096 + 0.5)
		o := out[x*3 : x*3+3 : x*3+3]
		for ch := 0; ch < 3; ch++ {
			sx := int(min(max(mp[2*ch], 0), fw)*256 + 0.5)
			sy := int(min(max(mp[2*ch+1], 0), fh)*256 + 0.5)
			x0, y0, fx, fy := sx>>8, sy>>8, sx&255, sy&255
			off := y0*s + x0*3 + ch
			dx, dy := 3, s
			if x0+1 >= w {
				dx = 0
			}
			if y0+1 >= h {
				dy = 0
			}
			q := p[off : off+dy+dx+1 : off+dy+dx+1]
			v00, v01, v10, v11 := lin8[q[0]], lin8[q[dx]], lin8[q[dy]], lin8[q[dy+dx]]
			top := v00<<8 + fx*(v01-v00)
			bot := v10<<8 + fx*(v11-v10)
			v := (top<<8 + fy*(bot-top)) >> 16
			e := (v*gi + 1<<12) >> 13
			o[ch] = enc8[min(max(e, 0), enc8Steps)]
		}
	}
}

func sample16(src *imaging.Image, m []float32, out []float32) {
	w, h, s := src.W(), src.H(), src.Stride
	p := src.Pix16
	for x := 0; x < len(out)/3; x++ {
		mp := m[x*7 : x*7+7 : x*7+7]
		g := mp[6]
		o := out[x*3 : x*3+3 : x*3+3]
		for ch := 0; ch < 3; ch++ {
			a := place(mp[2*ch], mp[2*ch+1], w, h, s, ch)
			q := p[a.off : a.off+a.dy+a.dx+1 : a.off+a.dy+a.dx+1]
			v00, v01 := imaging.Decode16(q[0]), imaging.Decode16(q[a.dx])
			v10, v11 := imaging.Decode16(q[a.dy]), imaging.Decode16(q[a.dy+a.dx])
			top := v00 + a.fx*(v01-v00)
			bot := v10 + a.fx*(v11-v10)
			o[ch] = (top + a.fy*(bot-top)) * g
		}
	}
}

func sampleF(src *imaging.Image, m []float32, out []float32) {
	w, h, s := src.W(), src.H(), src.Stride
	p := src.Pix
	for x := 0; x < len(out)/3; x++ {
		mp := m[x*7 : x*7+7 : x*7+7]
		g := mp[6]
		o := out[x*3 : x*3+3 : x*3+3]
		for ch := 0; ch < 3; ch++ {
			a := place(mp[2*ch], mp[2*ch+1], w, h, s, ch)
			q := p[a.off : a.off+a.dy+a.dx+1 : a.off+a.dy+a.dx+1]
			top := q[0] + a.fx*(q[a.dx]-q[0])
			bot := q[a.dy] + a.fx*(q[a.dy+a.dx]-q[a.dy])
			o[ch] = (top + a.fy*(bot-top)) * g
		}
	}
}
