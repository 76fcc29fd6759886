package lens

import (
	"fmt"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Apply returns src corrected: a new image of the same size and storage (8-bit
// codes stay 8-bit codes, 16-bit stay 16-bit, float32 stays float32). Each output
// pixel samples red, green and blue with a Catmull-Rom cubic, in linear light, at the map's source
// positions and multiplies them by the vignetting gain there. src must be W×H with 3
// channels.
func (c *Correction) Apply(src *imaging.Image) (*imaging.Image, error) {
	if src.W() != c.W || src.H() != c.H || src.C != 3 {
		return nil, fmt.Errorf("lens: the correction is for %dx%d RGB, the frame is %dx%d with %d channels",
			c.W, c.H, src.W(), src.H(), src.C)
	}
	if err := src.CheckBuffer(); err != nil {
		return nil, err
	}
	w, h := c.W, c.H
	dst := &imaging.Image{Stride: w * 3, C: 3, Rect: src.Rect}
	switch {
	case src.Pix8 != nil:
		dst.Pix8 = imaging.MakePixels[uint8](w * h * 3)
	case src.Pix16 != nil:
		dst.Pix16 = imaging.MakePixels[uint16](w * h * 3)
	default:
		dst.Pix = imaging.MakePixels[float32](w * h * 3)
	}
	nw := imaging.Workers()
	maps := make([][]float32, nw) // per worker: one output row's map, 7 floats a pixel
	rows := make([][]float32, nw) // per worker: one linear output row (16-bit storage)
	gridRows := make([][]float32, nw)
	imaging.Bands(h, func(worker, y0, y1 int) {
		if maps[worker] == nil {
			maps[worker] = make([]float32, w*7)
			rows[worker] = make([]float32, w*3)
			gridRows[worker] = make([]float32, c.gw*7)
		}
		m, lin, gr := maps[worker], rows[worker], gridRows[worker]
		for y := y0; y < y1; y++ {
			c.mapRow(y, gr, m)
			switch {
			case src.Pix8 != nil:
				sample8(src, m, dst.Pix8[y*dst.Stride:y*dst.Stride+w*3])
			case src.Pix16 != nil:
				sample16(src, m, lin)
				dst.PutLinearRow(y, lin)
			default:
				sampleF(src, m, dst.Pix[y*dst.Stride:y*dst.Stride+w*3])
			}
		}
	})
	return dst, nil
}

// mapRow interpolates the grid into row y's map: first between the two grid rows
// around y (into gr), then along the row.
func (c *Correction) mapRow(y int, gr, m []float32) {
	gw := c.gw
	j := y / gridStep
	fy := float32(y-j*gridStep) / gridStep
	j1 := min(j+1, c.gh-1)
	a, b := c.grid[j*gw*7:(j+1)*gw*7], c.grid[j1*gw*7:(j1+1)*gw*7]
	for k := range gr {
		gr[k] = a[k] + fy*(b[k]-a[k])
	}
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

// cubic returns the four Catmull-Rom tap indices around v along an axis of n samples
// (clamped to the edge) and their weights. Catmull-Rom keeps the detail that a
// bilinear resampling would soften, and it interpolates: a pixel the map leaves in
// place keeps its value.
func cubic(v float32, n int) (i [4]int, w [4]float32) {
	v = min(max(v, 0), float32(n-1))
	f := int(v)
	t := v - float32(f)
	t2, t3 := t*t, t*t*t
	w = [4]float32{-0.5*t3 + t2 - 0.5*t, 1.5*t3 - 2.5*t2 + 1, -1.5*t3 + 2*t2 + 0.5*t, 0.5*t3 - 0.5*t2}
	i = [4]int{max(f-1, 0), f, min(f+1, n-1), min(f+2, n-1)}
	return
}

func sample8(src *imaging.Image, m []float32, out []uint8) {
	w, h, s := src.W(), src.H(), src.Stride
	p := src.Pix8
	for x := 0; x < len(out)/3; x++ {
		mp := m[x*7 : x*7+7 : x*7+7]
		g := mp[6]
		o := out[x*3 : x*3+3 : x*3+3]
		for ch := 0; ch < 3; ch++ {
			xi, wx := cubic(mp[2*ch], w)
			yi, wy := cubic(mp[2*ch+1], h)
			var v float32
			for k, y := range yi {
				r := p[y*s+ch:]
				v += wy[k] * (wx[0]*imaging.Decode8(r[xi[0]*3]) + wx[1]*imaging.Decode8(r[xi[1]*3]) +
					wx[2]*imaging.Decode8(r[xi[2]*3]) + wx[3]*imaging.Decode8(r[xi[3]*3]))
			}
			o[ch] = imaging.Encode8(v * g)
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
			xi, wx := cubic(mp[2*ch], w)
			yi, wy := cubic(mp[2*ch+1], h)
			var v float32
			for k, y := range yi {
				r := p[y*s+ch:]
				v += wy[k] * (wx[0]*imaging.Decode16(r[xi[0]*3]) + wx[1]*imaging.Decode16(r[xi[1]*3]) +
					wx[2]*imaging.Decode16(r[xi[2]*3]) + wx[3]*imaging.Decode16(r[xi[3]*3]))
			}
			o[ch] = max(v*g, 0)
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
			xi, wx := cubic(mp[2*ch], w)
			yi, wy := cubic(mp[2*ch+1], h)
			var v float32
			for k, y := range yi {
				r := p[y*s+ch:]
				v += wy[k] * (wx[0]*r[xi[0]*3] + wx[1]*r[xi[1]*3] + wx[2]*r[xi[2]*3] + wx[3]*r[xi[3]*3])
			}
			// Ringing below black is clipped; above white is kept, as HDR data may be.
			o[ch] = max(v*g, 0)
		}
	}
}
