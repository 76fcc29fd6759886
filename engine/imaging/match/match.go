// Package match brings the scenes of one shoot to a common white balance and
// exposure (shoot consistency). It measures each developed scene (Measure), takes a
// robust common target from every scene's measure (Target), and turns the gap
// between a scene and the target into a clamped correction (Plan) applied in linear
// light (Apply).
//
// The statistics are chosen to hold up on scenes that are mostly one colour (a green
// bathroom, a red-brick exterior):
//
//   - White balance is read only from the brightest near-neutral surfaces (ceilings,
//     white walls, trims): unclipped pixels with L* above 40 and C*ab under 25, of
//     which the lightest tenth count, summarised by the median of log(R/G) and
//     log(B/G). A scene with too few such pixels has no white-balance measure: it
//     neither pulls the target nor is corrected for colour.
//   - Exposure is the median L* of all the pixels (luminance): the exposure curve
//     is monotone, so it moves the median exactly where it is planned to.
//   - The target is the median over the scenes of each measure, so one odd scene does
//     not pull the others; every correction is clamped (MaxWhiteBalance along the
//     warm-cool axis, the tighter MaxTint across it, MaxExposure), and the white
//     balance of a scene far from the look is tapered off (fullWB, zeroWB).
//
// Every statistic is computed on a fixed sampling grid in a fixed order, so the same
// image always gives the same measure and every scene of a shoot sees one target.
package match

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Tuning.
const (
	// MaxWhiteBalance is the most a correction moves the balance along the warm-cool
	// axis, (log(R/G) - log(B/G))/√2: about 25% between red and blue, enough for a
	// room its own colour correction left warm under lamp light.
	MaxWhiteBalance = 0.22
	// MaxTint is the most it moves the balance across that axis, toward magenta or
	// green, (log(R/G) + log(B/G))/√2. Lights differ between rooms mostly from warm
	// to cool; a green or magenta reading is more likely a coloured surface taken
	// for white (green tiles, a pink sunset sky).
	MaxTint = 0.05
	// fullWB and zeroWB taper the white balance of a scene far from the look: in
	// full up to fullWB (the distance in log(R/G), log(B/G)), not at all from
	// zeroWB. So far from the rest of the shoot, the scene's "white" is more likely
	// its own colour (a twilight exterior among daylight rooms) than its light.
	fullWB = 0.2
	zeroWB = 0.4
	// MaxExposure is the most a correction brightens or darkens the mid-tones, in
	// stops; the curve (see Apply) keeps black and white where they are.
	MaxExposure = 1.5
	// sampleTarget is about how many pixels a measure reads.
	sampleTarget = 1 << 18
	// neutralChroma and neutralL select the near-neutral candidates (CIELAB).
	neutralChroma = 25.0
	neutralL      = 40.0
	// minNeutral is the least share of the samples the lightest near-neutral tenth
	// must make for the scene to have a white-balance measure.
	minNeutral = 0.002
	// clipLevel: a pixel with a channel at or above it carries no colour.
	clipLevel = 0.98
)

// Stats measure one developed scene.
type Stats struct {
	// HasNeutral: the scene has enough near-neutral surfaces for a white balance.
	HasNeutral bool
	// RG and BG are the (trimmed) mean log(R/G) and log(B/G) of its neutral surfaces.
	RG, BG float64
	// Neutral is the share of the samples the neutral surfaces made.
	Neutral float64
	// HasExposure: the scene has pixels to measure exposure on.
	HasExposure bool
	// MidL is the median L* of its pixels.
	MidL float64
}

