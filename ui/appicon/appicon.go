// Package appicon draws Porchlight's icon: a house at dusk with its porch light on.
// It is drawn in code so that the window, `fyne package` (packaging/icon.png, made by
// packaging/genicon) and any size in between come from one drawing.
package appicon

//go:generate go run ../../packaging/genicon -o ../../packaging/icon.png

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
)

// Draw renders the icon at size×size pixels, antialiased by 4×4 supersampling.
func Draw(size int) *image.NRGBA {
	if size < 16 {
		size = 16
	}
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const ss = 4
	inv := 1 / float64(size)
	for py := 0; py < size; py++ {
		for px := 0; px < size; px++ {
			var r, g, b, a float64
			for sy := 0; sy < ss; sy++ {
				for sx := 0; sx < ss; sx++ {
					x := (float64(px) + (float64(sx)+0.5)/ss) * inv
					y := (float64(py) + (float64(sy)+0.5)/ss) * inv
					cr, cg, cb, ca := shade(x, y)
					r += cr * ca
					g += cg * ca
					b += cb * ca
					a += ca
				}
			}
			o := img.PixOffset(px, py)
			if a == 0 {
				continue
			}
			img.Pix[o] = to8(r / a)
			img.Pix[o+1] = to8(g / a)
			img.Pix[o+2] = to8(b / a)
			img.Pix[o+3] = to8(a / (ss * ss))
		}
	}
	return img
}

func to8(v float64) uint8 {
	return uint8(math.Round(math.Max(0, math.Min(1, v)) * 255))
}

// Geometry in unit coordinates (0..1, y down).
const (
	margin    = 0.035
	corner    = 0.21
	roofApexY = 0.20
	roofBaseY = 0.50
	eaveL     = 0.13
	eaveR     = 0.87
	wallL     = 0.22
	wallR     = 0.78
	wallBot   = 0.84
	doorL     = 0.42
	doorR     = 0.56
	doorTop   = 0.60
	lampX     = 0.655
	lampY     = 0.62
	lampR     = 0.032
)

// shade returns the colour (0..1 sRGB) and coverage of one sample point.
func shade(x, y float64) (r, g, b, a float64) {
	if roundedRect(x, y, margin, margin, 1-margin, 1-margin, corner) > 0 {
		return 0, 0, 0, 0
	}
	// Dusk sky: deep blue at the top warming toward the horizon.
	t := smooth(0.05, 0.95, y)
	r, g, b = mix3(0.10, 0.14, 0.30, 0.30, 0.22, 0.34, t)
	// Ground.
	if y > wallBot {
		r, g, b = 0.10, 0.09, 0.12
	}
	// The lamp's light on everything around it.
	d := math.Hypot(x-lampX, y-lampY)
	glow := math.Exp(-d * d / (2 * 0.11 * 0.11))

	inRoof := y >= roofApexY && y <= roofBaseY && insideTriangle(x, y)
	inWall := x >= wallL && x <= wallR && y >= roofBaseY-0.001 && y <= wallBot
	switch {
	case inRoof:
		r, g, b = 0.16, 0.16, 0.21
		// A thin warm rim along the roof edge.
		if edgeDistance(x, y) < 0.018 {
			r, g, b = 0.95, 0.66, 0.25
		}
	case inWall:
		r, g, b = 0.62, 0.57, 0.52
		if x >= doorL && x <= doorR && y >= doorTop {
			// The door, lit from inside.
			k := smooth(doorTop, wallBot, y)
			r, g, b = mix3(0.99, 0.80, 0.42, 0.93, 0.55, 0.18, k)
		}
		// A lit window on the side away from the lamp.
		if x >= 0.27 && x <= 0.37 && y >= 0.58 && y <= 0.70 {
			r, g, b = 0.98, 0.77, 0.38
			if math.Abs(x-0.32) < 0.006 || math.Abs(y-0.64) < 0.006 {
				r, g, b = 0.55, 0.45, 0.35
			}
		}
	}
	// Light: the lamp tints everything warm, more where it is near.
	r += glow * 0.42
	g += glow * 0.27
	b += glow * 0.05
	if dl := d / lampR; dl < 1 {
		k := 1 - dl*dl
		r, g, b = mix3(r, g, b, 1, 0.98, 0.86, math.Min(1, k*3))
	}
	// Lantern cap.
	if math.Abs(x-lampX) < lampR*0.9 && y < lampY-lampR*0.7 && y > lampY-lampR*1.25 {
		r, g, b = 0.16, 0.14, 0.16
	}
	// Lamp bracket.
	if math.Abs(x-lampX) < 0.006 && y < lampY-lampR && y > lampY-lampR-0.035 {
		r, g, b = 0.20, 0.18, 0.20
	}
	return clamp(r), clamp(g), clamp(b), 1
}

func clamp(v float64) float64 { return math.Max(0, math.Min(1, v)) }

func smooth(e0, e1, x float64) float64 {
	t := clamp((x - e0) / (e1 - e0))
	return t * t * (3 - 2*t)
}

func mix3(r0, g0, b0, r1, g1, b1, t float64) (float64, float64, float64) {
	return r0 + (r1-r0)*t, g0 + (g1-g0)*t, b0 + (b1-b0)*t
}

// roundedRect is the signed distance to a rounded rectangle (negative inside).
func roundedRect(x, y, x0, y0, x1, y1, rad float64) float64 {
	cx, cy := (x0+x1)/2, (y0+y1)/2
	hx, hy := (x1-x0)/2-rad, (y1-y0)/2-rad
	dx := math.Abs(x-cx) - hx
	dy := math.Abs(y-cy) - hy
	out := math.Hypot(math.Max(dx, 0), math.Max(dy, 0))
	in := math.Min(math.Max(dx, dy), 0)
	return out + in - rad
}

// insideTriangle reports whether (x, y) lies under the roof's slopes.
func insideTriangle(x, y float64) bool {
	half := (eaveR - eaveL) / 2
	k := (y - roofApexY) / (roofBaseY - roofApexY)
	return math.Abs(x-0.5) <= half*k
}

// edgeDistance is the distance from (x, y) to the nearer roof slope.
func edgeDistance(x, y float64) float64 {
	ax, ay := 0.5, roofApexY
	dist := func(bx, by float64) float64 {
		vx, vy := bx-ax, by-ay
		wx, wy := x-ax, y-ay
		t := clamp((wx*vx + wy*vy) / (vx*vx + vy*vy))
		return math.Hypot(wx-t*vx, wy-t*vy)
	}
	return math.Min(dist(eaveL, roofBaseY), dist(eaveR, roofBaseY))
}

var (
	pngOnce  sync.Once
	pngBytes []byte
)

// PNG returns the icon as a 256×256 PNG (drawn once).
func PNG() []byte {
	pngOnce.Do(func() {
		var buf bytes.Buffer
		if err := png.Encode(&buf, Draw(256)); err == nil {
			pngBytes = buf.Bytes()
		}
	})
	return pngBytes
}

// Background is the icon's sky colour, for splash areas that continue it.
var Background = color.NRGBA{R: 0x1A, G: 0x24, B: 0x4D, A: 0xFF}
