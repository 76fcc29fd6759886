package sky

import (
	"context"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Edge refinement at the guide resolution. The coarse matte (sky@4.0.0's guided
// filter) becomes a trimap: sure sky, sure ground and an unknown band around their
// boundary, a few pixels wide along roof lines and walls and wide where the ground
// beside it is foliage: textured, with gradients every way (structure-tensor
// coherence), darker than the sky, reached from the boundary through such pixels, with
// the smooth sky pockets it encloses. In the whole unknown band every pixel is taken
// as a mix I = alpha*S + (1-alpha)*F of the local sky colour S and the local ground
// colour F (each averaged over the sure pixels nearby, in the narrowest window that
// holds enough of them), and alpha is its projection on the segment from F to S: a
// skyline pixel half covered by a roof gets alpha near 0.5 wherever the guided filter
// put it. Where S and F are too alike to tell apart or the pixel lies off the segment
// (a lit branch, a white wall seen through the leaves, a pale flashing) the coarse
// matte is kept, except on a pale, washed-out strip of some thickness whose colour the
// open sky nearby does not show (a grey metal flashing on a cornice under a deep blue
// sky, which the labelling took as sky): that is ground (see skyPalette). A guided filter with a
// small window and low regularisation carries the result to full resolution.
//
// The same local colours let the compositor estimate each edge pixel's foreground
// colour instead of mixing the old sky into it.
const (
	bandBase     = 1.0 / 256 // half-width of the unknown band, of the long edge (at least 2 px)
	bandBusy     = 1.0 / 8   // and how far it reaches into foliage
	busyTex      = 0.03      // mean sRGB luma gradient from which the boundary counts as busy
	busyWin      = 4         // radius of the texture window
	busyLuma     = 0.8       // a canopy's surroundings are darker than this share of the sky's luma
	busyCoh      = 0.45      // structure-tensor coherence above which texture runs one way (not foliage)
	spreadSigma  = 0.04      // sky-ground difference (linear) at which the colour model is half trusted
	offLine      = 0.3       // distance from the sky-ground segment, of its length, that drops the colour model
	refineRadius = 1.0 / 512 // guided filter window after the refinement, of the long edge (at least 1 px)
	refineEps    = 1e-4      // and its regularisation
	refineLo     = 0         // stretch of the refined alpha
	refineHi     = 0.98
	fgPrior      = 0.2  // weight of the local ground colour in the foreground estimate, times alpha
	enoughShare  = 0.05 // share of a window's pixels that are sure for its mean to stand alone
	spillReach   = 2    // guide pixels beyond the matte whose colour is cleaned of sky spill
	groundSkyGap = 20   // ground pixels this close (CIELAB) to the local old sky are not sampled as ground
)

// bandReach is the half-width of the wide band in guide pixels.
func bandReach(w, h int) int { return max(2, int(math.Round(float64(max(w, h))*bandBusy))) }

// refine turns a.mask into the refined alpha and fills a.skyLocal and a.fgLocal.
func (a *analysis) refine(ctx context.Context) error {
	g := a.guide
	w, h := g.W(), g.H()
	n := w * h
	long := max(w, h)
	// The coarse matte: sky@4.0.0's guided filter, at the guide resolution.
	coarse := buildMatte(w, h, g, a.mask, guideRadius, guideEps, alphaLo, alphaHi)
	mask := make([]float32, n)
	if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			coarse.alphaRow(y, g.Row(y), g.C, mask[y*w:y*w+w])
		}
	}); err != nil {
		return err
	}
	// Trimap.
	hard := make([]bool, n)
	for p, m := range mask {
		hard[p] = m >= 0.5
	}
	edge := make([]bool, n)
	if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				p := y*w + x
				s := hard[p]
				edge[p] = (x > 0 && hard[p-1] != s) || (x < w-1 && hard[p+1] != s) ||
					(y > 0 && hard[p-w] != s) || (y < h-1 && hard[p+w] != s)
			}
		}
	}); err != nil {
		return err
	}
	rb := max(2, int(math.Round(float64(long)*bandBase)))
	rw := max(rb, bandReach(w, h))
	nearB, nearW := dilate(edge, w, h, rb), dilate(edge, w, h, rw)
	// Texture and structure-tensor coherence of the ground near the boundary: foliage
	// is textured with gradients every way, roofs and walls are smooth or run one way.
	var st [5][]float32 // |grad|, gx^2, gy^2, gx*gy, luma
	for i := range st {
		st[i] = make([]float32, n)
	}
	if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			r0, r1 := g.Row(y), g.Row(min(y+1, h-1))
			for x := 0; x < w; x++ {
				p := y*w + x
				if !nearW[p] {
					continue
				}
				i, j := x*g.C, min(x+1, w-1)*g.C
				l := lumaS(r0[i:])
				st[4][p] = l
				if hard[p] {
					continue // the texture of the ground only
				}
				gx, gy := lumaS(r0[j:])-l, lumaS(r1[i:])-l
				st[0][p] = abs32(gx) + abs32(gy)
				st[1][p], st[2][p], st[3][p] = gx*gx, gy*gy, gx*gy
			}
		}
	}); err != nil {
		return err
	}
	for i := range st {
		boxMean(st[i], st[i], w, h, busyWin)
	}
	tex, busy := st[0], make([]bool, n)
	skyL := lumaS(a.oldMean[:])
	for p := range tex {
		xx, yy, xy := st[1][p], st[2][p], st[3][p]
		if tr := xx + yy; tr > 0 && ((xx-yy)*(xx-yy)+4*xy*xy)/(tr*tr) > busyCoh {
			tex[p] = 0 // one direction: a roof line, siding, a fence
		}
		if st[4][p] > busyLuma*skyL {
			tex[p] = 0 // brighter than a canopy against this sky: stucco, gravel, a lit wall
		}
	}
	// The busy band: foliage pixels reached from the edge through foliage within rw
	// steps, so that the sky seen through a canopy is found but a textured wall that
	// merely lies near a tree is not.
	bfs := make([]int32, 0, 1024)
	depth := make([]int16, n)
	for p := range edge {
		if edge[p] && tex[p] > busyTex {
			busy[p] = true
			depth[p] = 1
			bfs = append(bfs, int32(p))
		}
	}
	for i := 0; i < len(bfs); i++ {
		p := int(bfs[i])
		if int(depth[p]) > rw {
			continue
		}
		x, y := p%w, p/w
		for _, q := range [4]int{p - 1, p + 1, p - w, p + w} {
			if (q == p-1 && x == 0) || (q == p+1 && x == w-1) || (q == p-w && y == 0) || (q == p+w && y == h-1) {
				continue
			}
			if !busy[q] && nearW[q] && tex[q] > busyTex {
				busy[q] = true
				depth[q] = depth[p] + 1
				bfs = append(bfs, int32(q))
			}
		}
	}
	fillHoles(busy, w, h, rw*rw, bfs[:0])
	if err := ctx.Err(); err != nil {
		return err
	}
	// The colours are sampled outside the narrow band: inside a canopy the leaves
	// themselves are the ground colour. Sky seen through the leaves that the labelling
	// left on the ground side is no ground sample: it would make the ground colour,
	// and so every foreground estimate near it, cyan.
	sample := make([]bool, n)
	for p := range sample {
		m := mask[p]
		sample[p] = !nearB[p] && (m <= 0.02 || m >= 0.98)
	}
	// Local sky and ground colours over the sure pixels.
	rs, rl := 2*rb+2, 2*rw+2
	var planes [8][]float32 // sky r, g, b, weight, ground r, g, b, weight
	for i := range planes {
		planes[i] = make([]float32, n)
	}
	if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := g.Row(y)
			for x := 0; x < w; x++ {
				p := y*w + x
				if !sample[p] {
					continue
				}
				o := 0
				i := x * g.C
				if !hard[p] {
					o = 4
					if nearW[p] && skyLike(row[i:i+3], a.oldSky, x, y, w, h) {
						continue
					}
				}
				planes[o][p], planes[o+1][p], planes[o+2][p], planes[o+3][p] = row[i], row[i+1], row[i+2], 1
			}
		}
	}); err != nil {
		return err
	}
	// From the widest window to the narrowest, each scale's mean replaces the wider
	// one's as far as its window holds enough sure pixels: a pocket deep in a canopy
	// gets the sky colour from around the tree, a skyline pixel the sky right above it.
	scales := [3]int{rl, min(4*rs, rl), rs}
	var col [6][]float32 // sky r, g, b, ground r, g, b
	var got [2][]bool    // a colour was found
	var tmp [4][]float32
	for i := range col {
		col[i] = make([]float32, n)
	}
	for i := range tmp {
		tmp[i] = make([]float32, n)
	}
	for side := 0; side < 2; side++ {
		got[side] = make([]bool, n)
		for si, r := range scales {
			for k := range tmp {
				boxMean(tmp[k], planes[side*4+k], w, h, r)
			}
			if err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
				for p := y0 * w; p < y1*w; p++ {
					wt := tmp[3][p]
					if wt <= 1e-6 {
						continue
					}
					f := float32(1)
					if si > 0 && got[side][p] {
						f = min(1, wt/enoughShare)
					}
					for c := 0; c < 3; c++ {
						q := col[side*3+c]
						q[p] += f * (tmp[c][p]/wt - q[p])
					}
					got[side][p] = true
				}
			}); err != nil {
				return err
			}
		}
	}
	// The open sky's own colours, away from the boundary, for pixels that are no mix
	// of the local sky and ground (see skyPalette).
	pal := newSkyPalette(g, mask, hard, edge, rb)
	if err := ctx.Err(); err != nil {
		return err
	}
	a.skyLocal, a.fgLocal = imaging.New(w, h, 3), imaging.New(w, h, 3)
	out := make([]float32, n)
	// The coarse matte's part of out, and how little the open sky matches the pixel.
	rest, odd := make([]float32, n), make([]float32, n)
	err := imaging.BandsCtx(ctx, h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := g.Row(y)
			sr, fr := a.skyLocal.Row(y), a.fgLocal.Row(y)
			oy := min(y*a.oldSky.H()/h, a.oldSky.H()-1)
			orow := a.oldSky.Row(oy)
			for x := 0; x < w; x++ {
				p := y*w + x
				i := x * g.C
				var s, f [3]float32
				for c := 0; c < 3; c++ {
					if got[0][p] {
						s[c] = col[c][p]
					} else {
						s[c] = orow[min(x*a.oldSky.W()/w, a.oldSky.W()-1)*3+c]
					}
					if got[1][p] {
						f[c] = col[3+c][p]
					} else {
						f[c] = imaging.Clamp01(row[i+c])
					}
				}
				sr[x*3], sr[x*3+1], sr[x*3+2] = s[0], s[1], s[2]
				fr[x*3], fr[x*3+1], fr[x*3+2] = f[0], f[1], f[2]
				m := mask[p]
				if !(busy[p] || nearB[p]) || !got[1][p] {
					out[p] = m
					continue
				}
				var dd, proj float32
				var d, v [3]float32
				for c := 0; c < 3; c++ {
					d[c] = s[c] - f[c]
					v[c] = imaging.Clamp01(row[i+c]) - f[c]
					dd += d[c] * d[c]
					proj += v[c] * d[c]
				}
				if dd <= 0 {
					out[p] = m
					continue
				}
				t := proj / dd
				ac := imaging.Clamp01(t)
				var res float32
				for c := 0; c < 3; c++ {
					e := v[c] - ac*d[c]
					res += e * e
				}
				conf := dd / (dd + spreadSigma*spreadSigma)
				lim := offLine * offLine * dd
				conf *= float32(math.Exp(float64(-res / lim)))
				out[p] = conf*ac + (1-conf)*m
				if keep := (1 - conf) * m; keep > 0.02 {
					// No mix of the local sky and ground: the coarse matte holds only
					// as far as the open sky nearby shows the same colour.
					if k := pal.match(row[i:i+3], x, y, s); k < 1 {
						rest[p], odd[p] = keep, 1-k
					}
				}
			}
		}
	})
	if err != nil {
		return err
	}
	// Only surfaces of some thickness are taken out (see skyPalette).
	surf := make([]bool, n)
	for p, v := range odd {
		surf[p] = v > 0.5
	}
	surf = dilate(erode(surf, w, h, oddOpen), w, h, oddOpen+oddFringe)
	keepStrips(surf, w, h, bfs[:0])
	for p, v := range odd {
		if v > 0 && surf[p] {
			out[p] -= rest[p] * v
		}
	}
	a.mask = out
	soft := make([]bool, n)
	for p, v := range out {
		soft[p] = v > 0.02
	}
	a.near = dilate(soft, w, h, spillReach)
	return nil
}

