package inpaint

import (
	"image"
	_ "image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var loadPhoto = imagingtest.LoadPhoto

// holeShapes draws seeded random holes covering about frac of a w×h image: smooth
// blobs (wobbly ellipses) and rectangles, kept away from the image border so they
// fall over real content. n is the number of shapes.
func holeShapes(w, h int, frac float64, n int, seed uint64) *imaging.Image {
	rng := rand.New(rand.NewPCG(seed, 0x1234))
	m := imaging.New(w, h, 1)
	covered := 0
	target := int(frac * float64(w*h))
	for i := 0; covered < target*97/100 && i < 50; i++ {
		left := n - i
		area := float64(target-covered) / float64(max(left, 1))
		cx := float64(w) * (0.2 + 0.6*rng.Float64())
		cy := float64(h) * (0.2 + 0.6*rng.Float64())
		if rng.IntN(2) == 0 {
			// Rectangle with aspect ratio between 1:2 and 2:1.
			asp := math.Exp((rng.Float64()*2 - 1) * math.Ln2)
			rw, rh := math.Sqrt(area*asp), math.Sqrt(area/asp)
			for y := max(0, int(cy-rh/2)); y < min(h, int(cy+rh/2)); y++ {
				for x := max(0, int(cx-rw/2)); x < min(w, int(cx+rw/2)); x++ {
					if m.Pix[y*w+x] == 0 {
						m.Pix[y*w+x] = 1
						covered++
					}
				}
			}
			continue
		}
		// Blob: radius modulated by two harmonics, scaled to the wanted area.
		a1, a2 := 0.1+0.2*rng.Float64(), 0.1*rng.Float64()
		k1, k2 := 2+rng.IntN(2), 3+rng.IntN(3)
		p1, p2 := rng.Float64()*2*math.Pi, rng.Float64()*2*math.Pi
		asp := math.Exp((rng.Float64()*2 - 1) * 0.5)
		r0 := math.Sqrt(area / math.Pi / (1 + (a1*a1+a2*a2)/2))
		reach := r0 * (1 + a1 + a2) * math.Max(asp, 1/asp)
		for y := max(0, int(cy-reach)); y < min(h, int(cy+reach)+1); y++ {
			for x := max(0, int(cx-reach)); x < min(w, int(cx+reach)+1); x++ {
				dx, dy := (float64(x)-cx)/asp, (float64(y)-cy)*asp
				th := math.Atan2(dy, dx)
				rad := r0 * (1 + a1*math.Sin(float64(k1)*th+p1) + a2*math.Sin(float64(k2)*th+p2))
				if dx*dx+dy*dy <= rad*rad && m.Pix[y*w+x] == 0 {
					m.Pix[y*w+x] = 1
					covered++
				}
			}
		}
	}
	return m
}

// blank returns a copy of img with the masked pixels set to black, so nothing of the
// original content can reach a fill.
func blank(img, mask *imaging.Image) *imaging.Image {
	out := img.Clone()
	for y := 0; y < img.H(); y++ {
		for x := 0; x < img.W(); x++ {
			if mask.At(x, y, 0) > 0.5 {
				for c := 0; c < img.C; c++ {
					out.Set(x, y, c, 0)
				}
			}
		}
	}
	return out
}

func writePNG(tb testing.TB, path string, m image.Image) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := png.Encode(f, m); err != nil {
		f.Close()
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func readPNG(tb testing.TB, path string) *imaging.Image {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	m, err := png.Decode(f)
	if err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	return imaging.FromImage(m, false)
}

// lumaPlane returns 8-bit-quantised encoded luma (Rec. 601, 0..255) as float64, the
// plane SSIM is usually computed on.
func lumaPlane(m *imaging.Image) []float64 {
	nr := m.ToNRGBA()
	w, h := m.W(), m.H()
	out := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			p := nr.Pix[y*nr.Stride+4*x:]
			out[y*w+x] = 0.299*float64(p[0]) + 0.587*float64(p[1]) + 0.114*float64(p[2])
		}
	}
	return out
}

// gauss11 blurs a plane with the 11-tap, σ=1.5 Gaussian of Wang et al., edges clamped.
func gauss11(p []float64, w, h int) []float64 {
	var k [11]float64
	s := 0.0
	for i := range k {
		d := float64(i - 5)
		k[i] = math.Exp(-d * d / (2 * 1.5 * 1.5))
		s += k[i]
	}
	for i := range k {
		k[i] /= s
	}
	tmp := make([]float64, w*h)
	out := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := 0.0
			for i, kv := range k {
				v += kv * p[y*w+min(w-1, max(0, x+i-5))]
			}
			tmp[y*w+x] = v
		}
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := 0.0
			for i, kv := range k {
				v += kv * tmp[min(h-1, max(0, y+i-5))*w+x]
			}
			out[y*w+x] = v
		}
	}
	return out
}

// bbox returns the bounding box of the set pixels grown by pad, clipped to w×h.
func bbox(set []bool, w, h, pad int) image.Rectangle {
	r := image.Rectangle{}
	for i, v := range set {
		if v {
			r = r.Union(image.Rect(i%w, i/w, i%w+1, i/w+1))
		}
	}
	return r.Inset(-pad).Intersect(image.Rect(0, 0, w, h))
}

