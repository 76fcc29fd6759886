package quality

import (
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Segment is a straight line segment found in an image, in the image's pixel
// coordinates (pixel centres at integers).
type Segment struct {
	X0, Y0, X1, Y1 float64
	Length         float64
	// Width is the width of the supporting region, in pixels.
	Width float64
}

// Angle is the segment's direction in radians, in (-π/2, π/2], measured from the x axis
// towards +y (image rows grow downwards).
func (s Segment) Angle() float64 {
	a := math.Atan2(s.Y1-s.Y0, s.X1-s.X0)
	if a <= -math.Pi/2 {
		a += math.Pi
	} else if a > math.Pi/2 {
		a -= math.Pi
	}
	return a
}

// SegmentOptions tunes Segments. The zero value means the defaults.
type SegmentOptions struct {
	// MaxSide reduces the image (area average) so its longer side is at most this many
	// pixels before detection; coordinates are returned at full size. 0 means 1600;
	// negative means full size.
	MaxSide int
	// MinLength drops segments shorter than this, in full-size pixels. 0 means 1.5%
	// of the longer side.
	MinLength float64
	// AngleTolerance is how far, in degrees, a pixel's level-line may turn from its
	// region's and still join it. 0 means 22.5 (as in LSD).
	AngleTolerance float64
}

// Segments finds straight line segments in the manner of LSD (Grompone von Gioi et
// al. 2010): pixels are visited from the strongest gradient down; each seeds a
// region grown over neighbours whose level-line orientation agrees within the
// tolerance; a region becomes a segment when the rectangle that fits it is densely
// filled (60% of the rectangle between the 10th and 90th percentiles across it) and
// long enough. Luma is the sRGB-encoded one; a light Gaussian blur
// (σ 0.6) before the gradient suppresses noise and JPEG blocks.
func Segments(img *imaging.Image, opt SegmentOptions) []Segment {
	p, err := luma(img)
	if err != nil {
		return nil
	}
	maxSide := opt.MaxSide
	if maxSide == 0 {
		maxSide = 1600
	}
	long := max(p.w, p.h)
	scale := 1.0
	if maxSide > 0 && long > maxSide {
		q := shrinkTo(p, maxSide)
		scale = float64(p.w) / float64(q.w)
		p = q
	}
	minLen := opt.MinLength
	if minLen <= 0 {
		minLen = 0.015 * float64(long)
	}
	tol := opt.AngleTolerance
	if tol <= 0 {
		tol = 22.5
	}
	segs := detect(p, tol*math.Pi/180, minLen/scale)
	for i := range segs {
		s := &segs[i]
		// Reduced pixel u covers full pixels [u·k, (u+1)·k): centre X = k(u+0.5) − 0.5.
		s.X0, s.Y0 = scale*(s.X0+0.5)-0.5, scale*(s.Y0+0.5)-0.5
		s.X1, s.Y1 = scale*(s.X1+0.5)-0.5, scale*(s.Y1+0.5)-0.5
		s.Length *= scale
		s.Width *= scale
	}
	return segs
}

// unsetAngle marks pixels without a usable gradient.
const unsetAngle = 1e9

func detect(p *plane, tau, minLen float64) []Segment {
	if p.w < 3 || p.h < 3 {
		return nil
	}
	g := filterSame(p, gaussianWindow(5, 0.6))
	w, h := g.w, g.h
	// 2×2 gradient as LSD computes it, at the centre of each 2×2 block.
	mag := make([]float64, w*h)
	ang := make([]float64, w*h)
	var maxMag float64
	for y := 0; y < h-1; y++ {
		for x := 0; x < w-1; x++ {
			a, b := g.pix[y*w+x], g.pix[y*w+x+1]
			c, d := g.pix[(y+1)*w+x], g.pix[(y+1)*w+x+1]
			gx := (b + d - a - c) / 2
			gy := (c + d - a - b) / 2
			m := math.Hypot(gx, gy)
			mag[y*w+x] = m
			// Level-line angle: perpendicular to the gradient.
			ang[y*w+x] = math.Atan2(gx, -gy)
			maxMag = math.Max(maxMag, m)
		}
	}
	for x := 0; x < w; x++ {
		ang[(h-1)*w+x] = unsetAngle
	}
	for y := 0; y < h; y++ {
		ang[y*w+w-1] = unsetAngle
	}
	// Gradient threshold from LSD: quantization error 2 levels of 255 over sin(τ).
	rho := 2.0 / math.Sin(tau)
	order := make([]int32, 0, w*h/4)
	for i, m := range mag {
		if m > rho && ang[i] != unsetAngle {
			order = append(order, int32(i))
		} else {
			ang[i] = unsetAngle
		}
	}
	sort.Slice(order, func(a, b int) bool {
		if mag[order[a]] != mag[order[b]] {
			return mag[order[a]] > mag[order[b]]
		}
		return order[a] < order[b]
	})
	used := make([]bool, w*h)
	var segs []Segment
	region := make([]int32, 0, 1024)
	for _, seed := range order {
		if used[seed] {
			continue
		}
		// Grow with the full tolerance; if the region does not fill its rectangle
		// (a curve, or two lines meeting), regrow it from the seed with half the
		// tolerance, as LSD's refinement does.
		for _, t := range []float64{tau, tau / 2} {
			region = grow(region[:0], seed, ang, used, w, h, t)
			if len(region) < 8 {
				break
			}
			theta := regionAngle(region, ang)
			if s, ok := fitRect(region, mag, w, theta, t); ok {
				if s.Length >= minLen {
					segs = append(segs, s)
				}
				break
			}
			// Release the pixels for the retry (and for other regions).
			for _, i := range region {
				used[i] = false
			}
			used[seed] = true
		}
	}
	return segs
}

// grow collects the region of pixels connected to seed whose level-line angle stays
// within tau of the region's running mean angle, marking them used.
func grow(region []int32, seed int32, ang []float64, used []bool, w, h int, tau float64) []int32 {
	region = append(region, seed)
	used[seed] = true
	theta := ang[seed]
	sx, sy := math.Cos(theta), math.Sin(theta)
	for i := 0; i < len(region); i++ {
		px, py := int(region[i])%w, int(region[i])/w
		for dy := -1; dy <= 1; dy++ {
			for dx := -1; dx <= 1; dx++ {
				x, y := px+dx, py+dy
				if x < 0 || y < 0 || x >= w || y >= h {
					continue
				}
				j := int32(y*w + x)
				if used[j] || ang[j] == unsetAngle || !aligned(ang[j], theta, tau) {
					continue
				}
				used[j] = true
				region = append(region, j)
				sx += math.Cos(ang[j])
				sy += math.Sin(ang[j])
				theta = math.Atan2(sy, sx)
			}
		}
	}
	return region
}

func regionAngle(region []int32, ang []float64) float64 {
	var sx, sy float64
	for _, i := range region {
		sx += math.Cos(ang[i])
		sy += math.Sin(ang[i])
	}
	return math.Atan2(sy, sx)
}

// aligned reports whether angle a is within tol of b, modulo π (a level line has no
// direction).
func aligned(a, b, tol float64) bool {
	d := math.Mod(math.Abs(a-b), 2*math.Pi)
	if d > math.Pi {
		d = 2*math.Pi - d
	}
	if d > math.Pi/2 {
		// Opposite gradient directions are different edges (dark-to-light vs
		// light-to-dark) in LSD; keep them apart.
		return false
	}
	return d <= tol
}

// minDensity is the share of its rectangle a region must fill to be a line.
const minDensity = 0.6

// fitRect fits the smallest rectangle along the region's principal axis and accepts it
// when the region fills at least minDensity of it.
func fitRect(region []int32, mag []float64, w int, theta, tau float64) (Segment, bool) {
	var sw, cx, cy float64
	for _, i := range region {
		m := mag[i]
		cx += m * float64(int(i)%w)
		cy += m * float64(int(i)/w)
		sw += m
	}
	cx, cy = cx/sw, cy/sw
	var ixx, iyy, ixy float64
	for _, i := range region {
		m := mag[i]
		dx, dy := float64(int(i)%w)-cx, float64(int(i)/w)-cy
		ixx += m * dy * dy
		iyy += m * dx * dx
		ixy -= m * dx * dy
	}
	// Principal direction: eigenvector of the smallest eigenvalue of the inertia.
	lambda := 0.5 * (ixx + iyy - math.Sqrt((ixx-iyy)*(ixx-iyy)+4*ixy*ixy))
	var dir float64
	if math.Abs(ixx) > math.Abs(iyy) {
		dir = math.Atan2(lambda-ixx, ixy)
	} else {
		dir = math.Atan2(ixy, lambda-iyy)
	}
	// Keep the direction consistent with the level-line angle.
	if math.Abs(angleDiff(dir, theta)) > tau {
		dir += math.Pi
	}
	ux, uy := math.Cos(dir), math.Sin(dir)
	l0, l1 := math.Inf(1), math.Inf(-1)
	ts := make([]float64, len(region))
	for k, i := range region {
		dx, dy := float64(int(i)%w)-cx, float64(int(i)/w)-cy
		l := dx*ux + dy*uy
		ts[k] = -dx*uy + dy*ux
		l0, l1 = math.Min(l0, l), math.Max(l1, l)
	}
	// Width from the 10th to the 90th percentile across the line, so a few stray
	// pixels picked up at the tolerance's edge do not widen the rectangle.
	sort.Float64s(ts)
	w0, w1 := ts[len(ts)*10/100], ts[(len(ts)-1)*90/100]
	inside := 0
	for _, t := range ts {
		if t >= w0 && t <= w1 {
			inside++
		}
	}
	length := l1 - l0 + 1
	width := w1 - w0 + 1
	if float64(inside) < minDensity*length*width {
		return Segment{Length: length, Width: width}, false
	}
	// Gradients sit at 2×2 block centres: shift by half a pixel.
	cx, cy = cx+0.5, cy+0.5
	return Segment{
		X0: cx + l0*ux, Y0: cy + l0*uy,
		X1: cx + l1*ux, Y1: cy + l1*uy,
		Length: length, Width: width,
	}, true
}

func angleDiff(a, b float64) float64 {
	d := math.Mod(a-b+3*math.Pi, 2*math.Pi) - math.Pi
	return d
}

// filterSame correlates p with the separable kernel, mirroring at the borders, and
// keeps p's size.
func filterSame(p *plane, k window) *plane {
	n := len(k)
	r := n / 2
	tmp := newPlane(p.w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := p.row(y), tmp.row(y)
			for x := range dst {
				var s float64
				for i, kv := range k {
					s += kv * src[mirror(x+i-r, p.w)]
				}
				dst[x] = s
			}
		}
	})
	out := newPlane(p.w, p.h)
	imaging.Bands(p.h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			dst := out.row(y)
			for i, kv := range k {
				src := tmp.row(mirror(y+i-r, p.h))
				for x := range dst {
					dst[x] += kv * src[x]
				}
			}
		}
	})
	return out
}

