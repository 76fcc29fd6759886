package align

import (
	"context"
	"math"
	"sync"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Warp resamples img so that the result at (x, y) is img at t's source position of
// (x, y), bilinearly, repeating edge pixels outside the frame. The result has img's
// size and channels. A narrow img (sRGB codes) is interpolated in linear light and
// gives a narrow result with 16-bit codes. Once ctx is done it stops within a row
// and returns ctx.Err().
func Warp(ctx context.Context, img *imaging.Image, t Transform) (*imaging.Image, error) {
	var out *imaging.Image
	if img.IsNarrow() {
		out = imaging.NarrowLike(img.W(), img.H(), img.C)
		warpNarrow(ctx, out, img, t)
	} else {
		out = imaging.New(img.W(), img.H(), img.C)
		WarpInto(ctx, out, img, t)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// isTranslation reports whether t is a pure shift.
func isTranslation(t Transform) bool {
	m := t.M
	return t.Mesh == nil && m[6] == 0 && m[7] == 0 && m[0] == 1 && m[1] == 0 && m[3] == 0 && m[4] == 1 && m[8] == 1
}

// Linear values of 8- and 16-bit sRGB codes, for sampling narrow images.
var (
	linear8 = func() []float32 {
		t := make([]float32, 256)
		for i := range t {
			t[i] = imaging.Decode8(uint8(i))
		}
		return t
	}()
	linear16 = sync.OnceValue(func() []float32 {
		t := make([]float32, 65536)
		for i := range t {
			t[i] = imaging.Decode16(uint16(i))
		}
		return t
	})
)

// warpNarrow is WarpInto for a narrow img into a narrow 16-bit dst: rows are
// resampled in linear light into per-band scratch and encoded once.
func warpNarrow(ctx context.Context, dst, img *imaging.Image, t Transform) {
	w, h, c := img.W(), img.H(), img.C
	if isTranslation(t) {
		ix := int(math.Floor(t.M[2]))
		tx := float32(t.M[2] - float64(ix))
		imaging.Bands(h, func(_, y0, y1 int) {
			lin := make([]float32, w*c)
			tmp0, tmp1 := make([]float32, w*c), make([]float32, w*c)
			for y := y0; y < y1; y++ {
				if imaging.Canceled(ctx) {
					return
				}
				sy := math.Min(math.Max(float64(y)+t.M[5], 0), float64(h-1))
				iy := int(sy)
				ty := float32(sy - float64(iy))
				shiftRow(tmp0, img.LinearRow(iy, lin), ix, tx, w, c)
				if ty != 0 && iy+1 < h {
					shiftRow(tmp1, img.LinearRow(iy+1, lin), ix, tx, w, c)
					for i := range tmp0 {
						tmp0[i] += ty * (tmp1[i] - tmp0[i])
					}
				}
				dst.PutLinearRow(y, tmp0)
			}
		})
		return
	}
	imaging.Bands(h, func(_, y0, y1 int) {
		var mdx, mdy []float64
		if t.Mesh != nil {
			mdx, mdy = make([]float64, w), make([]float64, w)
		}
		out := make([]float32, w*c)
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			if img.Pix8 != nil {
				warpRow(out, img.Pix8, img.Stride, linear8, t, y, w, h, c, mdx, mdy)
			} else {
				warpRow(out, img.Pix16, img.Stride, linear16(), t, y, w, h, c, mdx, mdy)
			}
			dst.PutLinearRow(y, out)
		}
	})
}

// warpRow resamples output row y of WarpInto from sRGB codes pix (decoded through
// lin) into linear samples out.
func warpRow[T uint8 | uint16](out []float32, pix []T, stride int, lin []float32, t Transform, y, w, h, c int, mdx, mdy []float64) {
	m, mesh := t.M, t.Mesh
	maxX, maxY := float64(w-1), float64(h-1)
	fy := float64(y)
	if mesh != nil {
		mesh.row(fy, mdx, mdy)
	}
	hx, hy, hw := m[1]*fy+m[2], m[4]*fy+m[5], m[7]*fy+m[8]
	for x := 0; x < w; x++ {
		fx := float64(x)
		iw := 1 / (m[6]*fx + hw)
		sx := (m[0]*fx + hx) * iw
		sy := (m[3]*fx + hy) * iw
		if mesh != nil {
			sx += mdx[x]
			sy += mdy[x]
		}
		sx = math.Min(math.Max(sx, 0), maxX)
		sy = math.Min(math.Max(sy, 0), maxY)
		x0, y0 := int(sx), int(sy)
		tx, ty := float32(sx-float64(x0)), float32(sy-float64(y0))
		x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
		r0, r1 := pix[y0*stride:], pix[y1*stride:]
		a, b := x0*c, x1*c
		o := out[x*c : x*c+c]
		for k := range o {
			p00, p01 := lin[r0[a+k]], lin[r0[b+k]]
			p10, p11 := lin[r1[a+k]], lin[r1[b+k]]
			top := p00 + tx*(p01-p00)
			bot := p10 + tx*(p11-p10)
			o[k] = top + ty*(bot-top)
		}
	}
}

// WarpInto is Warp writing into dst, which must have img's size and channel count
// and must not share img's pixels. Once ctx is done it stops within a row, leaving
// dst partly written.
func WarpInto(ctx context.Context, dst, img *imaging.Image, t Transform) {
	m, mesh := t.M, t.Mesh
	if isTranslation(t) {
		translate(ctx, dst, img, m[2], m[5])
		return
	}
	w, h, c := img.W(), img.H(), img.C
	maxX, maxY := float64(w-1), float64(h-1)
	imaging.Bands(h, func(_, y0, y1 int) {
		var mdx, mdy []float64
		if mesh != nil {
			mdx, mdy = make([]float64, w), make([]float64, w)
		}
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			out := dst.Row(y)
			fy := float64(y)
			if mesh != nil {
				mesh.row(fy, mdx, mdy)
			}
			// Homogeneous source coordinates advance linearly along the row.
			hx, hy, hw := m[1]*fy+m[2], m[4]*fy+m[5], m[7]*fy+m[8]
			for x := 0; x < w; x++ {
				fx := float64(x)
				iw := 1 / (m[6]*fx + hw)
				sx := (m[0]*fx + hx) * iw
				sy := (m[3]*fx + hy) * iw
				if mesh != nil {
					sx += mdx[x]
					sy += mdy[x]
				}
				sx = math.Min(math.Max(sx, 0), maxX)
				sy = math.Min(math.Max(sy, 0), maxY)
				x0, y0 := int(sx), int(sy)
				tx, ty := float32(sx-float64(x0)), float32(sy-float64(y0))
				x1, y1 := min(x0+1, w-1), min(y0+1, h-1)
				r0, r1 := img.Row(y0), img.Row(y1)
				a, b := x0*c, x1*c
				o := out[x*c : x*c+c]
				for k := range o {
					top := r0[a+k] + tx*(r0[b+k]-r0[a+k])
					bot := r1[a+k] + tx*(r1[b+k]-r1[a+k])
					o[k] = top + ty*(bot-top)
				}
			}
		}
	})
}

// translate is the separable fast path for a pure shift by (dx, dy).
func translate(ctx context.Context, dst, img *imaging.Image, dx, dy float64) {
	w, h, c := img.W(), img.H(), img.C
	ix := int(math.Floor(dx))
	tx := float32(dx - float64(ix))
	imaging.Bands(h, func(_, y0, y1 int) {
		tmp0 := make([]float32, w*c)
		tmp1 := make([]float32, w*c)
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			sy := math.Min(math.Max(float64(y)+dy, 0), float64(h-1))
			iy := int(sy)
			ty := float32(sy - float64(iy))
			shiftRow(tmp0, img.Row(iy), ix, tx, w, c)
			out := dst.Row(y)
			if ty == 0 || iy+1 >= h {
				copy(out, tmp0)
				continue
			}
			shiftRow(tmp1, img.Row(iy+1), ix, tx, w, c)
			for i := range out {
				out[i] = tmp0[i] + ty*(tmp1[i]-tmp0[i])
			}
		}
	})
}

