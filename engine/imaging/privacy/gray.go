package privacy

import (
	"errors"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// grayOf converts a linear-light image to 8-bit sRGB-encoded Rec. 601 luma, shrunk by
// the integer factor k with a k x k box average taken in linear light (so the shrink is
// gamma-correct and costs one pass over the full-size pixels).
func grayOf(img *imaging.Image, k int) (*gray, error) {
	g, _, err := grayAndSkin(img, k)
	return g, err
}

// grayAndSkin is grayOf that also marks, per scanned pixel, whether its colour lies in
// the usual YCbCr skin cluster (Cb 77..127, Cr 133..173 on 8-bit sRGB). skin is nil
// for an image without colour (one channel, or every pixel within a few levels of
// grey), where skin tone tells nothing.
func grayAndSkin(img *imaging.Image, k int) (*gray, []uint8, error) {
	if err := checkImage(img); err != nil {
		return nil, nil, err
	}
	if k < 1 {
		k = 1
	}
	W, H := img.W(), img.H()
	w, h := W/k, H/k
	if w < 1 || h < 1 {
		return nil, nil, fmt.Errorf("privacy: image %dx%d too small", W, H)
	}
	g := &gray{w: w, h: h, pix: make([]uint8, w*h)}
	skin := make([]uint8, w*h)
	chroma := make([]float64, imaging.Workers()) // per worker: summed |Cb-128|+|Cr-128|
	c := img.C
	inv := 1 / float32(k*k)
	imaging.Bands(h, func(worker, y0, y1 int) {
		acc := make([]float32, w*3) // per-worker scratch
		for y := y0; y < y1; y++ {
			clear(acc)
			for dy := 0; dy < k; dy++ {
				row := img.Row(y*k + dy)
				for x := 0; x < w; x++ {
					o := x * k * c
					var r, gg, b float32
					for dx := 0; dx < k; dx++ {
						if c >= 3 {
							r += row[o]
							gg += row[o+1]
							b += row[o+2]
						} else {
							r += row[o]
						}
						o += c
					}
					acc[3*x] += r
					acc[3*x+1] += gg
					acc[3*x+2] += b
				}
			}
			out := g.row(y)
			sk := skin[y*w : (y+1)*w]
			for x := 0; x < w; x++ {
				var v float32
				if c >= 3 {
					r := float32(imaging.Encode8(acc[3*x] * inv))
					gg := float32(imaging.Encode8(acc[3*x+1] * inv))
					b := float32(imaging.Encode8(acc[3*x+2] * inv))
					v = 0.299*r + 0.587*gg + 0.114*b
					cb := 128 - 0.168736*r - 0.331264*gg + 0.5*b
					cr := 128 + 0.5*r - 0.418688*gg - 0.081312*b
					if cb >= 77 && cb <= 127 && cr >= 133 && cr <= 173 {
						sk[x] = 1
					}
					chroma[worker] += math.Abs(float64(cb-128)) + math.Abs(float64(cr-128))
				} else {
					v = float32(imaging.Encode8(acc[3*x] * inv))
				}
				out[x] = uint8(v + 0.5)
			}
		}
	})
	total := 0.0
	for _, v := range chroma {
		total += v
	}
	if c < 3 || total/float64(w*h) < minMeanChroma {
		skin = nil
	}
	return g, skin, nil
}

// minMeanChroma is the mean |Cb-128|+|Cr-128| below which an image counts as grey.
const minMeanChroma = 4

// checkImage refuses images the detectors and the blur cannot read safely.
func checkImage(img *imaging.Image) error {
	if img == nil {
		return errors.New("privacy: nil image")
	}
	if img.W() <= 0 || img.H() <= 0 {
		return fmt.Errorf("privacy: empty image %v", img.Rect)
	}
	if img.C != 1 && img.C != 3 && img.C != 4 {
		return fmt.Errorf("privacy: unsupported channel count %d", img.C)
	}
	if img.Stride < img.W()*img.C || len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C {
		return errors.New("privacy: pixel buffer shorter than the image")
	}
	return nil
}

// upscale2 doubles a gray image bilinearly; small photos are scanned at twice their
// size so that faces a little larger than the 20-pixel window are seen at several
// pyramid levels.
func upscale2(g *gray) *gray {
	w, h := g.w*2, g.h*2
	out := &gray{w: w, h: h, pix: make([]uint8, w*h)}
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			sy := (float32(y)+0.5)/2 - 0.5
			ya := int(sy)
			if sy < 0 {
				ya = -1
			}
			fy := sy - float32(ya)
			r0, r1 := g.row(clampInt(ya, 0, g.h-1)), g.row(clampInt(ya+1, 0, g.h-1))
			o := out.row(y)
			for x := 0; x < w; x++ {
				sx := (float32(x)+0.5)/2 - 0.5
				xa := int(sx)
				if sx < 0 {
					xa = -1
				}
				fx := sx - float32(xa)
				x0, x1 := clampInt(xa, 0, g.w-1), clampInt(xa+1, 0, g.w-1)
				top := float32(r0[x0]) + fx*(float32(r0[x1])-float32(r0[x0]))
				bot := float32(r1[x0]) + fx*(float32(r1[x1])-float32(r1[x0]))
				o[x] = uint8(top + fy*(bot-top) + 0.5)
			}
		}
	})
	return out
}

// lumaPatch samples the region r of the original image (in its pixels) into a w x h
// 8-bit luma patch, averaging an n x n grid of bilinear samples per output pixel when
// the patch is smaller than the region, so small details keep their full-resolution
// sharpness and large regions do not alias.
func lumaPatch(img *imaging.Image, r rectF, w, h int, dst []uint8) []uint8 {
	if cap(dst) < w*h {
		dst = make([]uint8, w*h)
	}
	dst = dst[:w*h]
	sx, sy := r.w/float64(w), r.h/float64(h)
	n := max(1, int(math.Ceil(math.Max(sx, sy))))
	inv := 1 / float32(n*n)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var acc float32
			for j := 0; j < n; j++ {
				py := r.y + (float64(y)+(float64(j)+0.5)/float64(n))*sy
				for i := 0; i < n; i++ {
					px := r.x + (float64(x)+(float64(i)+0.5)/float64(n))*sx
					acc += lumaAt(img, px, py)
				}
			}
			dst[y*w+x] = uint8(acc*inv + 0.5)
		}
	}
	return dst
}

// lumaAt is the bilinear 8-bit Rec. 601 luma (of sRGB-encoded values) at continuous
// coordinates (pixel i spans [i, i+1)).
func lumaAt(img *imaging.Image, x, y float64) float32 {
	x -= 0.5
	y -= 0.5
	x0, y0 := int(math.Floor(x)), int(math.Floor(y))
	fx, fy := float32(x-float64(x0)), float32(y-float64(y0))
	W, H := img.W(), img.H()
	xa, xb := clampInt(x0, 0, W-1), clampInt(x0+1, 0, W-1)
	ya, yb := clampInt(y0, 0, H-1), clampInt(y0+1, 0, H-1)
	l := func(px, py int) float32 {
		o := py*img.Stride + px*img.C
		if img.C < 3 {
			return float32(imaging.Encode8(img.Pix[o]))
		}
		return 0.299*float32(imaging.Encode8(img.Pix[o])) + 0.587*float32(imaging.Encode8(img.Pix[o+1])) +
			0.114*float32(imaging.Encode8(img.Pix[o+2]))
	}
	top := l(xa, ya) + fx*(l(xb, ya)-l(xa, ya))
	bot := l(xa, yb) + fx*(l(xb, yb)-l(xa, yb))
	return top + fy*(bot-top)
}
