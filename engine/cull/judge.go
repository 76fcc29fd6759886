package cull

import (
	"math"
	"sort"
)

// minCommonTiles is the fewest tiles two frames must both expose well for their
// sharpness to be compared.
const minCommonTiles = 24

// pairSharpness returns, per direction, log of how much sharper a is than b over the
// tiles well exposed in both, and how many tiles those are.
func pairSharpness(a, b *stats) (lr [4]float64, common int) {
	if a.tw != b.tw || a.th != b.th {
		return lr, 0
	}
	var ea, eb [4][nSteps]float64
	var na, nb [4][nSteps]float64
	for t := range a.tiles {
		if !a.tileOK[t] || !b.tileOK[t] {
			continue
		}
		common++
		ta, tb := &a.tiles[t], &b.tiles[t]
		for d := range 4 {
			for k := range nSteps {
				ea[d][k] += ta.e[d][k]
				eb[d][k] += tb.e[d][k]
				na[d][k] += float64(ta.n[d][k])
				nb[d][k] += float64(tb.n[d][k])
			}
		}
	}
	if common < minCommonTiles {
		return lr, common
	}
	const f, k = 0, 1 // the short and the long step
	for d := range 4 {
		if ea[d][f] == 0 || eb[d][f] == 0 || ea[d][k] == 0 || eb[d][k] == 0 {
			return [4]float64{}, 0 // featureless: nothing to compare
		}
		sa := (ea[d][f] / na[d][f]) / (ea[d][k] / na[d][k])
		sb := (eb[d][f] / nb[d][f]) / (eb[d][k] / nb[d][k])
		lr[d] = math.Log(sa / sb)
	}
	return lr, common
}

// Thresholds. Each was set from the real bracket sets in the test photos and
// degraded copies of them (see grouping's cull test), with a margin to the real
// frames.
const (
	// A black frame's brightest pixels (99.9th percentile) stay below this 8-bit
	// sRGB code: lens-cap noise reaches some 10, a real darkest bracket's windows
	// or lamps 100 and more.
	blackCode = 24
	// blurRatio: a frame is blurred when its sharpness is below this share of the
	// median of its siblings'. Real brackets measure 0.70 and up, the blurred
	// copies of the measurement mostly under 0.6.
	blurRatio = 0.62
	// motionAniso: blur is motion when the least sharp direction has lost this much
	// more than the sharpest (as a ratio of the two).
	motionAniso = 0.85
	// sameEV is how close two exposures must be to repeat one another (EV).
	sameEV = 0.3
	// blackUnder: with EXIF, a frame this many EV darker than its exposure says
	// (against its siblings) whose 99th percentile stays below blackUnderCode is
	// black too.
	blackUnder     = 4.0
	blackUnderCode = 64
	// flatSpread: a frame whose well-exposed thumbnail spans fewer stops than this
	// (2nd to 98th percentile) is flat; real rooms span several.
	flatSpread = 0.8
	// sameLook: without EXIF two frames repeat an exposure when their pixels differ
	// by less than this (median log2 ratio).
	sameLook = 0.25
	// repeatTie: runs within this share of sharpness of each other are as sharp.
	repeatTie = 0.05
	// alignTie: runs whose frames moved within this many pixels (at alignEdge) of
	// each other, on average, are as well aligned.
	alignTie = 0.75
)

// frameInfo is what Judge knows of one frame.
type frameInfo struct {
	st *stats
	ev float64
}

// Judge returns a verdict for each frame, in order. See the package comment.
func Judge(frames []Frame) []Verdict { return JudgeWith(frames, Options{}) }

// Options tune Judge. The zero value is Judge's.
type Options struct {
	// Trace, when set, receives the measures behind each rule, a line at a time
	// (tests and support log it).
	Trace func(format string, args ...any)
}

// JudgeWith is Judge with options.
func JudgeWith(frames []Frame, opt Options) []Verdict {
	out := make([]Verdict, len(frames))
	for i := range out {
		out[i] = keep()
	}
	if len(frames) == 0 {
		return out
	}
	// Frames without pixels are kept and take no part.
	var info []frameInfo
	var idx []int
	for i, f := range frames {
		if f.Image == nil || f.Image.W() == 0 || f.Image.H() == 0 {
			continue
		}
		info = append(info, frameInfo{st: measure(luminance(f.Image)), ev: f.ev()})
		idx = append(idx, i)
	}
	if len(info) == 0 {
		return out
	}
	j := judge{info: info, out: make([]Verdict, len(info)), trace: opt.Trace}
	for i := range j.out {
		j.out[i] = keep()
	}
	j.run()
	for k, i := range idx {
		out[i] = j.out[k]
		if out[i].Twin >= 0 {
			out[i].Twin = idx[out[i].Twin]
		}
	}
	return out
}

type judge struct {
	info  []frameInfo
	out   []Verdict
	trace func(format string, args ...any)
}

