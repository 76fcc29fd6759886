package tone

import (
	_ "image/jpeg"
	_ "image/png"
	"math"
	"sort"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var loadPhoto = imagingtest.LoadPhoto

// lumaPlane returns display-encoded luminance (0..1, 16-bit precision) of every pixel.
func lumaPlane(img *imaging.Image) []float64 {
	out := make([]float64, 0, img.W()*img.H())
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			o := x * img.C
			out = append(out, float64(imaging.Encode16(lumR*row[o]+lumG*row[o+1]+lumB*row[o+2]))/65535)
		}
	}
	return out
}

// percentile of v (q in 0..1), exact for values in 0..1 at 1/65535 resolution and by
// sorting otherwise.
func percentile(v []float64, q float64) float64 {
	inRange := true
	var hist [65536]int32
	for _, x := range v {
		if !(x >= 0 && x <= 1) {
			inRange = false
			break
		}
		hist[int(x*65535+0.5)]++
	}
	if !inRange {
		s := append([]float64(nil), v...)
		sort.Float64s(s)
		return s[int(math.Round(q*float64(len(s)-1)))]
	}
	target := int(math.Round(q*float64(len(v)-1))) + 1
	acc := 0
	for k, c := range hist {
		acc += int(c)
		if acc >= target {
			return float64(k) / 65535
		}
	}
	return 1
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
