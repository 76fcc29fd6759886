package perspective

import (
	"github.com/porchlight/porchlight/engine/imaging"
)

// grayPlane returns a perceptually encoded luminance plane (0..255, what the segment
// detector's thresholds assume) box-averaged down by an integer factor so that its
// long side is at most maxSide, plus that factor. Averaging happens in linear light.
func grayPlane(img *imaging.Image, maxSide int) (gray []float32, w, h, factor int) {
	W, H := img.W(), img.H()
	factor = 1
	for max(W, H)/factor > maxSide {
		factor++
	}
	w, h = W/factor, H/factor
	gray = make([]float32, w*h)
	c := img.C
	inv := 1 / float32(factor*factor)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			out := gray[y*w : (y+1)*w]
			for x := range out {
				out[x] = 0
			}
			for sy := y * factor; sy < (y+1)*factor; sy++ {
				row := img.Row(sy)
				for x := range out {
					var s float32
					o := x * factor * c
					for k := 0; k < factor; k++ {
						if c >= 3 {
							s += 0.2126*row[o] + 0.7152*row[o+1] + 0.0722*row[o+2]
						} else {
							s += row[o]
						}
						o += c
					}
					out[x] += s
				}
			}
			for x, v := range out {
				out[x] = float32(imaging.Encode16(v*inv)) * (255.0 / 65535.0)
			}
		}
	})
	return gray, w, h, factor
}
