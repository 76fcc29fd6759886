package sky

import "github.com/porchlight/porchlight/engine/imaging"

// Thin dark structures inside the sky (power lines, antennas, twigs) are too fine for
// the working resolution, where the cut absorbs them into the sky. At the guide
// resolution a black top-hat (closing minus image) finds them, and they are taken out
// of the mask so that the guided filter draws them into the matte instead of painting
// the new sky over them.
const (
	lineClose = 2    // closing radius at the guide resolution: lines up to 5 px wide
	lineLo    = 0.03 // top-hat depth (sRGB luma) where a line starts to count
	lineHi    = 0.20 // and where it is solid
)

func carveThinLines(mask []float32, guide *imaging.Image) {
	w, h := guide.W(), guide.H()
	luma := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := guide.Row(y)
			for x := 0; x < w; x++ {
				i := x * guide.C
				luma[y*w+x] = 0.299*srgb(row[i]) + 0.587*srgb(row[i+1]) + 0.114*srgb(row[i+2])
			}
		}
	})
	closed := rankFilter(rankFilter(luma, w, h, lineClose, true), w, h, lineClose, false)
	imaging.Bands(h, func(_, y0, y1 int) {
		for p := y0 * w; p < y1*w; p++ {
			if mask[p] <= 0 {
				continue
			}
			mask[p] *= 1 - smoothstep(lineLo, lineHi, closed[p]-luma[p])
		}
	})
}

// rankFilter is a separable square max (or min) filter of radius r.
func rankFilter(src []float32, w, h, r int, maximum bool) []float32 {
	tmp := make([]float32, len(src))
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			s, d := src[y*w:y*w+w], tmp[y*w:y*w+w]
			for x := range d {
				d[x] = extreme(s[max(0, x-r):min(w, x+r+1)], maximum)
			}
		}
	})
	out := make([]float32, len(src))
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			d := out[y*w : y*w+w]
			copy(d, tmp[y*w:y*w+w])
			for k := max(0, y-r); k <= min(h-1, y+r); k++ {
				t := tmp[k*w : k*w+w]
				if maximum {
					for x, v := range t {
						d[x] = max(d[x], v)
					}
				} else {
					for x, v := range t {
						d[x] = min(d[x], v)
					}
				}
			}
		}
	})
	return out
}

func extreme(s []float32, maximum bool) float32 {
	v := s[0]
	if maximum {
		for _, x := range s[1:] {
			v = max(v, x)
		}
	} else {
		for _, x := range s[1:] {
			v = min(v, x)
		}
	}
	return v
}

// Sky seen through foliage: small pockets between leaves and branches that the
// labelling left out because they are cut off from the open sky. Near the sky, inside
// textured surroundings, pixels whose colour matches the local old sky are keyed in.
// Smooth surroundings (a pale wall under an overcast sky) are never keyed.
const (
	holeReach  = 1.0 / 40 // how far from the open sky pockets are looked for (of the long edge)
	holeNear   = 4.0      // colour distance (CIELAB) at which a pocket is fully sky
	holeFar    = 12.0     // and beyond which it is not
	holeTexLo  = 0.025    // surrounding texture (sRGB luma gradient) where keying starts
	holeTexHi  = 0.05     // and where it is full
	holeTexWin = 6        // radius of the surrounding-texture window
)

func keySkyHoles(mask []float32, guide, oldSky *imaging.Image) {
	w, h := guide.W(), guide.H()
	open := make([]bool, w*h)
	for p, m := range mask {
		open[p] = m >= 0.5
	}
	reach := max(2, int(float64(max(w, h))*holeReach))
	band := dilate(open, w, h, reach)
	// Surrounding texture: box mean of the luma gradient.
	grad := make([]float32, w*h)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			r0, r1 := guide.Row(y), guide.Row(min(y+1, h-1))
			for x := 0; x < w; x++ {
				p := y*w + x
				if !band[p] {
					continue
				}
				i, j := x*guide.C, min(x+1, w-1)*guide.C
				l := 0.299*srgb(r0[i]) + 0.587*srgb(r0[i+1]) + 0.114*srgb(r0[i+2])
				lx := 0.299*srgb(r0[j]) + 0.587*srgb(r0[j+1]) + 0.114*srgb(r0[j+2])
				ly := 0.299*srgb(r1[i]) + 0.587*srgb(r1[i+1]) + 0.114*srgb(r1[i+2])
				grad[p] = abs32(lx-l) + abs32(ly-l)
			}
		}
	})
	boxMean(grad, grad, w, h, holeTexWin)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			row := guide.Row(y)
			for x := 0; x < w; x++ {
				p := y*w + x
				if !band[p] || open[p] {
					continue
				}
				tex := smoothstep(holeTexLo, holeTexHi, grad[p])
				if tex == 0 {
					continue
				}
				i := x * guide.C
				l, a, b := labOf(max(row[i], 0), max(row[i+1], 0), max(row[i+2], 0))
				o := oldSky.Row(min(y*oldSky.H()/h, oldSky.H()-1))[min(x*oldSky.W()/w, oldSky.W()-1)*3:]
				sl, sa, sb := labOf(o[0], o[1], o[2])
				d := float32(hypot32(l-sl, hypot32f(a-sa, b-sb)))
				key := (1 - smoothstep(holeNear, holeFar, d)) * tex
				mask[p] = max(mask[p], key)
			}
		}
	})
}

func abs32(v float32) float32 {
	if v < 0 {
		return -v
	}
	return v
}

func hypot32f(a, b float32) float32 { return float32(hypot32(a, b)) }
