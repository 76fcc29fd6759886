package sky

import (
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Style names, as in the order option sky_style.
const (
	StyleClear     = "clear"
	StyleLowCloud  = "low_cloud"
	StyleNeutral   = "neutral"
	StyleHighCloud = "high_cloud"
)

// Styles lists the accepted styles.
func Styles() []string { return []string{StyleClear, StyleLowCloud, StyleNeutral, StyleHighCloud} }

// cloudKind selects the cloud field drawn over the gradient.
type cloudKind int

const (
	noClouds cloudKind = iota
	cumulus            // puffy, lit from above, gathered towards the horizon
	cirrus             // high, thin, wind-drawn streaks
	overcast           // soft, even, low-contrast cover
)

// look is one style: a vertical gradient taken from photographs of real skies (sRGB
// codes, zenith at the top of the frame, horizon at the skyline) and a cloud field.
type look struct {
	zenith, horizon [3]float32 // linear RGB
	clouds          cloudKind
	lit, shade      [3]float32 // cloud colour in light and in its own shadow
	seed            uint32
	scale           float32 // cloud features per unit of the cloud plane
	e0              float32 // flattens the perspective of the cloud layer (higher = flatter)
}

func lin(r, g, b float32) [3]float32 {
	return [3]float32{imaging.SRGBToLinear(r / 255), imaging.SRGBToLinear(g / 255), imaging.SRGBToLinear(b / 255)}
}

func lookOf(style string) (look, bool) {
	switch style {
	case StyleClear:
		return look{zenith: lin(52, 116, 204), horizon: lin(178, 208, 238), seed: 0x6c656172}, true
	case StyleHighCloud:
		return look{zenith: lin(44, 108, 200), horizon: lin(170, 202, 236), clouds: cirrus,
			lit: lin(250, 252, 255), shade: lin(214, 226, 242), seed: 0x63697272, scale: 0.9, e0: 0.3}, true
	case StyleLowCloud:
		return look{zenith: lin(58, 124, 212), horizon: lin(184, 210, 238), clouds: cumulus,
			lit: lin(252, 252, 252), shade: lin(160, 170, 188), seed: 0x63756d75, scale: 1.6, e0: 0.25}, true
	case StyleNeutral:
		return look{zenith: lin(128, 164, 212), horizon: lin(204, 216, 232), clouds: overcast,
			lit: lin(246, 247, 250), shade: lin(198, 205, 218), seed: 0x6e657574, scale: 0.8, e0: 0.2}, true
	}
	return look{}, false
}

// skyGeometry places the synthetic sky: a pinhole camera of focal length f (pixels)
// looking at a horizon on row horizon, with a flat cloud layer above it.
type skyGeometry struct {
	w, h     int
	horizon  float32
	focal    float32
	exposure float32 // multiplies the gradient and clouds to sit at the photo's exposure
}

// renderSky draws the style over the rows and columns where want is set (others stay
// zero) at w x h, linear RGB.
func renderSky(lk look, geo skyGeometry, want []bool) *imaging.Image {
	w, h := geo.w, geo.h
	out := imaging.New(w, h, 3)
	cx := float32(w) / 2
	eTop := geo.horizon / geo.focal // elevation tangent of the top row
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			e := (geo.horizon - float32(y) - 0.5) / geo.focal
			tn := imaging.Clamp01(e / eTop)
			// The blue deepens fast above the horizon haze, then slowly to the zenith.
			k := 1 - pow32(1-tn, 2.2)
			var base [3]float32
			for c := 0; c < 3; c++ {
				base[c] = lk.horizon[c] + k*(lk.zenith[c]-lk.horizon[c])
			}
			row := out.Row(y)
			ec := max(e, 0.004)
			z := 1 / (ec + lk.e0) // distance along the cloud layer
			haze := smoothstep(0.01, 0.10, e)
			for x := 0; x < w; x++ {
				if !want[y*w+x] {
					continue
				}
				// A gentle brightening towards one side, as skies have away from the sun.
				side := 1 + 0.06*(float32(x)/float32(w)-0.5)
				px := [3]float32{base[0] * side, base[1] * side, base[2] * side}
				if lk.clouds != noClouds && haze > 0 {
					u := (float32(x) - cx) / geo.focal * z * lk.scale
					v := z * lk.scale
					a, lit := cloudAt(lk, u, v, tn)
					a *= haze
					if a > 0 {
						for c := 0; c < 3; c++ {
							cc := lk.shade[c] + lit*(lk.lit[c]-lk.shade[c])
							px[c] += a * (cc - px[c])
						}
					}
				}
				o := x * 3
				row[o] = px[0] * geo.exposure
				row[o+1] = px[1] * geo.exposure
				row[o+2] = px[2] * geo.exposure
			}
		}
	})
	return out
}