func (j *judge) logf(format string, args ...any) {
	if j.trace != nil {
		j.trace(format, args...)
	}
}

func (j *judge) run() {
	j.blackAndTest()
	j.repeats()
	j.blur()
	j.keepOne()
}

// blackAndTest sets aside black frames and flat test frames. Both are judged on
// the frame itself; a test frame also needs a sibling with structure.
func (j *judge) blackAndTest() {
	res := make([]float64, len(j.info)) // brightness less EXIF exposure
	withEV := true
	for i, f := range j.info {
		res[i] = f.st.logMean - f.ev
		withEV = withEV && !math.IsNaN(f.ev)
	}
	spread := make([]float64, len(j.info))
	structured := 0
	for i, f := range j.info {
		spread[i] = f.st.flatness()
		if spread[i] >= flatSpread {
			structured++
		}
	}
	for i, f := range j.info {
		p99, p999 := f.st.percentile(0.99), f.st.percentile(0.999)
		// With EXIF a frame far darker than its exposure says is black too (the
		// brightest brackets clip, which only lowers the others' figure).
		var others []float64
		for k := range j.info {
			if k != i {
				others = append(others, res[k])
			}
		}
		under := 0.0
		if withEV && len(others) > 0 {
			under = median(others) - res[i]
		}
		j.logf("frame %d: p50 %d p99 %d p999 %d valid %.2f logMean %.2f ev %.2f under %.2f spread %.2f", i, f.st.percentile(0.5), p99, p999, f.st.validShare, f.st.logMean, f.ev, under, spread[i])
		switch {
		case p999 < blackCode, under > blackUnder && p99 < blackUnderCode:
			j.out[i] = aside(CodeBlack)
		case spread[i] < flatSpread && structured > 0:
			j.out[i] = aside(CodeTest)
		}
	}
}

// live returns the frames still kept.
func (j *judge) live() []int {
	var ix []int
	for i, v := range j.out {
		if v.Keep {
			ix = append(ix, i)
		}
	}
	return ix
}

// blur sets aside the kept frames clearly less sharp than their kept siblings.
func (j *judge) blur() {
	ix := j.live()
	if len(ix) < 2 {
		return
	}
	type score struct {
		all  float64
		dirs [4]float64
		ok   bool
	}
	scores := make([]score, len(j.info))
	for _, a := range ix {
		var all []float64
		var dirs [4][]float64
		for _, b := range j.nearest(a, ix) {
			lr, common := pairSharpness(j.info[a].st, j.info[b].st)
			if common < minCommonTiles {
				continue
			}
			all = append(all, (lr[0]+lr[1]+lr[2]+lr[3])/4)
			for d := range 4 {
				dirs[d] = append(dirs[d], lr[d])
			}
		}
		if len(all) == 0 {
			continue
		}
		s := score{all: median(all), ok: true}
		for d := range 4 {
			s.dirs[d] = median(dirs[d])
		}
		scores[a] = s
		j.logf("frame %d: sharpness %.3f dirs %.3f %.3f %.3f %.3f (%d siblings)", a, math.Exp(s.all), math.Exp(s.dirs[0]), math.Exp(s.dirs[1]), math.Exp(s.dirs[2]), math.Exp(s.dirs[3]), len(all))
	}
	for _, a := range ix {
		s := scores[a]
		if !s.ok || !(s.all < math.Log(blurRatio)) { // NaN keeps
			continue
		}
		lo, hi := s.dirs[0], s.dirs[0]
		for _, d := range s.dirs {
			lo, hi = min(lo, d), max(hi, d)
		}
		if lo-hi < math.Log(motionAniso) {
			j.out[a] = aside(CodeMotion)
		} else {
			j.out[a] = aside(CodeFocus)
		}
	}
}

// nearest returns the frames of ix other than a that are nearest to it in
// brightness, nearest first: brackets far apart in exposure share few well-exposed
// regions, and noise in the darker one's shadows reads as detail.
func (j *judge) nearest(a int, ix []int) []int {
	var out []int
	for _, b := range ix {
		if b != a {
			out = append(out, b)
		}
	}
	ma := j.info[a].st.logMean
	sort.SliceStable(out, func(x, y int) bool {
		return math.Abs(j.info[out[x]].st.logMean-ma) < math.Abs(j.info[out[y]].st.logMean-ma)
	})
	if len(out) > nearN {
		out = out[:nearN]
	}
	for k, b := range out {
		if math.Abs(j.info[b].st.logMean-ma) > maxStops {
			return out[:k]
		}
	}
	return out
}

// nearN is how many siblings, nearest in brightness, a frame's sharpness is
// compared with.
const nearN = 2

// maxStops is the farthest in brightness a sibling may be to be compared: beyond
// it the two share little that is well exposed in both, and noise in the
// darker one's shadows reads as detail.
const maxStops = 2.5

