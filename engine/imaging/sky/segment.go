package sky

import (
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Segmentation tuning, in CIELAB units at the working resolution.
const (
	seedTexMax    = 1.6   // seeds are smooth
	seedStepMax   = 3.0   // colour step allowed between neighbouring seed pixels
	seedTexSky    = 3.0   // seeds may cross rougher pixels if they are blue or bright white
	seedStepSky   = 6.0   // and steeper colour steps (a cloud's edge against blue)
	seedHued      = 0.5   // a seed part must be at least this sky-coloured
	bgTexMin      = 3.0   // clearly textured pixels teach the non-sky model
	skyComps      = 4     // mixture sizes
	bgComps       = 8     //
	pairGamma     = 18.0  // strength of the contrast-sensitive smoothness term
	texWeight     = 1.2   // cost per texture unit above texFree for the sky label
	texFree       = 1.2   //
	posWeight     = 3.0   // cost of sky at the bottom edge (grows with the square of y)
	llrClamp      = 12.0  // bound on the colour log-likelihood ratio
	cutRounds     = 2     // colour model re-estimated from the cut this many times
	minSeedShare  = 0.01  // seeds must cover this much of the frame
	hueBonus      = 1.0   // prior for blue / bright white pixels, against other colours
	seedBonus     = 2.5   // trust in the seeds grown from the top edge
	skyTexShare   = 0.3   // share of the texture cost sky-coloured pixels pay
	partColourGap = 20.0  // a sky part this far (CIELAB) from the main one is not sky
	minPartShare  = 0.001 // nor a part smaller than this share of the frame
)

// labelling is the hard segmentation at the working resolution.
type labelling struct {
	w, h   int
	sky    []bool
	reason string // why no sky was found; empty when found
	stats  skyStats
}

// segmentWork labels sky pixels of a small linear RGB image. pockets adds the sure sky
// pockets enclosed by the foreground (see addSkyPockets); sky@4.0.0 had none.
func segmentWork(img *imaging.Image, pockets bool) *labelling {
	f := computeFeatures(img)
	w, h := f.w, f.h
	lab := &labelling{w: w, h: h, sky: make([]bool, w*h)}
	seed, rejected := seedSky(f)
	nSeed := 0
	for _, s := range seed {
		if s {
			nSeed++
		}
	}
	if float64(nSeed) < minSeedShare*float64(w*h) {
		lab.reason = "no smooth blue or bright white region reaches the top edge"
		return lab
	}
	var skyIdx, bgIdx []int32
	for p := range seed {
		y := p / w
		switch {
		case seed[p]:
			skyIdx = append(skyIdx, int32(p))
		case rejected[p] || f.tex[p] > bgTexMin || y > h*3/5 || foliage(f.lab[p*3+1], f.lab[p*3+2]):
			bgIdx = append(bgIdx, int32(p))
		}
	}
	if len(bgIdx) == 0 {
		lab.reason = "the whole frame looks like open sky"
		return lab
	}
	skyM, bgM := fitGMM(f.lab, skyIdx, skyComps), fitGMM(f.lab, bgIdx, bgComps)
	pair := pairWeights(f)
	var raw []bool // the last cut before keepTopConnected
	for round := 0; ; round++ {
		cutSky(f, seed, skyM, bgM, pair, lab.sky)
		if round == cutRounds && pockets {
			raw = slices.Clone(lab.sky)
		}
		keepTopConnected(lab.sky, w, h)
		if round == cutRounds {
			break
		}
		// Refit from the cut, keeping the seeds on the sky side: a colour the cut
		// dropped once (a pink sunset cloud) must not vanish from the model.
		skyIdx, bgIdx = skyIdx[:0], bgIdx[:0]
		for p, s := range lab.sky {
			if s || seed[p] {
				skyIdx = append(skyIdx, int32(p))
			} else {
				bgIdx = append(bgIdx, int32(p))
			}
		}
		if len(skyIdx) == 0 || len(bgIdx) == 0 {
			break
		}
		skyM, bgM = fitGMM(f.lab, skyIdx, skyComps), fitGMM(f.lab, bgIdx, bgComps)
	}
	dropOddParts(lab.sky, f)
	lab.stats = measure(f, lab.sky)
	lab.reason = lab.stats.verdict()
	if lab.reason != "" {
		clear(lab.sky)
		return lab
	}
	// Pockets join a sky the verdict accepted; they never decide whether there is one.
	if raw != nil {
		addSkyPockets(lab.sky, raw, f)
	}
	return lab
}

// foliage reports saturated green-yellow colours that sky never has.
func foliage(a, b float32) bool { return a < -6 && b > 6 }

// seedSky floods from the top edge through smooth, bright, non-foliage pixels whose
// colour changes only gradually: the part of the sky we are sure of.
func seedSky(f *features) (seed, rejected []bool) {
	w, h := f.w, f.h
	lab, tex := f.labC, f.texC
	ls := make([]float32, 0, w*h)
	for p := 0; p < w*h; p++ {
		ls = append(ls, lab[p*3])
	}
	slices.Sort(ls)
	lMin := max(min(ls[len(ls)*2/5], 40), 20)
	ok := func(p int) bool {
		o := p * 3
		return tex[p] < seedTexMax && lab[o] >= lMin && !foliage(lab[o+1], lab[o+2])
	}
	seed = make([]bool, w*h)
	var stack []int32
	for x := 0; x < w; x++ {
		if ok(x) {
			seed[x] = true
			stack = append(stack, int32(x))
		}
	}
	grow(seed, stack, w, h, lab, ok, seedStepMax)
	rejected = keepSkyColouredParts(seed, w, h, lab)
	// Second pass: from there, also through the rougher pixels of cloud edges and
	// hazy sky behind twigs, as long as they have a sky's colour.
	okSky := func(p int) bool {
		o := p * 3
		if rejected[p] {
			return false // never back into a facade or ceiling already turned down
		}
		return ok(p) || (tex[p] < seedTexSky && skyColoured(lab[o], lab[o+1], lab[o+2]))
	}
	stack = stack[:0]
	for p, s := range seed {
		if s {
			stack = append(stack, int32(p))
		}
	}
	grow(seed, stack, w, h, lab, okSky, seedStepSky)
	return seed, rejected
}

// keepSkyColouredParts splits the seeds into connected parts and clears the parts that
// are mostly not sky-coloured: a facade or ceiling that touches the top edge is smooth
// and bright too, but grey, beige or lamp-lit. It returns the cleared pixels.
func keepSkyColouredParts(seed []bool, w, h int, lab []float32) []bool {
	comp := make([]int32, w*h)
	for i := range comp {
		comp[i] = -1
	}
	var members []int32
	rejected := make([]bool, w*h)
	for start := range seed {
		if !seed[start] || comp[start] >= 0 {
			continue
		}
		members = append(members[:0], int32(start))
		comp[start] = int32(start)
		hued := 0
		for i := 0; i < len(members); i++ {
			p := int(members[i])
			if o := p * 3; skyColoured(lab[o], lab[o+1], lab[o+2]) {
				hued++
			}
			x, y := p%w, p/w
			for d := 0; d < 4; d++ {
				nx, ny := x+gridDX[d], y+gridDY[d]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				if q := ny*w + nx; seed[q] && comp[q] < 0 {
					comp[q] = int32(start)
					members = append(members, int32(q))
				}
			}
		}
		if float64(hued) < seedHued*float64(len(members)) {
			for _, p := range members {
				seed[p] = false
				rejected[p] = true
			}
		}
	}
	return rejected
}

// grow floods seed from the stacked pixels into 4-neighbours that pass ok and differ
// by at most step.
func grow(seed []bool, stack []int32, w, h int, lab []float32, ok func(int) bool, step float32) {
	for len(stack) > 0 {
		p := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		x, y := p%w, p/w
		for d := 0; d < 4; d++ {
			nx, ny := x+gridDX[d], y+gridDY[d]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			q := ny*w + nx
			if seed[q] || !ok(q) || labDist2(lab, p, q) > step*step {
				continue
			}
			seed[q] = true
			stack = append(stack, int32(q))
		}
	}
}

func labDist2(lab []float32, p, q int) float32 {
	dl := lab[p*3] - lab[q*3]
	da := lab[p*3+1] - lab[q*3+1]
	db := lab[p*3+2] - lab[q*3+2]
	return dl*dl + da*da + db*db
}

// contrastBeta is 1/(2<dE^2>) over neighbouring pixels, so the smoothness term adapts
// to the image's own contrast (as in GrabCut).
func contrastBeta(f *features) float64 {
	s, n := 0.0, 0
	for y := 0; y < f.h-1; y++ {
		for x := 0; x < f.w-1; x++ {
			p := y*f.w + x
			s += float64(labDist2(f.lab, p, p+1)) + float64(labDist2(f.lab, p, p+f.w))
			n += 2
		}
	}
	if s == 0 {
		return 1
	}
	return float64(n) / (2 * s)
}

// pairWeights are the contrast-sensitive smoothness costs of the arcs to the four
// "forward" neighbours (directions 0, 2, 4, 6) of every pixel; they do not change
// between rounds.
func pairWeights(f *features) []float32 {
	w, h := f.w, f.h
	beta := contrastBeta(f)
	pw := make([]float32, w*h*4)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			for x := 0; x < w; x++ {
				p := y*w + x
				for k := 0; k < 4; k++ {
					d := 2 * k
					nx, ny := x+gridDX[d], y+gridDY[d]
					if nx < 0 || ny < 0 || nx >= w || ny >= h {
						continue
					}
					dist := 1.0
					if gridDX[d] != 0 && gridDY[d] != 0 {
						dist = math.Sqrt2
					}
					pw[p*4+k] = float32(pairGamma / dist * math.Exp(-beta*float64(labDist2(f.lab, p, ny*w+nx))))
				}
			}
		}
	})
	return pw
}

