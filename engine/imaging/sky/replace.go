package sky

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

const (
	synthEdge    = 1600     // the new sky is drawn at most this large, then upsampled
	harmonize    = 0.10     // share of the sky's colour shift given to the foreground
	maxGainShift = 0.04     // the foreground white balance moves at most this much
	exposureMin  = 0.75     // bounds on matching the new sky to the old one's brightness
	exposureMax  = 1.25     //
	oldSkyRadius = 1.0 / 40 // of the long edge
	oldSkyBlock  = 4        // the old-sky estimate is kept at 1/4 of the guide
)

// Replace swaps the sky of a linear RGB(A) image for a synthetic one in the given style
// (clear, low_cloud, neutral, high_cloud). It returns a new image of the same size and
// channels. When no sky is found it returns img itself, unmodified, with Result.Found
// false and the reason. Once ctx is done it stops within a row of the pass it is in
// and returns ctx.Err().
func Replace(ctx context.Context, img *imaging.Image, style string) (*imaging.Image, Result, error) {
	return replace(ctx, img, style, false)
}

func replace(ctx context.Context, img *imaging.Image, style string, legacy bool) (*imaging.Image, Result, error) {
	lk, ok := lookOf(style)
	if !ok {
		return nil, Result{}, fmt.Errorf("sky: unknown style %q (want one of %v): %w", style, Styles(), ErrInvalid)
	}
	return replaceLook(ctx, img, lk, legacy)
}

func replaceLook(ctx context.Context, img *imaging.Image, lk look, legacy bool) (*imaging.Image, Result, error) {
	a, err := analyse(ctx, img, legacy)
	if err != nil {
		return nil, Result{}, err
	}
	if !a.result.Found {
		return img, a.result, nil
	}
	w, h := img.W(), img.H()
	sw, sh := imaging.FitWithin(w, h, synthEdge)
	geo, want, hard := a.skyLayout(sw, sh)
	oldSky, oldMean := a.oldSky, a.oldMean
	newSky := renderSky(lk, geo, want)
	if err := ctx.Err(); err != nil {
		return nil, Result{}, err
	}
	newMean := meanOver(newSky, hard)
	// Sit the new sky at the photo's exposure, partly: a dull white sky should become
	// a blue one, not a grey one.
	if yo, yn := luma(oldMean), luma(newMean); yn > 0 && yo > 0 {
		k := float32(math.Sqrt(float64(yo / yn)))
		k = max(exposureMin, min(exposureMax, k))
		scale(newSky, k)
		for c := range newMean {
			newMean[c] *= k
		}
	}
	gain := harmonyGain(oldMean, newMean)
	out := imaging.New(w, h, img.C)
	sums := make([]float64, imaging.Workers())
	comp := compositor{a: a, newSky: newSky, oldSky: oldSky, gain: gain}
	if !a.legacy {
		comp.oldSky, comp.fg = a.skyLocal, a.fgLocal
		comp.light, comp.lightRow = a.edgeLight()
	}
	comp.prepare(w, h)
	imaging.Bands(h, func(worker, y0, y1 int) {
		sc := newScratch(w)
		s := 0.0
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			s += comp.row(y, img.Row(y), out.Row(y), img.C, sc)
		}
		sums[worker] = s
	})
	if err := ctx.Err(); err != nil {
		return nil, Result{}, err
	}
	total := 0.0
	for _, s := range sums {
		total += s
	}
	a.result.Fraction = total / float64(w*h)
	return out, a.result, nil
}