// crop copies the r part of a w-wide plane.
func crop[T any](p []T, w int, r image.Rectangle) []T {
	out := make([]T, 0, r.Dx()*r.Dy())
	for y := r.Min.Y; y < r.Max.Y; y++ {
		out = append(out, p[y*w+r.Min.X:y*w+r.Max.X]...)
	}
	return out
}

// ssimIn is the mean SSIM (Wang et al. 2004: 11×11 Gaussian window, σ 1.5, K1 0.01,
// K2 0.03, on 8-bit luma) of b against a over the pixels where in is set.
func ssimIn(a, b []float64, in []bool, w, h int) float64 {
	r := bbox(in, w, h, 8)
	a, b, in = crop(a, w, r), crop(b, w, r), crop(in, w, r)
	w, h = r.Dx(), r.Dy()
	sq := func(x, y []float64) []float64 {
		o := make([]float64, len(x))
		for i := range x {
			o[i] = x[i] * y[i]
		}
		return o
	}
	ma, mb := gauss11(a, w, h), gauss11(b, w, h)
	saa, sbb, sab := gauss11(sq(a, a), w, h), gauss11(sq(b, b), w, h), gauss11(sq(a, b), w, h)
	const c1, c2 = (0.01 * 255) * (0.01 * 255), (0.03 * 255) * (0.03 * 255)
	sum, n := 0.0, 0
	for i := range a {
		if !in[i] {
			continue
		}
		va := saa[i] - ma[i]*ma[i]
		vb := sbb[i] - mb[i]*mb[i]
		cov := sab[i] - ma[i]*mb[i]
		sum += (2*ma[i]*mb[i] + c1) * (2*cov + c2) / ((ma[i]*ma[i] + mb[i]*mb[i] + c1) * (va + vb + c2))
		n++
	}
	return sum / float64(n)
}

// gradMag is |∇| of a plane by central differences (one-sided at the edges).
func gradMag(p []float64, w, h int) []float64 {
	g := make([]float64, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			gx := (p[y*w+min(w-1, x+1)] - p[y*w+max(0, x-1)]) / 2
			gy := (p[min(h-1, y+1)*w+x] - p[max(0, y-1)*w+x]) / 2
			g[y*w+x] = math.Hypot(gx, gy)
		}
	}
	return g
}

// borderBand marks the 2-pixel band across the border of set: the pixels of set with
// a 4-neighbour outside it and the pixels outside with a 4-neighbour in it.
func borderBand(set []bool, w, h int) []bool {
	band := make([]bool, w*h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			for _, d := range [4][2]int{{-1, 0}, {1, 0}, {0, -1}, {0, 1}} {
				nx, ny := x+d[0], y+d[1]
				if nx >= 0 && ny >= 0 && nx < w && ny < h && set[ny*w+nx] != set[i] {
					band[i] = true
					break
				}
			}
		}
	}
	return band
}

// seamScore measures how visible the border of a fill is: along the band, cell by
// cell (16×16 px), the absolute difference between the fill's mean |∇| and the
// original's, averaged over the band and divided by the original's mean |∇| over the
// whole image. A step at the border raises the fill's gradient above the original's;
// a smear that stops the texture at the border lowers it; both are visible seams,
// and an invisible border scores 0.
func seamScore(orig, fill []float64, band []bool, w, h int) float64 {
	typical := 0.0
	for _, v := range gradMag(orig, w, h) {
		typical += v
	}
	typical /= float64(w * h)
	// The band's box, one pixel wider for the differences; cells stay aligned to the
	// image grid.
	r := bbox(band, w, h, 1)
	r.Min.X, r.Min.Y = r.Min.X/16*16, r.Min.Y/16*16
	orig, fill, band = crop(orig, w, r), crop(fill, w, r), crop(band, w, r)
	w, h = r.Dx(), r.Dy()
	go_, gf := gradMag(orig, w, h), gradMag(fill, w, h)
	const cell = 16
	cw, ch := (w+cell-1)/cell, (h+cell-1)/cell
	so, sf := make([]float64, cw*ch), make([]float64, cw*ch)
	cnt := make([]int, cw*ch)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := y*w + x
			if !band[i] {
				continue
			}
			c := (y/cell)*cw + x/cell
			so[c] += go_[i]
			sf[c] += gf[i]
			cnt[c]++
		}
	}
	sum, n := 0.0, 0
	for c := range cnt {
		if cnt[c] > 0 {
			sum += math.Abs(sf[c]-so[c]) / float64(cnt[c]) * float64(cnt[c])
			n += cnt[c]
		}
	}
	return sum / float64(n) / typical
}

// gradientRatio is the mean |∇| of fill over the set pixels relative to the
// original's there: 1 keeps the photo's texture, near 0 is a smear.
func gradientRatio(orig, fill []float64, set []bool, w, h int) float64 {
	r := bbox(set, w, h, 1)
	orig, fill, set = crop(orig, w, r), crop(fill, w, r), crop(set, w, r)
	w, h = r.Dx(), r.Dy()
	go_, gf := gradMag(orig, w, h), gradMag(fill, w, h)
	so, sf := 0.0, 0.0
	for i, b := range set {
		if b {
			so += go_[i]
			sf += gf[i]
		}
	}
	return sf / so
}
