package privacy

import (
	"image"
	"sort"
)

// matches is the rule the face acceptance uses: a detection matches a ground-truth
// box when their IoU is at least 0.3, or when the detection's centre lies inside the
// box and the two widths and the two heights are each within a factor of 2.
func matches(det, truth image.Rectangle) bool {
	if iou(det, truth) >= 0.3 {
		return true
	}
	c := image.Pt((det.Min.X+det.Max.X)/2, (det.Min.Y+det.Max.Y)/2)
	if !c.In(truth) {
		return false
	}
	within := func(a, b int) bool { return a <= 2*b && b <= 2*a }
	return within(det.Dx(), truth.Dx()) && within(det.Dy(), truth.Dy())
}

func iou(a, b image.Rectangle) float64 {
	in := a.Intersect(b)
	if in.Empty() {
		return 0
	}
	ia := float64(in.Dx() * in.Dy())
	return ia / (float64(a.Dx()*a.Dy()+b.Dx()*b.Dy()) - ia)
}

// score matches detections to truth one to one, most confident first, and returns
// true positives, false positives and false negatives.
func score(dets []Detection, truth []image.Rectangle) (tp, fp, fn int) {
	d := append([]Detection(nil), dets...)
	sort.SliceStable(d, func(i, j int) bool { return d[i].Confidence > d[j].Confidence })
	used := make([]bool, len(truth))
	for _, x := range d {
		best, bestIoU := -1, -1.0
		for i, t := range truth {
			if used[i] || !matches(x.Box, t) {
				continue
			}
			if v := iou(x.Box, t); v > bestIoU {
				best, bestIoU = i, v
			}
		}
		if best >= 0 {
			used[best] = true
			tp++
		} else {
			fp++
		}
	}
	return tp, fp, len(truth) - tp
}
