package sky

import "math"

// Sky pockets: sky seen through a gap between a tree and a building, or between the
// branches of a tree, is enclosed by the foreground, so keepTopConnected drops it and
// the old sky stays in the gap. A pocket the cut labelled sky comes back when it is
// sure to be sky: big enough, of the colour of the open sky nearby (a window that
// reflects the sky is darker or tinted, a blue wall or water differs too), near that
// open sky, blue or bright white, and in good part rimmed by foliage (textured, darker
// than the sky, gradients every way), not by window frames, walls or roofs, whose
// texture runs one way or is absent.
const (
	pocketMinShare = 0.0005  // smallest pocket, of the frame
	pocketReach    = 1.0 / 8 // how far around the pocket the open sky is looked for (of the long edge)
	pocketGap      = 12.0    // colour distance (CIELAB) from the mean of that open sky at most
	pocketFoliage  = 0.4     // share of the pocket's rim that is foliage at least
	pocketRim      = 2       // width of that rim
	pocketCoh      = 0.5     // structure-tensor coherence below which texture runs every way (foliage)
)

// addSkyPockets adds to sky the parts of raw (the last cut, before keepTopConnected)
// that pass the tests above.
func addSkyPockets(sky, raw []bool, f *features) {
	w, h := f.w, f.h
	minN := max(16, int(pocketMinShare*float64(w*h)))
	reach := max(4, int(pocketReach*float64(max(w, h))))
	var skyL float64
	nSky := 0
	for p, s := range sky {
		if s {
			skyL += float64(f.lab[p*3])
			nSky++
		}
	}
	if nSky == 0 {
		return
	}
	skyL /= float64(nSky)
	seen, cur := make([]bool, w*h), make([]bool, w*h)
	var members []int32
	inPocket := func(q int) bool { return raw[q] && !sky[q] }
	for start := range raw {
		if !raw[start] || sky[start] || seen[start] {
			continue
		}
		var x0, y0, x1, y1 int
		members, x0, y0, x1, y1 = flood(start, w, h, 4, inPocket, seen, members)
		if len(members) < minN {
			continue
		}
		var pl, pa, pb float64
		for _, q := range members {
			o := int(q) * 3
			pl, pa, pb = pl+float64(f.lab[o]), pa+float64(f.lab[o+1]), pb+float64(f.lab[o+2])
		}
		n := float64(len(members))
		pl, pa, pb = pl/n, pa/n, pb/n
		if !skyColoured(float32(pl), float32(pa), float32(pb)) {
			continue
		}
		// The open sky around it.
		var sl, sa, sb float64
		ns := 0
		for y := max(0, y0-reach); y <= min(h-1, y1+reach); y++ {
			for x := max(0, x0-reach); x <= min(w-1, x1+reach); x++ {
				if p := y*w + x; sky[p] {
					o := p * 3
					sl, sa, sb = sl+float64(f.lab[o]), sa+float64(f.lab[o+1]), sb+float64(f.lab[o+2])
					ns++
				}
			}
		}
		if ns < minN/4 {
			continue
		}
		inv := 1 / float64(ns)
		if math.Sqrt(sq(pl-sl*inv)+sq(pa-sa*inv)+sq(pb-sb*inv)) > pocketGap {
			continue
		}
		// Its rim: the pixels within pocketRim of it, not in it. (seen also holds the
		// pockets examined before, so the pocket's own pixels are marked apart.)
		for _, q := range members {
			cur[q] = true
		}
		fol, rim := 0, 0
		for y := max(0, y0-pocketRim); y <= min(h-1, y1+pocketRim); y++ {
			for x := max(0, x0-pocketRim); x <= min(w-1, x1+pocketRim); x++ {
				p := y*w + x
				if cur[p] || !pocketNear(cur, w, h, x, y) {
					continue
				}
				rim++
				if f.tex[p] > bgTexMin && float64(f.lab[p*3]) < skyL && coherence(f, x, y) < pocketCoh {
					fol++
				}
			}
		}
		for _, q := range members {
			cur[q] = false
		}
		if float64(fol) < pocketFoliage*float64(rim) {
			continue
		}
		for _, q := range members {
			sky[q] = true
		}
	}
}

// pocketNear reports whether (x, y) lies within pocketRim of a pixel of the pocket
// being examined (marked in cur).
func pocketNear(cur []bool, w, h, x, y int) bool {
	for yy := max(0, y-pocketRim); yy <= min(h-1, y+pocketRim); yy++ {
		for xx := max(0, x-pocketRim); xx <= min(w-1, x+pocketRim); xx++ {
			if cur[yy*w+xx] {
				return true
			}
		}
	}
	return false
}

// coherence is the structure-tensor coherence of L* over the 5 x 5 window around
// (x, y): near 1 where the texture runs one way (a window frame, a roof line), low in
// foliage, whose gradients point every way.
func coherence(f *features, x, y int) float64 {
	w, h := f.w, f.h
	var xx, yy, xy float64
	for j := max(1, y-2); j <= min(h-2, y+2); j++ {
		for i := max(1, x-2); i <= min(w-2, x+2); i++ {
			gx := float64(f.lab[(j*w+i+1)*3] - f.lab[(j*w+i-1)*3])
			gy := float64(f.lab[((j+1)*w+i)*3] - f.lab[((j-1)*w+i)*3])
			xx, yy, xy = xx+gx*gx, yy+gy*gy, xy+gx*gy
		}
	}
	tr := xx + yy
	if tr == 0 {
		return 0
	}
	return (sq(xx-yy) + 4*xy*xy) / (tr * tr)
}