// lumaS is the sRGB luma of the linear pixel at px.
func lumaS(px []float32) float32 {
	return 0.299*srgb(px[0]) + 0.587*srgb(px[1]) + 0.114*srgb(px[2])
}

// refinedRadius is the guided filter window after refinement, in guide pixels.
func refinedRadius(w, h int) int {
	return max(1, int(math.Round(float64(max(w, h))*refineRadius)))
}

// fillHoles sets the parts of m's complement smaller than maxArea pixels: smooth sky
// pockets inside a canopy join the foliage band around them. queue is scratch.
func fillHoles(m []bool, w, h, maxArea int, queue []int32) {
	seen := make([]bool, len(m))
	inHole := func(q int) bool { return !m[q] }
	for s := range m {
		if m[s] || seen[s] {
			continue
		}
		queue, _, _, _, _ = flood(s, w, h, 4, inHole, seen, queue)
		if len(queue) <= maxArea {
			for _, p := range queue {
				m[p] = true
			}
		}
	}
}

// skyLike reports whether the linear pixel px at guide position (x, y) of a w x h
// guide is within groundSkyGap (CIELAB) of the local old sky: sky seen through a
// canopy that the labelling left on the ground side.
func skyLike(px []float32, oldSky *imaging.Image, x, y, w, h int) bool {
	o := oldSky.Row(min(y*oldSky.H()/h, oldSky.H()-1))[min(x*oldSky.W()/w, oldSky.W()-1)*3:]
	l, aa, b := labOf(max(px[0], 0), max(px[1], 0), max(px[2], 0))
	sl, sa, sb := labOf(o[0], o[1], o[2])
	dl, da, db := l-sl, aa-sa, b-sb
	return dl*dl+da*da+db*db < groundSkyGap*groundSkyGap
}