func mirror(i, n int) int {
	for i < 0 || i >= n {
		if i < 0 {
			i = -i - 1
		}
		if i >= n {
			i = 2*n - i - 1
		}
	}
	return i
}

// TiltOptions configures VerticalTilt.
type TiltOptions struct {
	// MaxDeviation is how far from vertical, in degrees, a segment may be and still
	// count as a vertical. 0 means 20.
	MaxDeviation float64
}

// Tilt is the lean of the near-vertical lines of an image.
type Tilt struct {
	// Degrees is the length-weighted median angle of the near-vertical segments from
	// the vertical, positive when a line runs to the right going down the image
	// (its top leans left).
	Degrees float64
	// Segments is how many near-vertical segments were used, Length their total
	// length in pixels.
	Segments int
	Length   float64
}

// VerticalTilt measures the length-weighted median tilt of the near-vertical
// segments among segs. ok is false when there are none.
func VerticalTilt(segs []Segment, opt TiltOptions) (Tilt, bool) {
	maxDev := opt.MaxDeviation
	if maxDev <= 0 {
		maxDev = 20
	}
	type tl struct{ deg, length float64 }
	var ts []tl
	var total float64
	for _, s := range segs {
		dx, dy := s.X1-s.X0, s.Y1-s.Y0
		if dy < 0 {
			dx, dy = -dx, -dy
		}
		deg := math.Atan2(dx, dy) * 180 / math.Pi
		if math.Abs(deg) <= maxDev {
			ts = append(ts, tl{deg, s.Length})
			total += s.Length
		}
	}
	if len(ts) == 0 {
		return Tilt{}, false
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].deg < ts[j].deg })
	var acc float64
	med := ts[len(ts)-1].deg
	for _, t := range ts {
		acc += t.length
		if acc >= total/2 {
			med = t.deg
			break
		}
	}
	return Tilt{Degrees: med, Segments: len(ts), Length: total}, true
}
