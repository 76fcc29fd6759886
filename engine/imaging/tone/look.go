// Package tone renders a tonecraft look: white balance, exposure, edge-aware
// highlights, shadows and clarity, whites and blacks, contrast, a control-point tone
// curve, shadow cast removal, vibrance, saturation, warmth, auto-levels and
// sharpening, as real operations on linear-light float32 RGB.
//
// Everything but the local base layer and the sharpening blur is a per-pixel
// function, so a look runs as one full-resolution pass of lookup tables (plus one for
// sharpening). The base layer is a bilateral grid built from a downscaled copy and
// sliced at full resolution with each pixel's own luminance; the local controls
// (highlights, shadows, clarity) are baked into its cells, so they cost the same per
// pixel whichever are used. What a look measures (levels, the shadows' cast) it
// measures on the downscaled copy.
package tone

import (
	"fmt"
)

// Point is a tone-curve control point in display-encoded (sRGB) values 0..1: input X
// maps to output Y.
type Point struct{ X, Y float64 }

// Look is one set of tonecraft settings. The zero Look changes nothing. Sliders run
// -100..100 with 0 neutral, as photographers know them from raw editors.
type Look struct {
	// Temperature shifts the white balance along the daylight (Planckian) locus:
	// positive warmer, negative cooler; 100 is a shift of 80 mired.
	Temperature float64
	// Tint shifts white balance across the locus: positive magenta, negative green.
	Tint float64
	// Exposure is in stops (EV), -5..5.
	Exposure float64
	// Contrast steepens (positive) or flattens (negative) the midtones with an S-curve
	// that keeps black and white fixed.
	Contrast float64
	// Highlights darkens (negative) or brightens (positive) bright regions, and
	// Shadows lifts (positive) or deepens (negative) dark regions. Both act on an
	// edge-aware base layer of the luminance, so local detail and edges survive.
	Highlights float64
	Shadows    float64
	// Whites moves the top of the tone scale (positive brighter, toward clipping;
	// negative recovers values above white), Blacks the bottom (positive lifts,
	// negative crushes).
	Whites float64
	Blacks float64
	// Vibrance raises saturation mostly in muted colors and spares skin tones;
	// Saturation scales all color equally.
	Vibrance   float64
	Saturation float64
	// Warmth adds a golden grade to midtones and highlights, leaving shadows and
	// luminance alone.
	Warmth float64
	// Clarity raises (positive) or lowers (negative) local contrast: each pixel's
	// difference in stops from its edge-aware surroundings is scaled, so texture and
	// the view through a bright window gain definition without a halo at strong
	// edges. Deep shadows are spared, which keeps their noise down.
	Clarity float64
	// CleanShadows (0..100) removes the colour cast of the shadows: the mean tint of
	// the near-neutral dark areas, measured on the rendered image, is taken out of
	// the shadows and fades away toward the midtones, so a dim room's dark corners
	// turn neutral while its coloured objects keep their colour.
	CleanShadows float64
	// Curve is a monotone tone curve through control points in display values; empty
	// means none. (0,0) and (1,1) are implied when the curve does not reach the ends.
	Curve []Point
	// AutoLevels stretches the finished tones between robust black and white points
	// (0.5th and 99.5th luminance percentiles).
	AutoLevels bool
	// Sharpen applies a luminance unsharp mask whose radius grows with image size.
	Sharpen bool
}

// Validate reports the first setting out of range.
func (l Look) Validate() error {
	sliders := []struct {
		name string
		v    float64
	}{
		{"temperature", l.Temperature}, {"tint", l.Tint}, {"contrast", l.Contrast},
		{"highlights", l.Highlights}, {"shadows", l.Shadows}, {"whites", l.Whites},
		{"blacks", l.Blacks}, {"vibrance", l.Vibrance}, {"saturation", l.Saturation},
		{"warmth", l.Warmth}, {"clarity", l.Clarity},
	}
	for _, s := range sliders {
		if !(s.v >= -100 && s.v <= 100) {
			return fmt.Errorf("tone: %s %v is outside -100..100", s.name, s.v)
		}
	}
	if !(l.CleanShadows >= 0 && l.CleanShadows <= 100) {
		return fmt.Errorf("tone: clean shadows %v is outside 0..100", l.CleanShadows)
	}
	if !(l.Exposure >= -5 && l.Exposure <= 5) {
		return fmt.Errorf("tone: exposure %v is outside -5..5 EV", l.Exposure)
	}
	for i, p := range l.Curve {
		if !(p.X >= 0 && p.X <= 1 && p.Y >= 0 && p.Y <= 1) {
			return fmt.Errorf("tone: curve point %d (%v, %v) is outside 0..1", i, p.X, p.Y)
		}
		if i > 0 && !(p.X > l.Curve[i-1].X) {
			return fmt.Errorf("tone: curve point %d: x must increase (%v after %v)", i, p.X, l.Curve[i-1].X)
		}
	}
	return nil
}

// hasLocal reports whether the look needs the edge-aware base layer.
func (l Look) hasLocal() bool { return l.Highlights != 0 || l.Shadows != 0 || l.Clarity != 0 }

// hasColor reports whether the look has per-pixel color operations.
func (l Look) hasColor() bool {
	return l.Vibrance != 0 || l.Saturation != 0 || l.Warmth != 0 || l.CleanShadows != 0
}
