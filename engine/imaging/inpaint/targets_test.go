package inpaint

import (
	"context"
	"math"
	"testing"
)

// anchorFigure is an anchor's score on one synthetic case: SSIM in the hole, seam,
// gradient ratio to the truth and histogram distance to the ring.
type anchorFigure struct{ ssim, seam, grad, hist float64 }

// anchorFigures are the anchors' scores on the synthetic cases of benchCases, as
// measured by make bench-eraser (which prints this table): the anchors take minutes
// a case, too long to run with the tests, and their fills do not change.
var anchorFigures = map[string]map[string]anchorFigure{
	"houses_109_bedroom/3%":  {"telea": {0.6883, 0.2278, 0.5567, 0.2204}, "ns": {0.6961, 0.2560, 0.5396, 0.2419}, "shiftmap": {0.4846, 1.0988, 1.1553, 0.2020}, "fsr_best": {0.7136, 0.1593, 0.6083, 0.2392}, "gmic": {0.5410, 0.1746, 1.6293, 0.1906}},
	"houses_109_bedroom/8%":  {"telea": {0.7625, 0.2345, 0.7004, 0.1773}, "ns": {0.7603, 0.2379, 0.7426, 0.1572}, "shiftmap": {0.7705, 0.4630, 0.8260, 0.1529}, "fsr_best": {0.8561, 0.1342, 0.7362, 0.1962}, "gmic": {0.5464, 0.2675, 2.5651, 0.1760}},
	"houses_109_bedroom/15%": {"telea": {0.7584, 0.4682, 0.6944, 0.2283}, "ns": {0.7632, 0.4727, 0.6399, 0.1862}, "shiftmap": {0.6823, 1.0025, 1.1927, 0.0868}, "fsr_best": {0.7484, 0.3615, 0.7120, 0.2792}, "gmic": {0.5275, 1.1123, 2.9359, 0.2190}},
	"houses_218_kitchen/3%":  {"telea": {0.2482, 0.4132, 0.3135, 0.3998}, "ns": {0.2466, 0.3920, 0.3303, 0.3865}, "shiftmap": {0.1489, 0.4899, 0.6636, 0.2862}, "fsr_best": {0.2644, 0.2114, 0.4906, 0.2906}, "gmic": {0.1514, 0.3938, 1.1813, 0.2111}},
	"houses_218_kitchen/8%":  {"telea": {0.2692, 0.4454, 0.2105, 0.3170}, "ns": {0.2998, 0.4363, 0.2189, 0.3045}, "shiftmap": {0.1388, 0.7914, 0.5920, 0.1804}, "fsr_best": {0.3076, 0.1939, 0.3056, 0.3017}, "gmic": {0.1444, 0.7613, 0.9848, 0.2258}},
	"houses_218_kitchen/15%": {"telea": {0.3513, 0.2765, 0.2022, 0.3183}, "ns": {0.3522, 0.2719, 0.2327, 0.2925}, "shiftmap": {0.2902, 0.5081, 0.7438, 0.1636}, "fsr_best": {0.3743, 0.1304, 0.2633, 0.3014}, "gmic": {0.2282, 0.4894, 1.1347, 0.2168}},
	"houses_111_bedroom/3%":  {"telea": {0.3655, 0.2783, 0.4301, 0.3635}, "ns": {0.3666, 0.2598, 0.4453, 0.3468}, "shiftmap": {0.1758, 0.5731, 0.6289, 0.3495}, "fsr_best": {0.3949, 0.1631, 0.7156, 0.2565}, "gmic": {0.2013, 0.4269, 1.4267, 0.1934}},
	"houses_111_bedroom/8%":  {"telea": {0.5507, 0.2580, 0.2980, 0.2792}, "ns": {0.5360, 0.2399, 0.3362, 0.2353}, "shiftmap": {0.4892, 0.6243, 0.5088, 0.2744}, "fsr_best": {0.5863, 0.1223, 0.5688, 0.2201}, "gmic": {0.3340, 0.3557, 1.8413, 0.2073}},
	"houses_111_bedroom/15%": {"telea": {0.4156, 0.2875, 0.2502, 0.2709}, "ns": {0.4025, 0.2699, 0.2789, 0.2769}, "shiftmap": {0.3003, 0.5775, 0.9031, 0.1659}, "fsr_best": {0.3976, 0.1546, 0.4044, 0.2149}, "gmic": {0.2899, 0.4859, 1.2715, 0.2044}},
	"houses_117_frontal/3%":  {"telea": {0.3481, 0.3717, 0.2997, 0.3450}, "ns": {0.3392, 0.3611, 0.3013, 0.3765}, "shiftmap": {0.3190, 0.4756, 0.8193, 0.2645}, "fsr_best": {0.4113, 0.1957, 0.4132, 0.2964}, "gmic": {0.1964, 1.0870, 1.4313, 0.3049}},
	"houses_117_frontal/8%":  {"telea": {0.4314, 0.3601, 0.3120, 0.2793}, "ns": {0.4319, 0.3317, 0.3260, 0.2861}, "shiftmap": {0.4386, 0.3126, 0.8227, 0.2079}, "fsr_best": {0.4847, 0.1609, 0.4587, 0.2732}, "gmic": {0.2526, 0.4636, 2.3355, 0.2893}},
	"houses_117_frontal/15%": {"telea": {0.3831, 0.4912, 0.3302, 0.3229}, "ns": {0.3779, 0.4640, 0.3571, 0.3248}, "shiftmap": {0.3544, 0.7302, 0.7596, 0.1475}, "fsr_best": {0.4146, 0.2974, 0.4501, 0.3051}, "gmic": {0.2083, 0.8086, 2.0295, 0.2624}},
	"houses_191_frontal/3%":  {"telea": {0.3704, 0.4657, 0.2320, 0.3685}, "ns": {0.3623, 0.4405, 0.2467, 0.3566}, "shiftmap": {0.2624, 0.4105, 0.6541, 0.2388}, "fsr_best": {0.3789, 0.2820, 0.5906, 0.2653}, "gmic": {0.1598, 0.4072, 1.6758, 0.3271}},
	"houses_191_frontal/8%":  {"telea": {0.1532, 0.5393, 0.1962, 0.4510}, "ns": {0.1492, 0.5224, 0.2012, 0.4544}, "shiftmap": {0.0742, 0.9592, 0.6543, 0.1867}, "fsr_best": {0.1828, 0.3286, 0.4037, 0.3692}, "gmic": {0.1001, 0.6328, 1.4820, 0.3704}},
	"houses_191_frontal/15%": {"telea": {0.3190, 0.4577, 0.2026, 0.3451}, "ns": {0.3234, 0.4386, 0.1972, 0.3453}, "shiftmap": {0.2795, 0.6150, 0.3643, 0.2438}, "fsr_best": {0.3283, 0.2477, 0.3237, 0.2517}, "gmic": {0.2491, 0.5104, 1.1107, 0.1958}},
}