// cutSky minimises colour + texture + position unaries and contrast-sensitive
// smoothness with one minimum cut; sky is the source side.
func cutSky(f *features, seed []bool, skyM, bgM *gmm, pair []float32, out []bool) {
	w, h := f.w, f.h
	g := newCutGraph(w, h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			fy := float64(y) / float64(max(h-1, 1))
			for x := 0; x < w; x++ {
				p := y*w + x
				o := p * 3
				llr := skyM.logLik(f.lab[o], f.lab[o+1], f.lab[o+2]) - bgM.logLik(f.lab[o], f.lab[o+1], f.lab[o+2])
				llr = math.Max(-llrClamp, math.Min(llrClamp, llr))
				// Texture is read after the closing, so sky seen through wires and
				// sparse twigs is not penalised; the colour term still sees them.
				// Sky-coloured pixels pay less for texture: cumulus have shading, and
				// what texture protects against (foliage, brick, gravel) is not blue
				// or white.
				texCost := texWeight * math.Max(0, float64(f.texC[p])-texFree)
				costSky := -llr/2 + posWeight*fy*fy
				switch {
				case seed[p]:
					costSky += texCost - seedBonus
				case skyColoured(f.lab[o], f.lab[o+1], f.lab[o+2]):
					costSky += texCost*skyTexShare - hueBonus
				default:
					costSky += texCost + hueBonus
				}
				g.setTerminal(p, float32(costSky), float32(llr/2))
			}
		}
	})
	for p := 0; p < w*h; p++ {
		for k := 0; k < 4; k++ {
			if c := pair[p*4+k]; c != 0 {
				g.setPair(p, 2*k, c)
			}
		}
	}
	g.solve()
	for p := range out {
		out[p] = g.sourceSide(p)
	}
}