// Colours that are no mix of the local sky and ground keep the coarse matte only
// where the open sky shows that colour itself: a cloud that meets the roof has more of
// it higher up, a metal flashing a few pixels thick along a cornice has only deep blue
// above it. The open sky is summarised by the mean colours of small blocks of sure sky
// pixels at least paletteGap band widths from the boundary, so that the flashing
// itself, which the labelling took as sky, is not among them. Only pale, washed-out
// colours under a clearly blue sky are judged so (a lit branch or a wall seen through
// leaves is darker and stays with the coarse matte, an overcast sky tells nothing), and
// only surfaces that survive an opening and run as long, thin strips (keepStrips): a
// one- or two-pixel bright rim along a roof (a sharpening overshoot) would stay as a
// pale line over the new sky, and a cloud glimpsed through leaves or grass as a pale
// blob.
const (
	paletteGap    = 3    // band widths between the boundary and the sky sampled
	paletteReach  = 3    // and how far beyond that the blocks are searched, in gaps
	paletteNear   = 8.0  // colour distance (CIELAB) to the nearest block that is sky
	paletteFar    = 16.0 // and from which it is not
	paleSkyChroma = 12.0 // the local sky's chroma (CIELAB) at least: a blue sky
	paleChroma    = 0.6  // a pale surface's chroma is at most this share of the sky's
	paleDarker    = 5.0  // and its L* at most this far below the sky's
	oddOpen       = 1    // opening radius a surface must survive (guide pixels)
	oddFringe     = 1    // and the pixels beside it that go with it
	stripElong    = 4.5  // a surface's length is at least this many times its thickness
)