// Measure returns the statistics of img (linear RGB, 3 or more channels).
func Measure(ctx context.Context, img *imaging.Image) (Stats, error) {
	if img == nil || img.C < 3 || img.Pix == nil {
		return Stats{}, fmt.Errorf("match: measure needs a float RGB image")
	}
	w, h := img.W(), img.H()
	step := max(1, int(math.Sqrt(float64(w)*float64(h)/sampleTarget)))
	rows := (h + step - 1) / step
	type cand struct{ l, rg, bg float64 }
	// Per band, then joined in band order: the result does not depend on timing.
	nb := imaging.Workers()
	ls := make([][]float64, nb)
	cs := make([][]cand, nb)
	counts := make([]int, nb)
	perBand := ((rows+nb-1)/nb + 1) * ((w + step - 1) / step)
	for i := range nb {
		ls[i] = make([]float64, 0, perBand)
	}
	err := imaging.BandsCtx(ctx, rows, func(wk, r0, r1 int) {
		for r := r0; r < r1; r++ {
			row := img.Row(r * step)
			for x := 0; x < w; x += step {
				p := row[x*img.C : x*img.C+3]
				r, g, b := float64(p[0]), float64(p[1]), float64(p[2])
				counts[wk]++
				// Every pixel counts for exposure, clipped and black ones too: the
				// median of all is where a monotone curve puts the median pixel.
				ls[wk] = append(ls[wk], lOfY(min(max(0.2126*r+0.7152*g+0.0722*b, 0), 1)))
				if max(r, g, b) >= clipLevel || min(r, g, b) <= 0 {
					continue
				}
				l, a, bb := lab(r, g, b)
				if l > neutralL && math.Hypot(a, bb) < neutralChroma {
					cs[wk] = append(cs[wk], cand{l, math.Log(r / g), math.Log(b / g)})
				}
			}
		}
	})
	if err != nil {
		return Stats{}, err
	}
	var all []float64
	var cands []cand
	total := 0
	for i := range nb {
		all = append(all, ls[i]...)
		cands = append(cands, cs[i]...)
		total += counts[i]
	}
	var s Stats
	if len(all) > 0 {
		s.HasExposure = true
		s.MidL = median(all)
	}
	if len(cands) > 0 {
		// The lightest tenth: whites and ceilings rather than a pale coloured wall.
		slices.SortStableFunc(cands, func(p, q cand) int {
			switch {
			case p.l > q.l:
				return -1
			case p.l < q.l:
				return 1
			}
			return 0
		})
		top := cands[:max(1, len(cands)/10)]
		rg := make([]float64, len(top))
		bg := make([]float64, len(top))
		for i, c := range top {
			rg[i], bg[i] = c.rg, c.bg
		}
		s.Neutral = float64(len(top)) / float64(max(1, total))
		if s.Neutral >= minNeutral {
			s.HasNeutral = true
			s.RG, s.BG = trimmedMean(rg), trimmedMean(bg)
		}
	}
	return s, nil
}

// Look is a shoot's common target.
type Look struct {
	HasNeutral  bool
	RG, BG      float64
	HasExposure bool
	MidL        float64
	// Scenes is how many scenes' measures made it.
	Scenes int
}

// Target returns the shoot's look: the median of each measure over the scenes that
// have it. Scenes are taken in the order given; the median does not depend on it.
func Target(scenes []Stats) Look {
	var rg, bg, l []float64
	for _, s := range scenes {
		if s.HasNeutral {
			rg = append(rg, s.RG)
			bg = append(bg, s.BG)
		}
		if s.HasExposure {
			l = append(l, s.MidL)
		}
	}
	t := Look{Scenes: len(scenes)}
	if len(rg) > 0 {
		t.HasNeutral, t.RG, t.BG = true, median(rg), median(bg)
	}
	if len(l) > 0 {
		t.HasExposure, t.MidL = true, median(l)
	}
	return t
}

// Correction is what Apply does to one scene.
type Correction struct {
	// Gain multiplies R, G and B (white balance, normalised to keep a grey's
	// luminance).
	Gain [3]float64
	// EV is the exposure change of the mid-tones in stops (at the scene's median).
	EV float64
	// Curve is the shadow gain of the exposure curve (see Apply); 1 changes nothing.
	Curve float64
	// Clamped: the scene was further from the target than a correction may move it.
	Clamped bool
}

// Identity reports whether c changes nothing worth the pass.
func (c Correction) Identity() bool {
	return math.Abs(c.Curve-1) < 0.005 && math.Abs(c.Gain[0]-1) < 0.002 &&
		math.Abs(c.Gain[1]-1) < 0.002 && math.Abs(c.Gain[2]-1) < 0.002
}

// Plan returns the correction that brings a scene measured as s to the look t.
func Plan(s Stats, t Look) Correction {
	c := Correction{Gain: [3]float64{1, 1, 1}, Curve: 1}
	if s.HasNeutral && t.HasNeutral {
		dr, db := t.RG-s.RG, t.BG-s.BG
		if n := math.Hypot(dr, db); n > fullWB {
			w := max(0, (zeroWB-n)/(zeroWB-fullWB))
			dr, db = dr*w, db*w
			c.Clamped = true
		}
		temp, ct := clamp((dr-db)/math.Sqrt2, MaxWhiteBalance)
		tint, cn := clamp((dr+db)/math.Sqrt2, MaxTint)
		c.Clamped = c.Clamped || ct || cn
		dr, db = (temp+tint)/math.Sqrt2, (tint-temp)/math.Sqrt2
		g := [3]float64{math.Exp(dr), 1, math.Exp(db)}
		y := 0.2126*g[0] + 0.7152*g[1] + 0.0722*g[2]
		for i := range g {
			c.Gain[i] = g[i] / y
		}
	}
	if s.HasExposure && t.HasExposure && s.MidL > 0 {
		ev := math.Log2(yOfL(t.MidL) / yOfL(s.MidL))
		var cl bool
		c.EV, cl = clamp(ev, MaxExposure)
		c.Clamped = c.Clamped || cl
		c.Curve = curveGain(yOfL(s.MidL), yOfL(s.MidL)*math.Exp2(c.EV))
	}
	return c
}