// cloudAt returns the cloud opacity and how lit it is (0 = own shadow, 1 = sunlit) at
// cloud-plane point (u, v); tn is the normalised height in the frame (0 horizon, 1 top).
func cloudAt(lk look, u, v, tn float32) (alpha, lit float32) {
	s := lk.seed
	switch lk.clouds {
	case cumulus:
		// Heaps have height: squash depth so they stand taller than flat blobs would.
		v *= 0.5
		// Domain warp bends the blobs into billows.
		wu := fbm(u*0.6+3.1, v*0.6+1.7, 3, 0.5, s+1)
		wv := fbm(u*0.6-2.3, v*0.6+8.2, 3, 0.5, s+2)
		pu, pv := u+0.35*wu, v+0.35*wv
		// Billowed detail (|noise|) on top of the body gives cauliflower edges.
		// A light touch: strong fine detail frays the edges into spikes.
		d := fbm(pu, pv, 5, 0.5, s) + 0.12*(ridged(pu*3, pv*3, 3, 0.5, s+3)-0.6)
		// Fair-weather cumulus gather low in the sky; the top stays mostly clear.
		cover := -0.1 + 0.6*tn
		alpha = smoothstep(cover, cover+0.2, d)
		if alpha <= 0 {
			return 0, 0
		}
		// Light comes from above: density just above the point shades it.
		up := fbm(pu, pv-0.1, 4, 0.5, s)
		lit = imaging.Clamp01(1.1 - 3.2*max(0, up-cover))
		return alpha, lit
	case cirrus:
		// Cirrus come in clumps: wisps of fine, wind-combed fibres that thin out at
		// their ends, over a faint veil, with clear sky between the clumps. The fibres
		// are ridged noise stretched along a slanted wind direction and bent by a
		// medium-scale warp, so they curl and fan out instead of running parallel.
		const ca, sa = 0.9396926, 0.3420201 // 20 degrees
		ru, rv := ca*u-sa*v, sa*u+ca*v
		wu := fbm(u*0.7+9.1, v*0.7-4.4, 4, 0.5, s+1)
		wv := fbm(u*0.7-3.7, v*0.7+2.9, 4, 0.5, s+4)
		pu, pv := ru+1.1*wu, rv+0.6*wv
		// Fibres short enough to fray and end inside a clump: long unbroken ridges read
		// as streaks, not as cloud.
		fibres := pow32(ridged(pu*2.6, pv*6.5, 4, 0.55, s), 2.2)
		breakup := smoothstep(-0.35, 0.45, fbm(pu*1.9+7.7, pv*2.3-1.9, 4, 0.55, s+6))
		// Clumps: a low-frequency density, sharpened so the sky between stays clear.
		clump := smoothstep(0.0, 0.7, fbm(pu*0.45+2.2, pv*0.9+6.6, 4, 0.5, s+2))
		// The fibres brighten and fray inside a clump: fine detail varies their strength.
		detail := 0.5 + 0.5*fbm(pu*3.1+1.1, pv*7.3-2.2, 3, 0.5, s+3)
		// A soft, mottled body under the fibres: cirrus are thin ice haze with texture,
		// not lines painted on the blue.
		body := smoothstep(-0.2, 0.8, fbm(pu*1.3+5.5, pv*2.2+0.4, 5, 0.55, s+5))
		veil := 0.45 * clump * body
		alpha = imaging.Clamp01(clump*fibres*breakup*detail*1.1+veil) * (0.5 + 0.5*tn)
		return alpha, 0.75 + 0.25*clump
	case overcast:
		wu := fbm(u*0.4+1.3, v*0.4+5.1, 3, 0.5, s+1)
		d := fbm(u+0.8*wu, v*1.6+0.8*wu, 5, 0.55, s)
		alpha = imaging.Clamp01(0.5 + 0.45*d)
		lit = imaging.Clamp01(0.55 + 0.9*fbm(u*0.8+4.4, v*1.2-3.3, 4, 0.5, s+2))
		return alpha, lit
	}
	return 0, 0
}

func smoothstep(a, b, v float32) float32 {
	t := imaging.Clamp01((v - a) / (b - a))
	return t * t * (3 - 2*t)
}

func pow32(v, p float32) float32 {
	if v <= 0 {
		return 0
	}
	return float32(math.Pow(float64(v), float64(p)))
}