// keepStrips clears the parts of m that are no long, thin strip: a flashing or coping
// runs along the roof line, a cloud glimpsed through leaves or grass is a blob. queue
// is scratch.
func keepStrips(m []bool, w, h int, queue []int32) {
	seen := make([]bool, len(m))
	inStrip := func(q int) bool { return m[q] }
	for s := range m {
		if !m[s] || seen[s] {
			continue
		}
		var x0, y0, x1, y1 int
		queue, x0, y0, x1, y1 = flood(s, w, h, 8, inStrip, seen, queue)
		// Length along the bounding box's diagonal, mean thickness across it.
		length := math.Hypot(float64(x1-x0+1), float64(y1-y0+1))
		if length*length < stripElong*float64(len(queue)) {
			for _, p := range queue {
				m[p] = false
			}
		}
	}
}

// erode shrinks a mask by a square of radius r (the frame border counts as set).
func erode(m []bool, w, h, r int) []bool {
	inv := make([]bool, len(m))
	for p, v := range m {
		inv[p] = !v
	}
	out := dilate(inv, w, h, r)
	for p, v := range out {
		out[p] = !v
	}
	return out
}

// skyPalette holds the CIELAB mean of every block of open sky.
type skyPalette struct {
	bw, bh, blk int
	lab         []float32 // L, a, b per block
	ok          []bool    // the block holds enough open sky
	reach       int       // search radius in blocks
}