// skyLayout sizes the synthetic sky: the horizon sits a little below the lowest sky
// row (never above mid-frame, where a level camera puts it), want marks the pixels to
// draw (the sky grown by the matte's reach), hard the sky itself.
func (a *analysis) skyLayout(sw, sh int) (skyGeometry, []bool, []bool) {
	l := a.label
	var rows []int
	for p, s := range l.sky {
		if s {
			rows = append(rows, p/l.w)
		}
	}
	slices.Sort(rows)
	bottom := float32(rows[len(rows)*99/100]+1) / float32(l.h)
	horizon := (max(bottom, 0.45) + 0.04) * float32(sh)
	// The matte reaches guideRadius*2 guide pixels beyond the labelling, the refined
	// one as far as its band and the keyed sky pockets.
	gw, gh := a.guide.W(), a.guide.H()
	gr := 2*guideRadius + 2
	if !a.legacy {
		gr = max(gr, bandReach(gw, gh), int(holeReach*float64(max(gw, gh)))) + 2*refinedRadius(gw, gh) + 2
	}
	reach := int(math.Ceil(float64(gr) * float64(l.w) / float64(gw)))
	grown := dilate(l.sky, l.w, l.h, reach+1)
	want := make([]bool, sw*sh)
	hard := make([]bool, sw*sh)
	for y := 0; y < sh; y++ {
		ly := min(y*l.h/sh, l.h-1)
		for x := 0; x < sw; x++ {
			lx := min(x*l.w/sw, l.w-1)
			want[y*sw+x] = grown[ly*l.w+lx]
			hard[y*sw+x] = l.sky[ly*l.w+lx]
		}
	}
	return skyGeometry{w: sw, h: sh, horizon: horizon, focal: 0.9 * float32(max(sw, sh)), exposure: 1}, want, hard
}

// oldSkyColour estimates the original sky's colour around every point (a normalised
// box blur of the confident sky on a grid a quarter of the guide's size), used to take
// the old sky out of the skyline's mixed pixels, and its mean.
func (a *analysis) oldSkyColour() (*imaging.Image, [3]float32) {
	g := a.guide
	const k = oldSkyBlock
	w, h := max(1, g.W()/k), max(1, g.H()/k)
	n := w * h
	planes := [4][]float32{make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)}
	var mean [3]float64
	cnt := 0.0
	for y := 0; y < h*k && y < g.H(); y++ {
		row := g.Row(y)
		for x := 0; x < w*k && x < g.W(); x++ {
			if a.mask[y*g.W()+x] < 1 {
				continue
			}
			q := (y/k)*w + x/k
			for c := 0; c < 3; c++ {
				planes[c][q] += row[x*3+c]
				mean[c] += float64(row[x*3+c])
			}
			planes[3][q]++
			cnt++
		}
	}
	var m [3]float32
	for c := range m {
		m[c] = float32(mean[c] / max(cnt, 1))
	}
	r := max(1, int(float64(max(w, h))*oldSkyRadius))
	for i := range planes {
		boxMean(planes[i], planes[i], w, h, r)
		boxMean(planes[i], planes[i], w, h, r)
	}
	out := imaging.New(w, h, 3)
	full := float32(k * k)
	for p := 0; p < n; p++ {
		wt := planes[3][p]
		for c := 0; c < 3; c++ {
			v := m[c]
			if wt > 1e-3 {
				// Blend towards the global mean where little sky is near.
				f := min(1, wt/full*8)
				v = f*planes[c][p]/wt + (1-f)*m[c]
			}
			out.Pix[p*3+c] = v
		}
	}
	return out, m
}

func meanOver(img *imaging.Image, mask []bool) [3]float32 {
	var s [3]float64
	n := 0.0
	for p, v := range mask {
		if !v {
			continue
		}
		for c := 0; c < 3; c++ {
			s[c] += float64(img.Pix[p*3+c])
		}
		n++
	}
	var m [3]float32
	for c := range m {
		m[c] = float32(s[c] / max(n, 1))
	}
	return m
}

func luma(c [3]float32) float32 { return 0.2126*c[0] + 0.7152*c[1] + 0.0722*c[2] }

func scale(img *imaging.Image, k float32) {
	for i := range img.Pix {
		img.Pix[i] *= k
	}
}

// harmonyGain nudges the foreground's white balance a little towards the new sky's
// light: per-channel gains from the change in the sky's chromaticity, kept at the same
// luminance.
func harmonyGain(old, nw [3]float32) [3]float32 {
	g := [3]float32{1, 1, 1}
	yo, yn := luma(old), luma(nw)
	if yo <= 0 || yn <= 0 {
		return g
	}
	for c := 0; c < 3; c++ {
		if old[c] <= 0 {
			continue
		}
		ratio := (nw[c] / yn) / (old[c] / yo)
		g[c] = max(1-maxGainShift, min(1+maxGainShift, 1+harmonize*(ratio-1)))
	}
	y := luma(g)
	for c := range g {
		g[c] /= y
	}
	return g
}
