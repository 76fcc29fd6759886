package tone

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Rec. 709 / sRGB luminance weights of linear RGB.
const (
	lumR = 0.2126
	lumG = 0.7152
	lumB = 0.0722
)

const (
	refCCT          = 6504.0 // the neutral reference: daylight at about D65
	miredPerUnit    = 0.8    // Temperature 100 moves the assumed illuminant 80 mired
	tintStopsAt100  = 0.4    // Tint 100 takes 0.4 stop off green
	minCCT, maxCCT  = 1667.0, 25000.0
	tempSliderRange = 100.0
)

// whiteBalanceGains returns per-channel linear gains for a temperature and tint shift,
// scaled so that a neutral gray keeps its luminance. The image is rendered as if it
// had been lit by a blackbody of a different temperature than the reference and then
// balanced to the reference: positive temperature assumes a bluer light, so the
// balance adds warmth (a von Kries scaling in linear sRGB).
func whiteBalanceGains(temperature, tint float64) [3]float64 {
	g := [3]float64{1, 1, 1}
	if temperature != 0 {
		mired := 1e6/refCCT - miredPerUnit*temperature
		cct := math.Min(maxCCT, math.Max(minCCT, 1e6/mired))
		ref := PlanckianRGB(refCCT)
		ill := PlanckianRGB(cct)
		for c := range g {
			g[c] = ref[c] / ill[c]
		}
	}
	if tint != 0 {
		g[1] *= math.Exp2(-tintStopsAt100 * tint / tempSliderRange)
	}
	y := lumR*g[0] + lumG*g[1] + lumB*g[2]
	for c := range g {
		g[c] /= y
	}
	return g
}

// PlanckianRGB is the linear sRGB color (luminance 1) of a blackbody at cct kelvin,
// from the cubic fit of the Planckian locus by Kim et al. (2002), valid 1667-25000 K.
func PlanckianRGB(cct float64) [3]float64 {
	x, y := imaging.PlanckXY(cct)
	X, Y, Z := x/y, 1.0, (1-x-y)/y
	return [3]float64{
		3.2404542*X - 1.5371385*Y - 0.4985314*Z,
		-0.9692660*X + 1.8760108*Y + 0.0415560*Z,
		0.0556434*X - 0.2040259*Y + 1.0572252*Z,
	}
}
