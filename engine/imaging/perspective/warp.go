package perspective

import (
	"context"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Warp returns an outW x outH image whose pixel p takes the value of src at H^-1(p):
// H maps source coordinates to output coordinates. Sampling is bicubic (Catmull-Rom),
// clamped at zero so linear light stays non-negative; output pixels whose source lies
// outside src are 0. Rows run in parallel bands. Once ctx is done it stops within a
// row and returns ctx.Err().
func Warp(ctx context.Context, src *imaging.Image, h Homography, outW, outH int) (*imaging.Image, error) {
	if src == nil || src.W() < 1 || src.H() < 1 || len(src.Pix) < (src.H()-1)*src.Stride+src.W()*src.C {
		return nil, fmt.Errorf("perspective: warp of an empty image")
	}
	if outW < 1 || outH < 1 {
		return nil, fmt.Errorf("perspective: warp to %dx%d", outW, outH)
	}
	inv, err := h.Inverse()
	if err != nil {
		return nil, fmt.Errorf("perspective: warp: %w", err)
	}
	dst := imaging.New(outW, outH, src.C)
	warpInto(ctx, dst, src, inv)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return dst, nil
}

// InverseWarp undoes Warp: it maps an image in output coordinates back to an
// outW x outH image in source coordinates.
func InverseWarp(ctx context.Context, img *imaging.Image, h Homography, outW, outH int) (*imaging.Image, error) {
	inv, err := h.Inverse()
	if err != nil {
		return nil, fmt.Errorf("perspective: inverse warp: %w", err)
	}
	return Warp(ctx, img, inv, outW, outH)
}

// cubicWeights are the Catmull-Rom weights of the four taps at offsets -1..2 for a
// fractional position t in [0, 1).
func cubicWeights(t float32) (w0, w1, w2, w3 float32) {
	t2 := t * t
	t3 := t2 * t
	w0 = -0.5*t3 + t2 - 0.5*t
	w1 = 1.5*t3 - 2.5*t2 + 1
	w2 = -1.5*t3 + 2*t2 + 0.5*t
	w3 = 0.5*t3 - 0.5*t2
	return
}

// cubicSteps is the resolution of the weight table: 1/1024 of a pixel is far below
// what 16-bit output can show.
const cubicSteps = 1024

var cubicTable = func() (t [cubicSteps + 1][4]float32) {
	for i := range t {
		t[i][0], t[i][1], t[i][2], t[i][3] = cubicWeights(float32(i) / cubicSteps)
	}
	return
}()

// warpInto fills dst by sampling src at inv(p) for each dst pixel center p, stopping
// within a row once ctx is done.
func warpInto(ctx context.Context, dst, src *imaging.Image, inv Homography) {
	sw, sh, c := src.W(), src.H(), src.C
	ow := dst.W()
	imaging.Bands(dst.H(), func(_, y0, y1 int) {
		var acc [4]float32
		for y := y0; y < y1; y++ {
			if imaging.Canceled(ctx) {
				return
			}
			row := dst.Row(y)
			py := float64(y) + 0.5
			// Numerators and denominator are affine in x: step them along the row.
			nx := inv[1]*py + inv[2] + inv[0]*0.5
			ny := inv[4]*py + inv[5] + inv[3]*0.5
			nw := inv[7]*py + inv[8] + inv[6]*0.5
			for x := 0; x < ow; x++ {
				wv := nw + inv[6]*float64(x)
				o := x * c
				if !(wv > 1e-12) {
					for k := 0; k < c; k++ {
						row[o+k] = 0
					}
					continue
				}
				// Source position in sample-grid coordinates (pixel centers at integers).
				sx := (nx+inv[0]*float64(x))/wv - 0.5
				sy := (ny+inv[3]*float64(x))/wv - 0.5
				if !(sx >= -0.5 && sy >= -0.5 && sx <= float64(sw)-0.5 && sy <= float64(sh)-0.5) {
					for k := 0; k < c; k++ {
						row[o+k] = 0
					}
					continue
				}
				fx, fy := math.Floor(sx), math.Floor(sy)
				ix, iy := int(fx), int(fy)
				wx := &cubicTable[int((sx-fx)*cubicSteps+0.5)]
				wy := &cubicTable[int((sy-fy)*cubicSteps+0.5)]
				if ix >= 1 && iy >= 1 && ix+2 < sw && iy+2 < sh {
					if c == 3 {
						row[o], row[o+1], row[o+2] = sample3(src, ix, iy, wx, wy)
						continue
					}
					sampleN(src, ix, iy, wx, wy, acc[:c])
				} else {
					sampleClamped(src, ix, iy, wx, wy, acc[:c])
				}
				for k := 0; k < c; k++ {
					row[o+k] = nonNeg(acc[k])
				}
			}
		}
	})
}

// sample3 is the interior fast path for RGB: all 16 taps lie inside the image.
func sample3(src *imaging.Image, ix, iy int, wx, wy *[4]float32) (r, g, b float32) {
	base := (iy-1)*src.Stride + (ix-1)*3
	for j := 0; j < 4; j++ {
		p := src.Pix[base+j*src.Stride : base+j*src.Stride+12]
		rr := wx[0]*p[0] + wx[1]*p[3] + wx[2]*p[6] + wx[3]*p[9]
		gg := wx[0]*p[1] + wx[1]*p[4] + wx[2]*p[7] + wx[3]*p[10]
		bb := wx[0]*p[2] + wx[1]*p[5] + wx[2]*p[8] + wx[3]*p[11]
		r += wy[j] * rr
		g += wy[j] * gg
		b += wy[j] * bb
	}
	return nonNeg(r), nonNeg(g), nonNeg(b)
}

// nonNeg clamps bicubic undershoot (and NaN from non-finite input) to 0.
func nonNeg(v float32) float32 {
	if !(v > 0) {
		return 0
	}
	return v
}

func sampleN(src *imaging.Image, ix, iy int, wx, wy *[4]float32, acc []float32) {
	c := src.C
	for k := range acc {
		acc[k] = 0
	}
	for j := 0; j < 4; j++ {
		rowOff := (iy-1+j)*src.Stride + (ix-1)*c
		for i := 0; i < 4; i++ {
			wgt := wy[j] * wx[i]
			p := src.Pix[rowOff+i*c : rowOff+i*c+c]
			for k := range acc {
				acc[k] += wgt * p[k]
			}
		}
	}
}

// sampleClamped handles taps near the border by repeating edge pixels.
func sampleClamped(src *imaging.Image, ix, iy int, wx, wy *[4]float32, acc []float32) {
	c, sw, sh := src.C, src.W(), src.H()
	for k := range acc {
		acc[k] = 0
	}
	for j := 0; j < 4; j++ {
		yy := min(max(iy-1+j, 0), sh-1)
		for i := 0; i < 4; i++ {
			xx := min(max(ix-1+i, 0), sw-1)
			wgt := wy[j] * wx[i]
			p := src.Pix[yy*src.Stride+xx*c : yy*src.Stride+xx*c+c]
			for k := range acc {
				acc[k] += wgt * p[k]
			}
		}
	}
}