// keepOne puts back the frame with the most signal when every frame was set aside.
func (j *judge) keepOne() {
	if len(j.live()) > 0 {
		return
	}
	best := 0
	for i, f := range j.info {
		if f.st.percentile(0.999) > j.info[best].st.percentile(0.999) {
			best = i
		}
	}
	j.out[best] = keep()
}

// exposureGap is how far apart two frames' exposures are: in EV by EXIF when both
// have it, else by their pixels (NaN when they share too few to tell).
func (j *judge) exposureGap(a, b int) float64 {
	ea, eb := j.info[a].ev, j.info[b].ev
	if !math.IsNaN(ea) && !math.IsNaN(eb) {
		return math.Abs(ea - eb)
	}
	r, ok, _ := lookRatio(j.info[a].st, j.info[b].st)
	if !ok {
		return math.NaN()
	}
	// A dark bracket's few bright pixels can agree with the next one's by chance;
	// its highlights (windows, lamps) tell the exposures apart.
	return max(math.Abs(r), highGap(j.info[a].st, j.info[b].st))
}

// same reports whether two frames repeat one exposure of one view. The EXIF
// decides the exposure when both frames have it, but the pixels must show the
// same view too: two rooms shot with one bracket setting are no repeat.
func (j *judge) same(a, b int) bool {
	ea, eb := j.info[a].ev, j.info[b].ev
	r, ok, view := lookRatio(j.info[a].st, j.info[b].st)
	if ok && !view {
		return false
	}
	if !math.IsNaN(ea) && !math.IsNaN(eb) {
		// A frame almost all clipped or all dark shows too little to tell the view;
		// its run's other frames do.
		return math.Abs(ea-eb) < sameEV
	}
	return ok && max(math.Abs(r), highGap(j.info[a].st, j.info[b].st)) < sameLook
}

// twin returns the frame of run nearest to a in exposure among those repeating
// it, -1 when none does.
func (j *judge) twin(a int, run []int) int {
	best := -1
	for _, b := range run {
		if j.same(a, b) && (best < 0 || j.exposureGap(a, b) < j.exposureGap(a, best)) {
			best = b
		}
	}
	return best
}

// repeats finds a scene shot twice: a new run starts where two frames in a row
// repeat exposures of the current run (one repeated exposure alone is as likely
// a bracket the camera could not step, and real sets have those). The sharpest
// run is kept (the later one of runs as sharp: the photographer shot again
// because of the first); each frame of another run whose exposure the kept run
// has is set aside.
func (j *judge) repeats() {
	ix := j.live()
	var runs [][]int
	start := 0
	for k := 1; k+1 < len(ix); k++ {
		cur := ix[start:k]
		if len(cur) >= 2 && j.twin(ix[k], cur) >= 0 && j.twin(ix[k+1], cur) >= 0 {
			runs = append(runs, cur)
			start = k
		}
	}
	runs = append(runs, ix[start:])
	if len(runs) < 2 {
		return
	}
	// A run's score: how much sharper its frames are than their twins in the
	// other runs (mean log ratio over the twins).
	scores := make([]float64, len(runs))
	top := math.Inf(-1)
	for r, run := range runs {
		var sum float64
		n := 0
		for _, a := range run {
			for q, other := range runs {
				if q == r {
					continue
				}
				if b := j.twin(a, other); b >= 0 {
					lr, common := pairSharpness(j.info[a].st, j.info[b].st)
					if common >= minCommonTiles {
						sum += (lr[0] + lr[1] + lr[2] + lr[3]) / 4
						n++
					}
				}
			}
		}
		if n > 0 {
			scores[r] = sum / float64(n)
		}
		top = max(top, scores[r])
		j.logf("run %d %v: sharpness against its twins %.3f", r, run, math.Exp(scores[r]))
	}
	// Of the runs as sharp as the sharpest, the one whose frames moved least
	// between shots (a merge of it needs less alignment and ghosts less); of those,
	// the later.
	best, bestMove := 0, math.Inf(1)
	for r, run := range runs {
		if scores[r] < top-math.Log1p(repeatTie) {
			continue
		}
		move := j.movement(run)
		j.logf("run %d: moved %.2f px (at %d)", r, move, alignEdge)
		if math.IsNaN(move) || math.IsNaN(bestMove) || move <= bestMove+alignTie {
			best, bestMove = r, move
		}
	}
	for r, run := range runs {
		if r == best {
			continue
		}
		for _, a := range run {
			if b := j.twin(a, runs[best]); b >= 0 {
				j.out[a] = aside(CodeRepeat)
				j.out[a].Twin = b
			}
		}
	}
}

// movement is how far a run's frames moved between consecutive shots, on average
// (pixels at alignEdge); NaN when it cannot tell.
func (j *judge) movement(run []int) float64 {
	if len(run) < 2 {
		return math.NaN()
	}
	var sum float64
	for k := 1; k < len(run); k++ {
		sum += shift(j.info[run[k-1]].st, j.info[run[k]].st)
	}
	return sum / float64(len(run)-1)
}
