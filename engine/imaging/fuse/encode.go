package fuse

import "github.com/porchlight/porchlight/engine/imaging"

// Weights and blending work on sRGB-encoded values, as Mertens et al. do on
// display-referred images; the output is decoded back to linear light once.

const encSteps = 1 << 14

// encLUT maps linear light in 0..1 (in encSteps steps) to sRGB-encoded 0..1. Near black
// a step is 0.2 of an 8-bit code, far below what the weights can tell apart.
var encLUT = func() []float32 {
	t := make([]float32, encSteps+1)
	for i := range t {
		t[i] = imaging.LinearToSRGB(float32(i) / encSteps)
	}
	return t
}()

// enc encodes one linear sample, clamping to 0..1 (NaN becomes 0).
func enc(v float32) float32 {
	// NaN converts to an out-of-range integer, which the clamp maps to 0.
	i := int(v*encSteps + 0.5)
	return encLUT[min(max(i, 0), encSteps)]
}

// dec decodes one sRGB-encoded sample to linear light, clamping to 0..1.
func dec(v float32) float32 {
	i := int(v*65535 + 0.5)
	return imaging.Decode16(uint16(min(max(i, 0), 65535)))
}