// shortOf are the targets the eraser does not meet yet, each with why: the test logs
// them instead of failing, and fails on any other. Remove an entry once it is met.
var shortOf = map[string]string{}

// Targets on synthetic holes.
const (
	targetShare   = 0.8 // seam and histogram distance better than each anchor on this share of cases
	targetGradMin = 0.7 // gradient ratio to the truth, every case
	targetGradMax = 1.3
)

// TestEraserTargets fills the benchmark's synthetic blob holes and holds ours to the
// targets against the anchors' recorded figures: seam and histogram distance better
// than every anchor on average and on at least targetShare of the cases, the gradient
// ratio to the truth within [targetGradMin, targetGradMax] on every case (a smear is
// far below), and SSIM in the hole on average not below the best patch-based anchor
// (shift-map, G'MIC). SSIM favours smooth fills over copied texture, so it is no
// target against Telea and Navier-Stokes.
func TestEraserTargets(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 15 holes; run without -short")
	}
	miss := func(key, format string, args ...any) {
		if why, ok := shortOf[key]; ok {
			t.Logf("target not met (known: %s): "+format, append([]any{why}, args...)...)
			return
		}
		t.Errorf(format, args...)
	}
	var ours []benchScore
	var names []string
	for _, c := range benchCases(t) {
		if !c.synthetic {
			continue
		}
		ref, ok := anchorFigures[c.name]
		if !ok {
			t.Fatalf("%s: no anchor figures; rerun make bench-eraser and update anchorFigures", c.name)
		}
		out, err := Erase(context.Background(), blank(c.img, c.mask), c.mask, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := scoreFill(c, out, true)
		t.Logf("%-24s ours SSIM %.3f seam %.3f grad %.2f hist %.3f | best anchor seam %.3f hist %.3f",
			c.name, s.ssim, s.seam, s.grad, s.hist, minOver(ref, func(f anchorFigure) float64 { return f.seam }),
			minOver(ref, func(f anchorFigure) float64 { return f.hist }))
		if s.grad < targetGradMin || s.grad > targetGradMax {
			miss("grad "+c.name, "%s: gradient ratio %.2f outside [%.1f, %.1f]", c.name, s.grad, targetGradMin, targetGradMax)
		}
		ours = append(ours, s)
		names = append(names, c.name)
	}
	// Each anchor is compared on the cases it filled within the benchmark's time
	// limit (FSR_BEST can run out on the larger holes on a busy machine), ours over the
	// same cases.
	bestPatchSSIM, oursPatchSSIM := 0.0, 0.0
	for _, a := range anchors {
		var seam, hist, ssim, oSeam, oHist, oSSIM, n float64
		winSeam, winHist := 0, 0
		for i, name := range names {
			f, ok := anchorFigures[name][a]
			if !ok {
				continue
			}
			n++
			seam += f.seam
			hist += f.hist
			ssim += f.ssim
			oSeam += ours[i].seam
			oHist += ours[i].hist
			oSSIM += ours[i].ssim
			if ours[i].seam < f.seam {
				winSeam++
			}
			if ours[i].hist < f.hist {
				winHist++
			}
		}
		if n == 0 {
			t.Errorf("no recorded figures for %s", a)
			continue
		}
		seam, hist, ssim, oSeam, oHist, oSSIM = seam/n, hist/n, ssim/n, oSeam/n, oHist/n, oSSIM/n
		t.Logf("vs %-9s on %2.0f cases: seam %.3f/%.3f (ours better on %d), hist %.3f/%.3f (better on %d), SSIM %.3f/%.3f",
			a, n, oSeam, seam, winSeam, oHist, hist, winHist, oSSIM, ssim)
		if oSeam >= seam {
			miss("seam-mean "+a, "mean seam %.3f, not below %s's %.3f", oSeam, a, seam)
		}
		if oHist >= hist {
			miss("hist-mean "+a, "mean histogram distance %.3f, not below %s's %.3f", oHist, a, hist)
		}
		if float64(winSeam) < targetShare*n {
			miss("seam-share "+a, "seam better than %s on %d of %.0f cases, want %.0f%%", a, winSeam, n, 100*targetShare)
		}
		if float64(winHist) < targetShare*n {
			miss("hist-share "+a, "histogram distance better than %s on %d of %.0f cases, want %.0f%%", a, winHist, n, 100*targetShare)
		}
		if (a == "shiftmap" || a == "gmic") && ssim-oSSIM > bestPatchSSIM-oursPatchSSIM {
			bestPatchSSIM, oursPatchSSIM = ssim, oSSIM
		}
	}
	if oursPatchSSIM < bestPatchSSIM {
		miss("ssim", "mean SSIM %.3f, below the best patch-based anchor's %.3f on the same cases", oursPatchSSIM, bestPatchSSIM)
	}
}

func minOver(m map[string]anchorFigure, f func(anchorFigure) float64) float64 {
	v := math.Inf(1)
	for _, a := range m {
		v = math.Min(v, f(a))
	}
	return v
}