func newSkyPalette(g *imaging.Image, mask []float32, hard, edge []bool, rb int) *skyPalette {
	w, h := g.W(), g.H()
	gap := paletteGap * rb
	blk := max(2, rb)
	far := dilate(edge, w, h, gap)
	pl := &skyPalette{blk: blk, bw: (w + blk - 1) / blk, bh: (h + blk - 1) / blk, reach: (gap*paletteReach + blk - 1) / blk}
	nb := pl.bw * pl.bh
	pl.lab, pl.ok = make([]float32, nb*3), make([]bool, nb)
	imaging.Bands(pl.bh, func(_, b0, b1 int) {
		for by := b0; by < b1; by++ {
			for bx := 0; bx < pl.bw; bx++ {
				var sum [3]float32
				cnt := 0
				for y := by * blk; y < min(by*blk+blk, h); y++ {
					row := g.Row(y)
					for x := bx * blk; x < min(bx*blk+blk, w); x++ {
						p := y*w + x
						if !hard[p] || far[p] || mask[p] < 0.98 {
							continue
						}
						i := x * g.C
						sum[0] += row[i]
						sum[1] += row[i+1]
						sum[2] += row[i+2]
						cnt++
					}
				}
				if 2*cnt < blk*blk {
					continue
				}
				q := by*pl.bw + bx
				inv := 1 / float32(cnt)
				pl.lab[q*3], pl.lab[q*3+1], pl.lab[q*3+2] = labOf(imaging.Clamp01(sum[0]*inv), imaging.Clamp01(sum[1]*inv), imaging.Clamp01(sum[2]*inv))
				pl.ok[q] = true
			}
		}
	})
	return pl
}

// match is 1 where a block of open sky near guide pixel (x, y) has the colour of the
// linear pixel px, falling to 0 with the colour distance to the nearest one; 1 also
// where no open sky is near enough to tell.
func (pl *skyPalette) match(px []float32, x, y int, sky [3]float32) float32 {
	l, a, b := labOf(imaging.Clamp01(px[0]), imaging.Clamp01(px[1]), imaging.Clamp01(px[2]))
	sl, sa, sb := labOf(sky[0], sky[1], sky[2])
	if sc := hypot32(sa, sb); sc < paleSkyChroma || hypot32(a, b) > paleChroma*sc || l < sl-paleDarker {
		return 1
	}
	bx, by := x/pl.blk, y/pl.blk
	best := float32(math.MaxFloat32)
	for qy := max(0, by-pl.reach); qy <= min(pl.bh-1, by+pl.reach); qy++ {
		for qx := max(0, bx-pl.reach); qx <= min(pl.bw-1, bx+pl.reach); qx++ {
			q := qy*pl.bw + qx
			if !pl.ok[q] {
				continue
			}
			dl, da, db := l-pl.lab[q*3], a-pl.lab[q*3+1], b-pl.lab[q*3+2]
			if d := dl*dl + da*da + db*db; d < best {
				best = d
				if best <= paletteNear*paletteNear {
					return 1
				}
			}
		}
	}
	if best == math.MaxFloat32 {
		return 1
	}
	return 1 - smoothstep(paletteNear, paletteFar, float32(math.Sqrt(float64(best))))
}
