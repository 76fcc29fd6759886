package privacy

// skinGate answers, for a window of the scanned image, whether enough of its centre
// has skin tone to be worth running a face cascade on. Every annotated face of the
// test photos has skin tone on more than 90% of its centre, and most texture that
// keeps the face cascades busy (brick, glass, foliage, book spines, sky) has little,
// so the gate removes most of the proposal work on busy photos. Photos without colour
// get no gate (see grayAndSkin).
type skinGate struct {
	w, h int
	sum  []uint32 // (w+1) x (h+1) integral of the skin marks
}

// minWindowSkin is the share of a window's centre that must be skin tone.
const minWindowSkin = 0.3

func newSkinGate(skin []uint8, w, h int) *skinGate {
	if skin == nil {
		return nil
	}
	s := w + 1
	g := &skinGate{w: w, h: h, sum: make([]uint32, s*(h+1))}
	for y := 0; y < h; y++ {
		var acc uint32
		for x := 0; x < w; x++ {
			acc += uint32(skin[y*w+x])
			g.sum[(y+1)*s+x+1] = g.sum[y*s+x+1] + acc
		}
	}
	return g
}

// open reports whether the central half (in each direction) of the window at (x, y)
// of size w x h, in scanned pixels, is at least minWindowSkin skin tone.
func (g *skinGate) open(x, y, w, h float32) bool {
	x0 := clampInt(int(x+w/4), 0, g.w)
	y0 := clampInt(int(y+h/4), 0, g.h)
	x1 := clampInt(int(x+3*w/4+0.5), 0, g.w)
	y1 := clampInt(int(y+3*h/4+0.5), 0, g.h)
	if x1 <= x0 || y1 <= y0 {
		return false
	}
	s := g.w + 1
	n := g.sum[y1*s+x1] - g.sum[y0*s+x1] - g.sum[y1*s+x0] + g.sum[y0*s+x0]
	return float32(n) >= minWindowSkin*float32((x1-x0)*(y1-y0))
}