// shiftRow writes src sampled at x+ix+tx for every x, clamping at the ends.
func shiftRow(dst, src []float32, ix int, tx float32, w, c int) {
	for x := 0; x < w; x++ {
		x0 := min(max(x+ix, 0), w-1)
		x1 := min(max(x+ix+1, 0), w-1)
		a, b := src[x0*c:x0*c+c], src[x1*c:x1*c+c]
		o := dst[x*c : x*c+c]
		for k := range o {
			o[k] = a[k] + tx*(b[k]-a[k])
		}
	}
}

// row fills dx and dy with the mesh displacement along row y of its frame.
func (m *Mesh) row(y float64, dx, dy []float64) {
	gy := math.Min(math.Max(y/float64(m.H-1)*float64(m.Rows-1), 0), float64(m.Rows-1))
	j := min(int(gy), m.Rows-2)
	ty := gy - float64(j)
	for x := range dx {
		gx := math.Min(math.Max(float64(x)/float64(m.W-1)*float64(m.Cols-1), 0), float64(m.Cols-1))
		i := min(int(gx), m.Cols-2)
		tx := gx - float64(i)
		a, b := m.D[j*m.Cols+i], m.D[j*m.Cols+i+1]
		c, d := m.D[(j+1)*m.Cols+i], m.D[(j+1)*m.Cols+i+1]
		dx[x] = (1-ty)*((1-tx)*a[0]+tx*b[0]) + ty*((1-tx)*c[0]+tx*d[0])
		dy[x] = (1-ty)*((1-tx)*a[1]+tx*b[1]) + ty*((1-tx)*c[1]+tx*d[1])
	}
}
