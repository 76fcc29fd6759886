package fuse

import "github.com/porchlight/porchlight/engine/imaging"

// Deghosting: where a bracket, brought to the reference's exposure through the
// intensity mapping between the two, disagrees with the reference (something moved),
// its weight drops, so the moving thing appears once, as the reference shows it.
// A clipped or crushed sample still bounds the scene: a bracket blown out where the
// reference shows a mid-tone that should not blow out at the bracket's exposure
// disagrees too. Only where both are clipped is there no evidence.

// Usable range of encoded luma for comparing brackets.
const (
	ghostLow  = 0.04
	ghostHigh = 0.94
)

// Disagreement (encoded luma, after mapping) where the weight starts to drop and where
// it is gone.
const (
	ghostStart = 0.06
	ghostFull  = 0.18
)

// consistency returns, for bracket lum, a factor in (0, 1] per sample: 1 where it
// agrees with the reference ref, small where it does not. strength scales the effect.
func consistency(lum, ref *plane, strength float32) *plane {
	imf := intensityMap(lum, ref)
	w, h := lum.w, lum.h
	d := newPlane(w, h)
	rLow, rHigh := imf[bin(ghostLow)], imf[bin(ghostHigh)] // bounds of a's clipping in the reference's terms
	imaging.Bands(h, func(_, y0, y1 int) {
		for i := y0 * w; i < y1*w; i++ {
			a, r := lum.pix[i], ref.pix[i]
			var v float32
			switch {
			case a > ghostHigh: // bracket blown: the scene is at least rHigh
				v = max(0, rHigh-r)
			case a < ghostLow: // bracket crushed: the scene is at most rLow
				v = max(0, r-rLow)
			case r > ghostHigh: // reference blown: the scene is at least that bright
				v = max(0, ghostHigh-imf[bin(a)])
			case r < ghostLow:
				v = max(0, imf[bin(a)]-ghostLow)
			default:
				v = abs32(imf[bin(a)] - r)
			}
			d.pix[i] = v
		}
	})
	// Average over a small neighbourhood so noise does not trigger it, then spread it a
	// little so the edges of a moving object go too.
	d = blur5(blur5(d))
	out := newPlane(w, h)
	for i, v := range d.pix {
		out.pix[i] = 1 - strength*(1-1e-3)*smoothstep(ghostStart, ghostFull, v)
	}
	return out
}

const imfBins = 256

func bin(v float32) int {
	return min(max(int(v*(imfBins-1)+0.5), 0), imfBins-1)
}

// intensityMap estimates the tone curve taking a's luma to b's by histogram matching
// (the cumulative histograms of a static scene at two exposures correspond), returned
// as a table over imfBins levels of a.
func intensityMap(a, b *plane) []float32 {
	var ha, hb [imfBins]float64
	for i := range a.pix {
		ha[bin(a.pix[i])]++
		hb[bin(b.pix[i])]++
	}
	n := float64(len(a.pix))
	var ca, cb [imfBins]float64
	var s float64
	for i, v := range ha {
		ca[i] = (s + v/2) / n
		s += v
	}
	s = 0
	for i, v := range hb {
		s += v
		cb[i] = s / n
	}
	out := make([]float32, imfBins)
	j := 0
	for i := range out {
		for j < imfBins-1 && cb[j] < ca[i] {
			j++
		}
		// Interpolate inside bin j of b.
		lo := 0.0
		if j > 0 {
			lo = cb[j-1]
		}
		t := 0.5
		if cb[j] > lo {
			t = (ca[i] - lo) / (cb[j] - lo)
		}
		out[i] = float32((float64(j) - 0.5 + t) / (imfBins - 1))
	}
	return out
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

// replaceGhosts swaps the content of a bracket for the reference's, mapped to the
// bracket's exposure channel by channel, where cons says they disagree. Lowering the
// weight alone is not enough: the coarse pyramid levels average weights over large
// areas and would bring a faint copy back.
func replaceGhosts(im, ref rgb, cons *plane) {
	for c := range 3 {
		imf := intensityMap(ref[c], im[c])
		p, r := im[c].pix, ref[c].pix
		for i, k := range cons.pix {
			if k < 1 {
				v := imf[bin(r[i])]
				p[i] = k*p[i] + (1-k)*v
			}
		}
	}
}
