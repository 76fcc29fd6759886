package privacy

import "math"

// rectF is a rectangle in scanned-image pixels.
type rectF struct{ x, y, w, h float64 }

func (r rectF) cx() float64 { return r.x + r.w/2 }
func (r rectF) cy() float64 { return r.y + r.h/2 }

// expand grows the rectangle by fx of its width left and right and fy of its height
// above and below.
func (r rectF) expand(fx, fy float64) rectF {
	return rectF{r.x - fx*r.w, r.y - fy*r.h, r.w * (1 + 2*fx), r.h * (1 + 2*fy)}
}

// clip intersects the rectangle with [0,w) x [0,h).
func (r rectF) clip(w, h int) rectF {
	x0, y0 := math.Max(r.x, 0), math.Max(r.y, 0)
	x1, y1 := math.Min(r.x+r.w, float64(w)), math.Min(r.y+r.h, float64(h))
	if x1 < x0 {
		x1 = x0
	}
	if y1 < y0 {
		y1 = y0
	}
	return rectF{x0, y0, x1 - x0, y1 - y0}
}

// evidence is what one cascade says about one region: how many windows passed every
// stage.
type evidence struct{ n int }

// local scans small regions of the pyramid at chosen scales. Each worker owns one, so
// its buffers grow to the largest region once and are then reused.
type local struct {
	pyr  *pyramid
	img  gray
	it   integrals
	prep map[*Cascade]*prepared
}

func newLocal(p *pyramid) *local { return &local{pyr: p, prep: map[*Cascade]*prepared{}} }

// sample writes the region r of the scanned image, shrunk by s (s < 1 enlarges) and
// turned by angle radians about the region's centre (the content turns clockwise on
// screen for positive angles, which straightens a face tilted the other way), into
// l.img. It reads from the octave that keeps the shrink below 2x.
func (l *local) sample(r rectF, s, angle float64) {
	oct := 0
	if s >= 2 {
		oct = min(int(math.Floor(math.Log2(s)+1e-9)), len(l.pyr.octaves)-1)
	}
	src := l.pyr.octaves[oct]
	of := float64(int(1) << oct) // scanned pixels per octave pixel
	w := max(int(r.w/s), 1)
	h := max(int(r.h/s), 1)
	l.img.w, l.img.h = w, h
	if cap(l.img.pix) < w*h {
		l.img.pix = make([]uint8, w*h)
	}
	l.img.pix = l.img.pix[:w*h]
	f := s / of
	// Level pixel (x, y) reads octave point c + R(angle) * ((x, y) - level centre) * f.
	cos, sin := math.Cos(angle)*f, math.Sin(angle)*f
	cx, cy := r.cx()/of, r.cy()/of
	hx, hy := float64(w)/2, float64(h)/2
	for y := 0; y < h; y++ {
		dy := float64(y) + 0.5 - hy
		out := l.img.row(y)
		for x := 0; x < w; x++ {
			dx := float64(x) + 0.5 - hx
			out[x] = bilinear(src, cx+cos*dx-sin*dy, cy+sin*dx+cos*dy)
		}
	}
}

// bilinear samples g at continuous coordinates (pixel i spans [i, i+1), so x = 0.5 is
// the centre of column 0), clamping at the borders.
func bilinear(g *gray, x, y float64) uint8 {
	x -= 0.5
	y -= 0.5
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	wx, wy := float32(x-float64(x0)), float32(y-float64(y0))
	a, b := clampInt(x0, 0, g.w-1), clampInt(x0+1, 0, g.w-1)
	r0, r1 := g.row(clampInt(y0, 0, g.h-1)), g.row(clampInt(y0+1, 0, g.h-1))
	top := float32(r0[a]) + wx*(float32(r0[b])-float32(r0[a]))
	bot := float32(r1[a]) + wx*(float32(r1[b])-float32(r1[a]))
	return uint8(top + wy*(bot-top) + 0.5)
}

// localStride is the fixed table stride of local scans; the regions the face panel
// and the eye check scan are at most about 140 pixels wide at their scan scale.
const localStride = 192

// hitFunc receives each passing window of a local scan: its centre in scanned-image
// pixels and its width and height there.
type hitFunc func(cx, cy, w, h float64)

// scanAt runs cascade c over region r, turned by angle, at the scale where its window
// is winPx scanned pixels wide, visiting every position, and reports the passing
// windows.
func (l *local) scanAt(c *Cascade, r rectF, winPx, angle float64, fn hitFunc) {
	s := winPx / float64(c.winW)
	if angle == 0 {
		r = r.clip(l.pyr.octaves[0].w, l.pyr.octaves[0].h)
	}
	if r.w/s < float64(c.winW) || r.h/s < float64(c.winH) {
		return
	}
	l.sample(r, s, angle)
	if l.img.w >= localStride {
		l.it.compute(&l.img, c.hasTilted)
	} else {
		l.it.computeStride(&l.img, localStride, c.hasTilted)
	}
	p := l.prep[c]
	if p == nil {
		p = &prepared{}
		l.prep[c] = p
	}
	p.bind(c, l.it.stride)
	eval := p.evalHaar
	if c.kind == lbpFeatures {
		eval = p.evalLBP
	}
	ww, wh := float64(c.winW)*s, float64(c.winH)*s
	cos, sin := math.Cos(angle)*s, math.Sin(angle)*s
	hx, hy := float64(l.img.w)/2, float64(l.img.h)/2
	for y := 0; y+c.winH <= l.img.h; y++ {
		base := int32(y * l.it.stride)
		for x := 0; x+c.winW <= l.img.w; x++ {
			if eval(&l.it, base+int32(x)) == passed {
				// Window centre, level pixels from the level centre, back to the image.
				dx := float64(x) + float64(c.winW)/2 - hx
				dy := float64(y) + float64(c.winH)/2 - hy
				fn(r.cx()+cos*dx-sin*dy, r.cy()+sin*dx+cos*dy, ww, wh)
			}
		}
	}
}