// keepTopConnected clears sky components that do not touch the top edge: a window
// reflecting the sky or a pale wall under an eave is enclosed by the building.
// Connectivity is taken on the mask dilated by lineRadius, so sky stays connected
// across power lines and twigs while walls and eaves still separate.
func keepTopConnected(sky []bool, w, h int) {
	grown := dilate(sky, w, h, lineRadius)
	keep := make([]bool, len(sky))
	stack := make([]int32, 0, 1024)
	for x := 0; x < w; x++ {
		if grown[x] {
			keep[x] = true
			stack = append(stack, int32(x))
		}
	}
	for len(stack) > 0 {
		p := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		x, y := p%w, p/w
		for d := 0; d < 4; d++ {
			nx, ny := x+gridDX[d], y+gridDY[d]
			if nx < 0 || ny < 0 || nx >= w || ny >= h {
				continue
			}
			q := ny*w + nx
			if grown[q] && !keep[q] {
				keep[q] = true
				stack = append(stack, int32(q))
			}
		}
	}
	for p := range sky {
		sky[p] = sky[p] && keep[p]
	}
}

// dropOddParts splits the sky into its parts (connected across thin lines, as in
// keepTopConnected) and clears parts whose mean colour is far from the largest one's:
// a window at the top of the frame reflecting the sky, an awning, a lit facade. Pieces
// of one sky split by a tree or a pole share its colour and stay.
func dropOddParts(sky []bool, f *features) {
	w, h := f.w, f.h
	grown := dilate(sky, w, h, lineRadius)
	comp := make([]int32, w*h)
	for i := range comp {
		comp[i] = -1
	}
	type part struct {
		n   int
		lab [3]float64
	}
	var parts []part
	var stack []int32
	for start := range grown {
		if !grown[start] || comp[start] >= 0 {
			continue
		}
		id := int32(len(parts))
		parts = append(parts, part{})
		comp[start] = id
		stack = append(stack[:0], int32(start))
		for len(stack) > 0 {
			p := int(stack[len(stack)-1])
			stack = stack[:len(stack)-1]
			if sky[p] {
				pt := &parts[id]
				pt.n++
				for c := 0; c < 3; c++ {
					pt.lab[c] += float64(f.lab[p*3+c])
				}
			}
			x, y := p%w, p/w
			for d := 0; d < 4; d++ {
				nx, ny := x+gridDX[d], y+gridDY[d]
				if nx < 0 || ny < 0 || nx >= w || ny >= h {
					continue
				}
				if q := ny*w + nx; grown[q] && comp[q] < 0 {
					comp[q] = id
					stack = append(stack, int32(q))
				}
			}
		}
	}
	if len(parts) < 2 {
		return
	}
	big := 0
	for i, pt := range parts {
		if pt.n > parts[big].n {
			big = i
		}
	}
	ref := parts[big]
	odd := make([]bool, len(parts))
	for i, pt := range parts {
		if pt.n == 0 {
			continue
		}
		d := 0.0
		for c := 0; c < 3; c++ {
			d += sq(pt.lab[c]/float64(pt.n) - ref.lab[c]/float64(ref.n))
		}
		odd[i] = math.Sqrt(d) > partColourGap || float64(pt.n) < minPartShare*float64(w*h)
	}
	for p, s := range sky {
		if s && odd[comp[p]] {
			sky[p] = false
		}
	}
}

// dilate grows a mask by a square of radius r.
func dilate(m []bool, w, h, r int) []bool {
	tmp := make([]bool, len(m))
	for y := 0; y < h; y++ {
		last := -1 << 30 // last set pixel at or left of x+r
		for x := -r; x < w; x++ {
			if xr := x + r; xr < w && m[y*w+xr] {
				last = xr
			}
			if x >= 0 {
				tmp[y*w+x] = last >= x-r
			}
		}
	}
	out := make([]bool, len(m))
	for x := 0; x < w; x++ {
		last := -1 << 30
		for y := -r; y < h; y++ {
			if yr := y + r; yr < h && tmp[yr*w+x] {
				last = yr
			}
			if y >= 0 {
				out[y*w+x] = last >= y-r
			}
		}
	}
	return out
}
