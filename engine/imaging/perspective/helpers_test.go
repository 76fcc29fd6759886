package perspective

import (
	_ "image/jpeg"
	_ "image/png"
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var loadPhoto = imagingtest.LoadPhoto

// The tilt metric counts segments leaning at most nearVerticalDeg from vertical and at
// least metricMinLength image heights long (architecture, not book spines).
const (
	nearVerticalDeg = 20.0
	metricMinLength = 0.05
)

// medianTilt is the length-weighted median of |tilt| over near-vertical segments
// (degrees), and their count.
func medianTilt(img *imaging.Image) (float64, int) {
	gray, w, h, _ := grayPlane(img, estimateSide)
	segs := nearVertical(gray, w, h, nearVerticalDeg, metricMinLength*float64(h))
	type tw struct{ t, w float64 }
	var v []tw
	total := 0.0
	for _, s := range segs {
		l := s.length()
		t := math.Abs(s.tiltDeg())
		v = append(v, tw{t, l})
		total += l
	}
	if len(v) == 0 {
		return math.NaN(), 0
	}
	sort.Slice(v, func(i, j int) bool { return v[i].t < v[j].t })
	acc := 0.0
	for _, e := range v {
		acc += e.w
		if acc >= total/2 {
			return e.t, len(v)
		}
	}
	return v[len(v)-1].t, len(v)
}
