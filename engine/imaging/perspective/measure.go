package perspective

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// The tilt measure counts segments leaning at most measureLeanDeg from vertical and at
// least measureMinLength image heights long (architecture, not book spines).
const (
	measureLeanDeg   = 20.0
	measureMinLength = 0.05
)

// MedianTilt measures how far the verticals of img lean: the length-weighted median
// of |tilt| in degrees over the near-vertical segments found on the same plane the
// estimate uses (long side at most 1400 pixels), and how many there were. It is NaN
// for a photo without such segments. Tests and benchmarks use it to hold a corrected
// photo to a target; scripts/tilt_lines.py is the same measure with OpenCV's
// detectors.
func MedianTilt(img *imaging.Image) (float64, int) {
	gray, w, h, _ := grayPlane(img, estimateSide)
	segs := nearVertical(gray, w, h, measureLeanDeg, measureMinLength*float64(h))
	type tw struct{ t, w float64 }
	var v []tw
	total := 0.0
	for _, s := range segs {
		l := s.length()
		v = append(v, tw{math.Abs(s.tiltDeg()), l})
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
