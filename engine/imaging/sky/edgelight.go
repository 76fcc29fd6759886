package sky

import (
	"math"
)

// Edge lighting. A surface at the skyline carries the old sky's light: the sunlit
// top of a coping or a metal flashing mirrors the blue above it, leaf edges take its
// fill light. Those colours are the surface's own, no mix with the sky that
// decontamination could undo, yet over a new sky they read as a rim of the old one.
// Within the first pixels of the skyline the compositor swaps that light for the new
// sky's (as the lighting adjustment of a sky replacement in an editor does): the part
// of the foreground colour along the old sky beyond the local ground's own is moved
// from the old sky's colour to the new one's. It is full next to the matte and fades
// out lightReach (of the long edge) away, so a genuinely pale-blue object keeps its
// colour past the skyline's first pixels.
//
// Only light in excess of the local ground, of the sky's hue, counts. A pixel darker
// than the ground beside it (a shadowed coping under a white parapet, a dark fascia
// against a pale sky) reads as "towards the sky" wherever the sky is darker than the
// ground, but it is shade, not sky light; a surface whose hue runs against the sky's
// (brick against blue) is brighter than a dark roof beside it without any of the
// sky's light. Relighting either would paint a line of the new sky's colour along it.
// Both are judged on the photo's pixel, before decontamination: where the matte
// overstates alpha, the foreground estimate has lost the sky's hue that the surface
// shows.
const (
	lightSeed  = 0.25      // refined alpha from which a guide pixel is part of the skyline
	lightReach = 1.0 / 192 // of the long edge: where the edge lighting has faded out (at least 2 px)
	lightMax   = 1.0       // the most of the old sky's colour swapped, of the sky minus the ground
	lightRamp  = 0.04      // sRGB luma above the local ground over which the swap fades in
	lightHue   = 0.25      // hue against the sky's (of the sky's own, off grey) at which the swap has faded out
)

// edgeLight returns, per guide pixel, the weight of the edge lighting (1 in and next
// to the refined matte, fading with the distance from it to 0 at lightReach) and the
// guide rows with any weight.
func (a *analysis) edgeLight() ([]float32, []bool) {
	w, h := a.guide.W(), a.guide.H()
	r := max(2, float32(max(w, h))*lightReach)
	const far = float32(1 << 20)
	d := make([]float32, w*h)
	for p, m := range a.mask {
		if m < lightSeed {
			d[p] = far
		}
	}
	// Two-pass chamfer distance (1, sqrt 2) to the skyline.
	const diag = float32(math.Sqrt2)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := y*w + x
			v := d[p]
			if v == 0 {
				continue
			}
			if x > 0 {
				v = min(v, d[p-1]+1)
			}
			if y > 0 {
				v = min(v, d[p-w]+1)
				if x > 0 {
					v = min(v, d[p-w-1]+diag)
				}
				if x < w-1 {
					v = min(v, d[p-w+1]+diag)
				}
			}
			d[p] = v
		}
	}
	rows := make([]bool, h)
	for y := h - 1; y >= 0; y-- {
		for x := w - 1; x >= 0; x-- {
			p := y*w + x
			v := d[p]
			if v != 0 {
				if x < w-1 {
					v = min(v, d[p+1]+1)
				}
				if y < h-1 {
					v = min(v, d[p+w]+1)
					if x < w-1 {
						v = min(v, d[p+w+1]+diag)
					}
					if x > 0 {
						v = min(v, d[p+w-1]+diag)
					}
				}
				d[p] = v
			}
		}
	}
	// The weight is written only once both passes are done with a row's neighbours.
	for p, v := range d {
		e := min(1, max(0, (r-v)/(r-1)))
		d[p] = e
		if e > 0 {
			rows[p/w] = true
		}
	}
	return d, rows
}

// relight swaps the old sky's light in the foreground colour f of the photo's pixel
// in for the new sky's, with weight e (see above). The old sky's part is measured in
// sRGB, as the eye sees a tint: f's projection on the segment from the local ground
// fLoc to the old sky sOld, at most lightMax. It fades in over lightRamp as the
// pixel's luma rises above the ground's and out as its hue turns against the sky's.
func relight(f *[3]float32, in []float32, e float32, sOld, fLoc, sNew *[3]float32) {
	var fs, is, gs, ss [3]float32
	for c := 0; c < 3; c++ {
		fs[c], is[c], gs[c], ss[c] = srgb(f[c]), srgb(in[c]), srgb(fLoc[c]), srgb(sOld[c])
	}
	gate := (srgbLuma3(is) - srgbLuma3(gs)) / lightRamp
	if gate <= 0 {
		return
	}
	var fu, uu, ic, uc float32
	im := (is[0] + is[1] + is[2] - gs[0] - gs[1] - gs[2]) / 3
	um := (ss[0] + ss[1] + ss[2] - gs[0] - gs[1] - gs[2]) / 3
	for c := 0; c < 3; c++ {
		u := ss[c] - gs[c]
		fu += (fs[c] - gs[c]) * u
		uu += u * u
		ic += (is[c] - gs[c] - im) * (u - um)
		uc += (u - um) * (u - um)
	}
	if fu <= 0 || uu < 1e-6 {
		return
	}
	if uc > 1e-6 {
		gate *= min(1, max(0, 1+ic/uc/lightHue))
	}
	t := e * min(gate, 1) * min(fu/uu, lightMax)
	for c := 0; c < 3; c++ {
		f[c] += t * (sNew[c] - sOld[c])
	}
}

func srgbLuma3(v [3]float32) float32 { return 0.299*v[0] + 0.587*v[1] + 0.114*v[2] }
