package sky

import "github.com/porchlight/porchlight/engine/imaging"

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

// edgeLight returns, per guide pixel, the weight of the edge lighting and the guide
// rows with any weight. It is 1 at the skyline (where the refined alpha crosses
// lightSeed) and fades with the distance from it to 0 at lightReach on the ground
// side; deep inside the sky, whose own fractional pixels (a cloud's edge) have no
// surface to relight, it is 0.
func (a *analysis) edgeLight() ([]float32, []bool) {
	w, h := a.guide.W(), a.guide.H()
	r := max(2, float32(max(w, h))*lightReach)
	seed := make([]bool, w*h)
	for p, m := range a.mask {
		seed[p] = m >= lightSeed
	}
	toSky := imaging.Chamfer(seed, w, h, false)
	toGround := imaging.Chamfer(seed, w, h, true)
	// Weights by distance in thirds of a pixel, looked up; every distance from
	// lightFar on weighs as lightFar does (nothing). Inside the sky the weight stays
	// full as far as it reaches into the ground, then drops within a pixel: the
	// matte's seed may lie a few pixels out over a skyline surface it half covers.
	var ground, sky [lightFar + 1]float32
	for i := range ground {
		d := float32(i) / 3
		ground[i] = min(1, max(0, (r-d)/(r-1)))
		sky[i] = min(1, max(0, r+1-d))
	}
	e := make([]float32, w*h)
	rows := make([]bool, h)
	for y := range rows {
		for p := y * w; p < y*w+w; p++ {
			v := ground[min(toSky[p], lightFar)]
			if toSky[p] == 0 {
				v = sky[min(toGround[p], lightFar)]
			}
			if v > 0 {
				e[p] = v
				rows[y] = true
			}
		}
	}
	return e, rows
}

// lightFar is the distance (thirds of a pixel) from which the weight tables stop.
const lightFar = 255

// relight swaps the old sky's light in the foreground colour f of the photo's pixel
// in for the new sky's, with weight e (see above). The old sky's part is measured in
// sRGB, as the eye sees a tint: f's projection on the segment from the local ground
// fLoc to the old sky sOld, at most lightMax. It fades in over lightRamp as the
// pixel's luma rises above the ground's and out as its hue turns against the sky's.
func relight(f *[3]float32, in []float32, e float32, sOld, fLoc, sNew *[3]float32) {
	if in[0] <= fLoc[0] && in[1] <= fLoc[1] && in[2] <= fLoc[2] {
		return // darker than the ground: the common case, without the encoding below
	}
	var fs, is, gs, ss [3]float32
	for c := 0; c < 3; c++ {
		is[c], gs[c] = srgb(in[c]), srgb(fLoc[c])
	}
	gate := (srgbLuma3(is) - srgbLuma3(gs)) / lightRamp
	if gate <= 0 {
		return
	}
	for c := 0; c < 3; c++ {
		fs[c], ss[c] = srgb(f[c]), srgb(sOld[c])
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
