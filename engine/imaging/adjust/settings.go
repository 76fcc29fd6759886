// Package adjust applies the photographer's sliders, the controls of a raw
// developer's basic panel, to a linear-light image: exposure, white balance
// (temperature and tint), contrast, highlights, shadows, whites, blacks, vibrance and
// saturation. It renders the full image in place (Apply) and, for the window, a
// preview straight to 8-bit sRGB from a cached downscaled base (Preview).
//
// Every control is global: a pixel's result depends on that pixel alone. That keeps
// highlight recovery free of haloes, makes one render cost a handful of operations a
// pixel, and lets the 2048 px preview show exactly what the full render will do.
// Per pixel, in order:
//
//  1. White balance and exposure are one 3×3 matrix in linear sRGB: a Bradford
//     adaptation from the illuminant the sliders assume to the D65 reference (scaled
//     so gray keeps its luminance), times 2^Exposure.
//  2. Tone is one curve of a norm of the pixel (the mean of its largest channel and
//     its luminance), applied as a gain to all three channels so hues stay put.
//     Shadows and highlights are gains in stops under smooth masks of the level;
//     highlights -100 also folds about two stops above white (exposure pushed up)
//     back to white. Whites, blacks and contrast (an S-curve pivoting on mid-gray) work on
//     display-encoded values. The curve is tabulated once per Settings.
//  3. Vibrance and saturation scale chroma about luminance; vibrance favours muted
//     colours and spares skin-like hues.
//
// The result is clamped to 0..1, display-ready. Settings at zero are an exact
// identity: Apply leaves the image untouched.
package adjust

import (
	"fmt"
	"math"
)

// Slider ranges.
const (
	MaxExposure = 5   // stops either way
	MaxSlider   = 100 // every other slider runs -MaxSlider..MaxSlider
)

// Settings are the ten sliders. Exposure is in stops (-5..5), the others run
// -100..100; zero is neutral.
type Settings struct {
	Exposure    float64
	Temperature float64 // + warmer (about 2000 K at 100), - cooler
	Tint        float64 // + magenta, - green
	Contrast    float64
	Highlights  float64 // - recovers bright areas, + brightens them
	Shadows     float64 // + opens dark areas, - deepens them
	Whites      float64 // moves the white end
	Blacks      float64 // moves the black end
	Vibrance    float64 // saturation of muted colours, sparing skin
	Saturation  float64 // uniform chroma scale; -100 is gray
}

// IsZero reports whether s leaves every pixel as it is.
func (s Settings) IsZero() bool { return s == Settings{} }

// Validate reports a slider out of range or not a number.
func (s Settings) Validate() error {
	if !(math.Abs(s.Exposure) <= MaxExposure) {
		return fmt.Errorf("adjust: exposure %v outside -%d..%d", s.Exposure, MaxExposure, MaxExposure)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"temperature", s.Temperature}, {"tint", s.Tint}, {"contrast", s.Contrast},
		{"highlights", s.Highlights}, {"shadows", s.Shadows}, {"whites", s.Whites},
		{"blacks", s.Blacks}, {"vibrance", s.Vibrance}, {"saturation", s.Saturation},
	} {
		if !(math.Abs(f.v) <= MaxSlider) {
			return fmt.Errorf("adjust: %s %v outside -%d..%d", f.name, f.v, MaxSlider, MaxSlider)
		}
	}
	return nil
}
