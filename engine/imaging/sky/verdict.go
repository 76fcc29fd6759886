package sky

import (
	"fmt"
	"math"
	"slices"
)

// skyStats summarise a candidate sky region for the sky / no-sky decision.
type skyStats struct {
	fraction  float64 // of the frame
	top       float64 // share of the top row that is sky
	skyL      float64 // median L* of the sky
	groundL   float64 // 75th percentile L* of everything else
	skyTex    float64 // mean texture of the sky
	skyA      float64 // mean a*
	skyB      float64 // mean b*
	skyChroma float64 // mean chroma
	skyHued   float64 // share of sky pixels with a colour skies have: blue or bright white
	low       float64 // share of sky pixels in the bottom quarter of the frame
}

// skyColoured reports colours a daylight or dusk sky has: a blue to violet hue, or a
// bright near-white (overcast). Ceilings and walls lit by lamps are warm or dimmer.
func skyColoured(l, a, b float32) bool {
	if b <= -4 && (a <= 0 || b <= -1.2*a) {
		return true
	}
	return l >= 88 && a*a+b*b <= 64
}

func measure(f *features, sky []bool) skyStats {
	var s skyStats
	var sl, gl []float32
	n := 0
	for p, v := range sky {
		o := p * 3
		if !v {
			gl = append(gl, f.lab[o])
			continue
		}
		n++
		if p/f.w >= f.h*3/4 {
			s.low++
		}
		sl = append(sl, f.lab[o])
		s.skyTex += float64(f.tex[p])
		s.skyA += float64(f.lab[o+1])
		s.skyB += float64(f.lab[o+2])
		s.skyChroma += hypot32(f.lab[o+1], f.lab[o+2])
		if skyColoured(f.lab[o], f.lab[o+1], f.lab[o+2]) {
			s.skyHued++
		}
	}
	for x := 0; x < f.w; x++ {
		if sky[x] {
			s.top++
		}
	}
	s.top /= float64(f.w)
	s.fraction = float64(n) / float64(len(sky))
	if n > 0 {
		s.skyTex /= float64(n)
		s.skyA /= float64(n)
		s.skyB /= float64(n)
		s.skyChroma /= float64(n)
		s.skyHued /= float64(n)
		s.low /= float64(n)
		slices.Sort(sl)
		s.skyL = float64(sl[len(sl)/2])
	}
	if len(gl) > 0 {
		slices.Sort(gl)
		s.groundL = float64(gl[len(gl)*3/4])
	}
	return s
}

func (s skyStats) String() string {
	return fmt.Sprintf("frac=%.3f top=%.2f L=%.1f groundL75=%.1f tex=%.2f a=%.1f b=%.1f C=%.1f hued=%.2f low=%.2f",
		s.fraction, s.top, s.skyL, s.groundL, s.skyTex, s.skyA, s.skyB, s.skyChroma, s.skyHued, s.low)
}

// verdict returns why the candidate is not a sky, or "" when it is one.
func (s skyStats) verdict() string {
	switch {
	case s.fraction < minSkyShare:
		return fmt.Sprintf("the region at the top is too small to be sky (%.1f%% of the frame)", 100*s.fraction)
	case s.top < minTop:
		return fmt.Sprintf("the bright region covers only %.0f%% of the top edge: a wall or window, not sky", 100*s.top)
	case s.low > maxLow:
		return fmt.Sprintf("the bright region reaches down to the bottom of the frame (%.0f%% of it in the lowest quarter): a wall or window, not sky", 100*s.low)
	case s.skyHued < minHued:
		return fmt.Sprintf("the region at the top is not sky-coloured (%.0f%% blue or bright white): a ceiling, wall or view, not sky", 100*s.skyHued)
	case s.skyB <= blueSky:
		return ""
	case s.skyL >= overcastL && s.skyChroma <= overcastChroma && s.skyB <= 1 && s.skyL >= s.groundL+overcastLift:
		// White is the ambiguous colour (skylights, blown-out walls): an overcast sky
		// must also span a good part of the top edge.
		if s.top < minTopWhite {
			return fmt.Sprintf("the white region covers only %.0f%% of the top edge: a skylight, window or wall, not sky", 100*s.top)
		}
		return ""
	}
	return "the region at the top is neither blue nor a bright overcast: a ceiling or wall, not sky"
}

// Sky / no-sky thresholds (CIELAB).
const (
	minSkyShare    = 0.01 // of the frame
	minHued        = 0.6  // share of sky-coloured pixels in the region
	minTop         = 0.1  // share of the top row a sky covers at least
	maxLow         = 0.05 // share of a sky that may lie in the bottom quarter
	minTopWhite    = 0.25 // share of the top row an overcast (white) sky covers at least
	blueSky        = -6.0 // mean b* of a blue sky is at most this
	overcastL      = 88.0 // an overcast sky is nearly white...
	overcastChroma = 8.0  // ...neutral...
	overcastLift   = 10.0 // ...and brighter than the lit ground (its 75th percentile)
)

func hypot32(a, b float32) float64 {
	return math.Sqrt(float64(a)*float64(a) + float64(b)*float64(b))
}
