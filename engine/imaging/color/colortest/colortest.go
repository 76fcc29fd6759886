// Package colortest measures colour corrections: CIEDE2000, Lab from linear sRGB,
// the white of a Planckian radiator as a diagonal transform, and renderings of a
// photo under known light fields (global casts, a window-to-lamp gradient, warm
// pools around lamps). Tests and the colour benchmark share it.
package colortest

import (
	"github.com/porchlight/porchlight/engine/imaging/tone"
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Lab is a CIELAB colour (D65 white).
type Lab struct{ L, A, B float64 }

// LabOf converts linear sRGB to CIELAB under D65.
func LabOf(r, g, b float64) Lab {
	x := 0.4124564*r + 0.3575761*g + 0.1804375*b
	y := 0.2126729*r + 0.7151522*g + 0.0721750*b
	z := 0.0193339*r + 0.1191920*g + 0.9503041*b
	fx, fy, fz := labF(x/0.95047), labF(y), labF(z/1.08883)
	return Lab{116*fy - 16, 500 * (fx - fy), 200 * (fy - fz)}
}

func labF(t float64) float64 {
	if t > 216.0/24389 {
		return math.Cbrt(t)
	}
	return (24389.0/27*t + 16) / 116
}

// Chroma is C*ab.
func (l Lab) Chroma() float64 { return math.Hypot(l.A, l.B) }

// DeltaE00 is the CIEDE2000 colour difference (kL = kC = kH = 1), after Sharma, Wu
// and Dalal (2005).
func DeltaE00(p, q Lab) float64 {
	c1, c2 := math.Hypot(p.A, p.B), math.Hypot(q.A, q.B)
	cm := (c1 + c2) / 2
	cm7 := math.Pow(cm, 7)
	g := 0.5 * (1 - math.Sqrt(cm7/(cm7+math.Pow(25, 7))))
	a1, a2 := (1+g)*p.A, (1+g)*q.A
	c1p, c2p := math.Hypot(a1, p.B), math.Hypot(a2, q.B)
	h1, h2 := hueDeg(a1, p.B), hueDeg(a2, q.B)
	dL := q.L - p.L
	dC := c2p - c1p
	var dh float64
	switch {
	case c1p*c2p == 0:
		dh = 0
	case math.Abs(h2-h1) <= 180:
		dh = h2 - h1
	case h2-h1 > 180:
		dh = h2 - h1 - 360
	default:
		dh = h2 - h1 + 360
	}
	dH := 2 * math.Sqrt(c1p*c2p) * math.Sin(rad(dh/2))
	lm := (p.L + q.L) / 2
	cmp := (c1p + c2p) / 2
	var hm float64
	switch {
	case c1p*c2p == 0:
		hm = h1 + h2
	case math.Abs(h1-h2) <= 180:
		hm = (h1 + h2) / 2
	case h1+h2 < 360:
		hm = (h1 + h2 + 360) / 2
	default:
		hm = (h1 + h2 - 360) / 2
	}
	t := 1 - 0.17*math.Cos(rad(hm-30)) + 0.24*math.Cos(rad(2*hm)) + 0.32*math.Cos(rad(3*hm+6)) - 0.20*math.Cos(rad(4*hm-63))
	dTheta := 30 * math.Exp(-math.Pow((hm-275)/25, 2))
	cmp7 := math.Pow(cmp, 7)
	rc := 2 * math.Sqrt(cmp7/(cmp7+math.Pow(25, 7)))
	l50 := (lm - 50) * (lm - 50)
	sl := 1 + 0.015*l50/math.Sqrt(20+l50)
	sc := 1 + 0.045*cmp
	sh := 1 + 0.015*cmp*t
	rt := -math.Sin(rad(2*dTheta)) * rc
	return math.Sqrt((dL/sl)*(dL/sl) + (dC/sc)*(dC/sc) + (dH/sh)*(dH/sh) + rt*(dC/sc)*(dH/sh))
}

func hueDeg(a, b float64) float64 {
	if a == 0 && b == 0 {
		return 0
	}
	h := math.Atan2(b, a) * 180 / math.Pi
	if h < 0 {
		h += 360
	}
	return h
}

func rad(d float64) float64 { return d * math.Pi / 180 }

// Planckian returns the linear sRGB colour of a Planckian radiator at kelvin
// (Kim et al.'s cubic fit of the locus in CIE xy, 1667 K to 25000 K), at unit
// luminance.
func Planckian(kelvin float64) [3]float64 {
	p := tone.PlanckianRGB(kelvin)
	return [3]float64{max(p[0], 1e-3), max(p[1], 1e-3), max(p[2], 1e-3)}
}

// Cast returns the diagonal transform that turns a photo white-balanced for D65
// into the same scene lit at kelvin, at unit luminance.
func Cast(kelvin float64) [3]float64 {
	p := Planckian(kelvin)
	// sRGB's white is D65 at (1, 1, 1); its nearest Planckian (6504 K) is not quite,
	// so the transform is relative to it.
	ref := Planckian(6504)
	var d [3]float64
	for c := range 3 {
		d[c] = p[c] / ref[c]
	}
	y := 0.2126*d[0] + 0.7152*d[1] + 0.0722*d[2]
	for c := range 3 {
		d[c] /= y
	}
	return d
}

// Field is a light field: the diagonal gains at a pixel of a w×h photo.
type Field func(x, y, w, h int) [3]float64

// Global is one light everywhere.
func Global(kelvin float64) Field {
	d := Cast(kelvin)
	return func(int, int, int, int) [3]float64 { return d }
}

// Gradient is daylight from a window on the left (6500 K) turning into lamp light
// on the right (2700 K), mixed in linear light.
func Gradient() Field {
	a, b := Cast(6500), Cast(2700)
	return func(x, _, w, _ int) [3]float64 {
		t := float64(x) / float64(max(1, w-1))
		t = t * t * (3 - 2*t)
		var d [3]float64
		for c := range 3 {
			d[c] = a[c]*(1-t) + b[c]*t
		}
		return d
	}
}

// Pools are two warm lamp pools (2700 K) on neutral light (5000 K): the light of
// each lamp falls off with distance from its centre.
func Pools() Field {
	base, lamp := Cast(5000), Cast(2700)
	centres := [][2]float64{{0.25, 0.35}, {0.75, 0.55}}
	return func(x, y, w, h int) [3]float64 {
		var m float64
		for _, c := range centres {
			dx := float64(x)/float64(w) - c[0]
			dy := float64(y)/float64(h) - c[1]
			m += math.Exp(-(dx*dx + dy*dy) / (2 * 0.18 * 0.18))
		}
		m = min(1, 0.8*m)
		var d [3]float64
		for c := range 3 {
			d[c] = base[c]*(1-m) + lamp[c]*m
		}
		return d
	}
}

// Render returns a copy of img (linear RGB) lit by f. The field is scaled so that
// no gain exceeds 1, as a camera would expose to keep the highlights it had:
// what was not clipped does not become clipped.
func Render(img *imaging.Image, f Field) *imaging.Image {
	out := imaging.New(img.W(), img.H(), 3)
	w, h := img.W(), img.H()
	peak := 0.0
	for y := 0; y < h; y += max(1, h/64) {
		for x := 0; x < w; x += max(1, w/64) {
			d := f(x, y, w, h)
			peak = max(peak, d[0], d[1], d[2])
		}
	}
	for y := range h {
		src, dst := img.Row(y), out.Row(y)
		for x := range w {
			d := f(x, y, w, h)
			for c := range 3 {
				dst[x*3+c] = float32(min(1, float64(src[x*img.C+c])*d[c]/peak))
			}
		}
	}
	return out
}

// Stats are a sample's mean and 95th percentile.
type Stats struct{ Mean, P95 float64 }

// Summarize returns the mean and 95th percentile of v (sorted in place).
func Summarize(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	sort.Float64s(v)
	var s float64
	for _, x := range v {
		s += x
	}
	return Stats{s / float64(len(v)), v[int(0.95*float64(len(v)-1))]}
}

// ColourDiffs returns CIEDE2000 per sampled pixel between a and b (same size,
// linear RGB) with the lightness set equal, every step-th pixel in both directions;
// pixels clipped or near black in either are left out, since they carry no colour.
// Exposure is not the point: b is first scaled to a's mean luminance (a* and b*
// grow with exposure too), then each pixel takes a's L*.
func ColourDiffs(a, b *imaging.Image, step int) []float64 {
	var ya, yb float64
	for y := 0; y < a.H(); y += step {
		ra, rb := a.Row(y), b.Row(y)
		for x := 0; x < a.W(); x += step {
			pa, pb := ra[x*a.C:x*a.C+3], rb[x*b.C:x*b.C+3]
			if usable(pa) && usable(pb) {
				ya += 0.2126*float64(pa[0]) + 0.7152*float64(pa[1]) + 0.0722*float64(pa[2])
				yb += 0.2126*float64(pb[0]) + 0.7152*float64(pb[1]) + 0.0722*float64(pb[2])
			}
		}
	}
	k := 1.0
	if yb > 0 {
		k = ya / yb
	}
	var out []float64
	for y := 0; y < a.H(); y += step {
		ra, rb := a.Row(y), b.Row(y)
		for x := 0; x < a.W(); x += step {
			pa, pb := ra[x*a.C:x*a.C+3], rb[x*b.C:x*b.C+3]
			if !usable(pa) || !usable(pb) {
				continue
			}
			la := LabOf(float64(pa[0]), float64(pa[1]), float64(pa[2]))
			lb := LabOf(k*float64(pb[0]), k*float64(pb[1]), k*float64(pb[2]))
			lb.L = la.L
			out = append(out, DeltaE00(la, lb))
		}
	}
	return out
}

func usable(p []float32) bool {
	m := max(p[0], p[1], p[2])
	return m < 0.98 && m > 0.01
}

// MeanChroma is the mean C*ab over every step-th pixel of img.
func MeanChroma(img *imaging.Image, step int) float64 {
	var s float64
	n := 0
	for y := 0; y < img.H(); y += step {
		r := img.Row(y)
		for x := 0; x < img.W(); x += step {
			p := r[x*img.C : x*img.C+3]
			s += LabOf(float64(p[0]), float64(p[1]), float64(p[2])).Chroma()
			n++
		}
	}
	return s / float64(max(1, n))
}

// NeutralChroma is the mean C*ab of the brightest near-neutral surfaces of ref
// (ceilings, white walls, trims): pixels in the top tenth of lightness among those
// of ref with C*ab under 25 (a cast included), not clipped, measured in img. Passing the uncorrected
// photo as ref measures every method on the same surfaces.
func NeutralChroma(ref, img *imaging.Image, step int) float64 {
	type px struct {
		x, y int
		l    float64
	}
	var cand []px
	for y := 0; y < ref.H(); y += step {
		r := ref.Row(y)
		for x := 0; x < ref.W(); x += step {
			p := r[x*ref.C : x*ref.C+3]
			if max(p[0], p[1], p[2]) >= 0.98 {
				continue
			}
			l := LabOf(float64(p[0]), float64(p[1]), float64(p[2]))
			if l.Chroma() < 25 && l.L > 40 {
				cand = append(cand, px{x, y, l.L})
			}
		}
	}
	if len(cand) == 0 {
		return 0
	}
	sort.Slice(cand, func(i, j int) bool { return cand[i].l > cand[j].l })
	cand = cand[:max(1, len(cand)/10)]
	var s float64
	for _, c := range cand {
		p := img.Row(c.y)[c.x*img.C : c.x*img.C+3]
		s += LabOf(float64(p[0]), float64(p[1]), float64(p[2])).Chroma()
	}
	return s / float64(len(cand))
}

// Surface is the mean C*ab and hue angle (degrees, of the mean a*, b*) in img of
// the pixels of ref whose CIELAB colour sel picks: the same surface measured
// before and after a correction.
func Surface(ref, img *imaging.Image, step int, sel func(Lab) bool) (chroma, hue float64) {
	var sc, sa, sb float64
	n := 0
	for y := 0; y < ref.H(); y += step {
		r, o := ref.Row(y), img.Row(y)
		for x := 0; x < ref.W(); x += step {
			p := r[x*ref.C : x*ref.C+3]
			if !sel(LabOf(float64(p[0]), float64(p[1]), float64(p[2]))) {
				continue
			}
			q := o[x*img.C : x*img.C+3]
			l := LabOf(float64(q[0]), float64(q[1]), float64(q[2]))
			sc += l.Chroma()
			sa += l.A
			sb += l.B
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sc / float64(n), hueDeg(sa, sb)
}
