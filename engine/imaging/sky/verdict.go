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
		sl = append(sl, f.lab[o])
		s.skyTex += float64(f.tex[p])
		s.skyA += float64(f.lab[o+1])
		s.skyB += float64(f.lab[o+2])
		s.skyChroma += hypot32(f.lab[o+1], f.lab[o+2])
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
	return fmt.Sprintf("frac=%.3f top=%.2f L=%.1f groundL75=%.1f tex=%.2f a=%.1f b=%.1f C=%.1f",
		s.fraction, s.top, s.skyL, s.groundL, s.skyTex, s.skyA, s.skyB, s.skyChroma)
}

// verdict returns why the candidate is not a sky, or "" when it is one.
func (s skyStats) verdict() string {
	if s.fraction == 0 {
		return "no sky-coloured region reaches the top edge"
	}
	return ""
}

func hypot32(a, b float32) float64 {
	return math.Sqrt(float64(a)*float64(a) + float64(b)*float64(b))
}