// curveGain is the e of the curve y' = e·y / (1 + (e-1)·y) that takes ym to yt: the
// curve keeps 0 and 1 and is smooth and monotone between, so brightening lifts the
// mid-tones without clipping the whites, and darkening keeps them white.
func curveGain(ym, yt float64) float64 {
	ym, yt = min(max(ym, 1e-4), 0.999), min(max(yt, 1e-4), 0.999)
	return yt * (1 - ym) / (ym * (1 - yt))
}

// Describe is the correction as a note for people: "white balance warmer (red ×1.03,
// blue ×0.96), exposure +0.30 EV".
func (c Correction) Describe() string {
	wb := "white balance kept"
	r, b := c.Gain[0]/c.Gain[1], c.Gain[2]/c.Gain[1]
	if math.Abs(r-1) >= 0.002 || math.Abs(b-1) >= 0.002 {
		dir := "warmer"
		if math.Log(r)-math.Log(b) < 0 {
			dir = "cooler"
		}
		wb = fmt.Sprintf("white balance %s (red ×%.3f, blue ×%.3f)", dir, r, b)
	}
	s := fmt.Sprintf("%s, exposure %+.2f EV", wb, c.EV)
	if c.Clamped {
		s += " (limited)"
	}
	return s
}

// Apply corrects img (linear RGB, 3 or more channels) in place: the white-balance
// gains, then the exposure curve on the luminance (see curveGain). A colour pushed
// past white is scaled back whole instead of clipped channel by channel, so it
// keeps its hue.
func Apply(ctx context.Context, img *imaging.Image, c Correction) error {
	if img == nil || img.C < 3 || img.Pix == nil {
		return fmt.Errorf("match: apply needs a float RGB image")
	}
	e := float32(c.Curve)
	if e <= 0 {
		e = 1
	}
	g := [3]float32{float32(c.Gain[0]), float32(c.Gain[1]), float32(c.Gain[2])}
	roll := e > 1 || g[0] > 1 || g[2] > 1
	w, nc := img.W(), img.C
	return imaging.BandsCtx(ctx, img.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := img.Row(y)
			for x := 0; x < w; x++ {
				p := row[x*nc : x*nc+3 : x*nc+3]
				in := max(p[0], p[1], p[2])
				r, gg, b := p[0]*g[0], p[1]*g[1], p[2]*g[2]
				// The exposure curve on the luminance, the same factor on every
				// channel: the hue stays.
				lum := min(max(0.2126*r+0.7152*gg+0.0722*b, 0), 1)
				k := e / (1 + (e-1)*lum)
				r, gg, b = r*k, gg*k, b*k
				if roll && in <= 1 {
					// A colour pushed past white is brought back whole, hue kept.
					if m := max(r, gg, b); m > 1 {
						r, gg, b = r/m, gg/m, b/m
					}
				}
				p[0], p[1], p[2] = r, gg, b
			}
		}
	})
}

func clamp(v, lim float64) (float64, bool) {
	if v > lim {
		return lim, true
	}
	if v < -lim {
		return -lim, true
	}
	return v, false
}

// trim is the share of the neutral surfaces' values left out at each end: the
// mean of the rest follows the surfaces' colour as a whole (a median would follow
// the larger of a white ceiling and a cream wall) without the odd coloured speck.
const trim = 0.2

// trimmedMean sorts v in place.
func trimmedMean(v []float64) float64 {
	slices.Sort(v)
	k := int(float64(len(v)) * trim)
	v = v[k : len(v)-k]
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// median sorts v in place.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// lab is CIELAB (D65) of linear sRGB.
func lab(r, g, b float64) (l, a, bb float64) {
	x := 0.4124564*r + 0.3575761*g + 0.1804375*b
	y := 0.2126729*r + 0.7151522*g + 0.0721750*b
	z := 0.0193339*r + 0.1191920*g + 0.9503041*b
	fx, fy, fz := labF(x/0.95047), labF(y), labF(z/1.08883)
	return 116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)
}

// lOfY is the lightness L* of relative luminance y.
func lOfY(y float64) float64 { return 116*labF(y) - 16 }

func labF(t float64) float64 {
	if t > 216.0/24389 {
		return math.Cbrt(t)
	}
	return (24389.0/27*t + 16) / 116
}

// yOfL is the relative luminance of lightness L*.
func yOfL(l float64) float64 {
	f := (l + 16) / 116
	if f > 6.0/29 {
		return f * f * f
	}
	return 3 * (6.0 / 29) * (6.0 / 29) * (f - 4.0/29)
}
