package sky

import "math"

// Seeded 2-D gradient noise (Perlin's improved noise with a hash instead of a
// permutation table): the same seed and coordinates always give the same value, so a
// style renders the same clouds on every run and machine.

// gradients are 16 unit vectors, evenly spread, so no direction is favoured.
var gradients = func() (g [16][2]float32) {
	for i := range g {
		a := 2 * math.Pi * (float64(i) + 0.5) / 16
		g[i] = [2]float32{float32(math.Cos(a)), float32(math.Sin(a))}
	}
	return
}()

func hash2(ix, iy int32, seed uint32) uint32 {
	h := uint32(ix)*0x8da6b343 ^ uint32(iy)*0xd8163841 ^ seed*0xcb1ab31f
	h ^= h >> 15
	h *= 0x2c1b3c6d
	h ^= h >> 12
	h *= 0x297a2d39
	h ^= h >> 15
	return h
}

func fade(t float32) float32 { return t * t * t * (t*(t*6-15) + 10) }

func floor32(v float32) int32 {
	i := int32(v)
	if float32(i) > v {
		i--
	}
	return i
}

// noise2 is gradient noise in about [-0.7, 0.7], zero at integer lattice points.
func noise2(x, y float32, seed uint32) float32 {
	ix, iy := floor32(x), floor32(y)
	fx, fy := x-float32(ix), y-float32(iy)
	dot := func(cx, cy int32, dx, dy float32) float32 {
		g := gradients[hash2(cx, cy, seed)&15]
		return g[0]*dx + g[1]*dy
	}
	n00 := dot(ix, iy, fx, fy)
	n10 := dot(ix+1, iy, fx-1, fy)
	n01 := dot(ix, iy+1, fx, fy-1)
	n11 := dot(ix+1, iy+1, fx-1, fy-1)
	u, v := fade(fx), fade(fy)
	a := n00 + u*(n10-n00)
	b := n01 + u*(n11-n01)
	return a + v*(b-a)
}

// Each octave is rotated by about 37 degrees against the previous one so the lattice
// never lines up across octaves (no grid-aligned streaks).
const (
	octaveCos = 0.7986355
	octaveSin = 0.6018150
)

// fbm sums octaves of noise at doubling frequency and halving amplitude (times gain),
// normalised to about [-1, 1].
func fbm(x, y float32, octaves int, gain float32, seed uint32) float32 {
	var sum, norm float32
	amp := float32(1)
	for o := 0; o < octaves; o++ {
		sum += amp * noise2(x, y, seed+uint32(o)*0x9e3779b9)
		norm += amp
		x, y = 2*(octaveCos*x-octaveSin*y)+17.3, 2*(octaveSin*x+octaveCos*y)-4.1
		amp *= gain
	}
	return sum / norm * 1.6
}

// ridged is 1 - |noise| summed over octaves: thin bright ridges, the look of cirrus
// strands. Result in about [0, 1].
func ridged(x, y float32, octaves int, gain float32, seed uint32) float32 {
	var sum, norm float32
	amp := float32(1)
	for o := 0; o < octaves; o++ {
		n := noise2(x, y, seed+uint32(o)*0x85ebca6b)
		if n < 0 {
			n = -n
		}
		r := 1 - n*1.45
		sum += amp * r * r
		norm += amp
		x, y = 2*(octaveCos*x-octaveSin*y)+5.7, 2*(octaveSin*x+octaveCos*y)+11.9
		amp *= gain
	}
	return sum / norm
}
