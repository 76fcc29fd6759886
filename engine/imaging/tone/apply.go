package tone

import (
	"context"
	"fmt"
	"math"

	"github.com/porchlight/porchlight/engine/imaging"
)

// Auto-levels limits, in display values: the black point may move up to maxBlack (a
// black that high is haze or flare, not shadow) and the white point down to minWhite,
// so a dim or hazy photo is stretched but a night shot is not turned into day.
const (
	levelsLowPct  = 0.005
	levelsHighPct = 0.995
	maxBlack      = 0.25
	minWhite      = 0.60
	levelsBins    = 4096
	levelsRange   = 1.25 // histogram span in display values (HDR above 1 lands in range)
)

// plan is a look compiled for one image: gains, tables and the base layer.
type plan struct {
	gains    [3]float32
	base     *baseLayer
	tone     *lut // nil: only clamp
	color    colorOps
	hasColor bool
	// Levels is the stretch auto-levels chose (display values); zero when off.
	levelsLo, levelsHi float64
}

// Result reports what Apply measured and chose, for logs and tests.
type Result struct {
	// LevelsBlack and LevelsWhite are the display values auto-levels mapped to 0 and
	// 1 (0 and 1 when auto-levels was off).
	LevelsBlack, LevelsWhite float64
	// SharpenSigma is the unsharp-mask radius in pixels (0 when off).
	SharpenSigma float64
}

// Apply renders look on img and returns a new image of the same size, display-ready
// linear light in 0..1 (alpha, when present, is copied). img is not modified. Once
// ctx is done it stops within a row and returns ctx.Err().
func Apply(ctx context.Context, img *imaging.Image, look Look) (*imaging.Image, error) {
	out, _, err := ApplyResult(ctx, img, look)
	return out, err
}

// ApplyResult is Apply that also reports the measured levels and sharpening radius.
func ApplyResult(ctx context.Context, img *imaging.Image, look Look) (*imaging.Image, Result, error) {
	var out *imaging.Image
	res, err := render(ctx, img, look, func() *imaging.Image {
		out = imaging.New(img.W(), img.H(), img.C)
		return out
	})
	if err != nil {
		return nil, Result{}, err
	}
	return out, res, nil
}

// ApplyInPlace is ApplyResult writing the result over img, for a caller that has no
// further use for the input: it saves a full-size image of memory. A cancel leaves
// img partly rendered.
func ApplyInPlace(ctx context.Context, img *imaging.Image, look Look) (Result, error) {
	return render(ctx, img, look, func() *imaging.Image { return img })
}

// render checks img and look, then renders into the image dst returns (img itself,
// or a new one).
func render(ctx context.Context, img *imaging.Image, look Look, dst func() *imaging.Image) (Result, error) {
	if err := checkImage(img); err != nil {
		return Result{}, err
	}
	if err := look.Validate(); err != nil {
		return Result{}, err
	}
	p, err := compile(ctx, img, look)
	if err != nil {
		return Result{}, err
	}
	var us *unsharp
	if look.Sharpen {
		us = newUnsharp(img.W(), img.H())
	}
	if err := p.run(ctx, img, dst(), us); err != nil {
		return Result{}, err
	}
	res := Result{LevelsBlack: 0, LevelsWhite: 1}
	if look.AutoLevels {
		res.LevelsBlack, res.LevelsWhite = p.levelsLo, p.levelsHi
	}
	if us != nil {
		res.SharpenSigma = us.sigma
	}
	return res, nil
}

func checkImage(img *imaging.Image) error {
	switch {
	case img == nil:
		return fmt.Errorf("tone: nil image")
	case img.IsNarrow():
		return fmt.Errorf("tone: narrow image, want float32 samples")
	case img.C != 3 && img.C != 4:
		return fmt.Errorf("tone: %d channels, want RGB or RGBA", img.C)
	case img.W() < 1 || img.H() < 1:
		return fmt.Errorf("tone: empty image")
	case img.Stride < img.W()*img.C || len(img.Pix) < (img.H()-1)*img.Stride+img.W()*img.C:
		return fmt.Errorf("tone: image buffer is shorter than its size")
	}
	return nil
}

// compile turns a look into tables for this image. The analysis copy is made only
// when the local controls or auto-levels need it.
func compile(ctx context.Context, img *imaging.Image, look Look) (*plan, error) {
	wb := whiteBalanceGains(look.Temperature, look.Tint)
	ev := math.Exp2(look.Exposure)
	p := &plan{color: newColorOps(look), hasColor: look.hasColor()}
	for c := range p.gains {
		p.gains[c] = float32(wb[c] * ev)
	}
	f, err := newToneFunc(look)
	if err != nil {
		return nil, err
	}
	var th *thumb
	if look.hasLocal() || look.AutoLevels || look.CleanShadows != 0 {
		if th, err = makeThumb(ctx, img, p.gains); err != nil {
			return nil, err
		}
	}
	if look.hasLocal() {
		p.base = newBaseLayer(th, img.W(), newGainTable(look.Shadows, look.Highlights), look.Clarity)
	}
	if !f.identity() || look.AutoLevels {
		p.tone = newLUT(func(v float64) float64 { return imaging.DecodeSRGB64(clamp01(f.at(imaging.EncodeSRGB64(v)))) })
	}
	if look.AutoLevels {
		lo, hi := p.measureLevels(th)
		p.levelsLo, p.levelsHi = lo, hi
		p.tone = newLUT(func(v float64) float64 {
			x := f.at(imaging.EncodeSRGB64(v))
			return imaging.DecodeSRGB64(clamp01((x - lo) / (hi - lo)))
		})
	}
	if look.CleanShadows != 0 {
		// The cast is measured on the finished tones, before colour: what vibrance
		// would amplify is taken out first.
		if g, ok := shadowCast(th.w*th.h, func(i int) (float32, float32, float32) { return p.thumbPixel(th, i) }); ok {
			s := look.CleanShadows / 100
			for c := range g {
				p.color.clean[c] = float32(s * (g[c] - 1))
			}
		}
	}
	return p, nil
}

// thumbPixel renders pixel i of the analysis copy with the local controls and the
// tone table.
func (p *plan) thumbPixel(th *thumb, i int) (r, g, b float32) {
	r, g, b = th.rgb[3*i], th.rgb[3*i+1], th.rgb[3*i+2]
	if p.base != nil {
		// Slice the grid at the thumbnail pixel's center.
		m := p.base.sample((float64(i%th.w)+0.5)*float64(th.k), (float64(i/th.w)+0.5)*float64(th.k), lumR*r+lumG*g+lumB*b)
		r, g, b = r*m, g*m, b*m
	}
	if p.tone != nil {
		r, g, b = p.tone.at(r), p.tone.at(g), p.tone.at(b)
	}
	return r, g, b
}

// measureLevels renders the analysis copy with everything but levels and returns the
// robust black and white points of its luminance, in display values.
func (p *plan) measureLevels(th *thumb) (lo, hi float64) {
	var hist [levelsBins]int
	n := th.w * th.h
	for i := 0; i < n; i++ {
		r, g, b := p.thumbPixel(th, i)
		if p.hasColor {
			r, g, b = p.color.apply(r, g, b)
		}
		y := float64(lumR*r + lumG*g + lumB*b)
		var e float64
		if y < 1 {
			e = float64(imaging.Encode16(float32(y))) / 65535
		} else {
			e = imaging.EncodeSRGB64(y)
		}
		k := int(e / levelsRange * levelsBins)
		hist[min(max(k, 0), levelsBins-1)]++
	}
	pct := func(q float64) float64 {
		target := int(math.Ceil(q * float64(n)))
		acc := 0
		for k, c := range hist {
			acc += c
			if acc >= target {
				return (float64(k) + 0.5) * levelsRange / levelsBins
			}
		}
		return levelsRange
	}
	lo = math.Min(pct(levelsLowPct), maxBlack)
	hi = math.Min(math.Max(pct(levelsHighPct), minWhite), 1)
	return lo, hi
}

// run is the full-resolution pass: gains, local exposure, tone table, color and
// clamp, then (with us) the unsharp mask, streamed row by row so that every pixel is
// read once and written once. dst may be src. Once ctx is done it stops within a row
// and returns ctx.Err().
func (p *plan) run(ctx context.Context, src, dst *imaging.Image, us *unsharp) error {
	W, H := src.W(), src.H()
	// In place, the unsharp mask of a band reads up to r rows of its neighbours, which
	// they overwrite meanwhile: those rows are read from copies made first.
	var seam map[int][]float32
	if us != nil && &src.Pix[0] == &dst.Pix[0] {
		seam = map[int][]float32{}
		for _, b := range imaging.BandStarts(H) {
			for y := max(b-us.r, 0); y < min(b+us.r, H); y++ {
				seam[y] = append([]float32(nil), src.Row(y)...)
			}
		}
	}
	imaging.Bands(H, func(_, y0, y1 int) {
		var sl slab
		if p.base != nil {
			sl = p.base.newSlab()
		}
		// RGB output rows are rendered in place; RGBA goes through a buffer to add
		// alpha back.
		buf := make([]float32, 3*W)
		target := func(y int) []float32 {
			if dst.C == 3 {
				return dst.Row(y)
			}
			return buf
		}
		if us == nil {
			for y := y0; y < y1; y++ {
				if imaging.Canceled(ctx) {
					return
				}
				row := target(y)
				p.toneRow(src.Row(y), src.C, y, row, sl)
				writeRow(dst, src, y, row)
			}
			return
		}
		render := func(y int, row []float32) {
			if seam != nil && (y < y0 || y >= y1) {
				p.toneRow(seam[y], src.C, y, row, sl)
				return
			}
			p.toneRow(src.Row(y), src.C, y, row, sl)
		}
		us.band(ctx, y0, y1, render, target, func(y int, row []float32) { writeRow(dst, src, y, row) })
	})
	return ctx.Err()
}

// toneRow renders row y, whose samples (c per pixel) are in, into buf (3 floats per
// pixel, clamped to 0..1). Each step is a separate simple loop over the row, which
// keeps every loop small enough for the compiler to hold in registers and for the
// processor to overlap iterations.
func (p *plan) toneRow(in []float32, c, y int, buf []float32, sl slab) {
	W := len(buf) / 3
	g0, g1, g2 := p.gains[0], p.gains[1], p.gains[2]
	// Gains (white balance and exposure), then the local exposure.
	if p.base != nil {
		p.base.rows(y, sl)
		for x := 0; x < W; x++ {
			px, q := in[x*c:x*c+3:x*c+3], buf[3*x:3*x+3:3*x+3]
			r, g, b := px[0]*g0, px[1]*g1, px[2]*g2
			m := p.base.at(x, lumR*r+lumG*g+lumB*b, sl)
			q[0], q[1], q[2] = r*m, g*m, b*m
		}
	} else {
		for x := 0; x < W; x++ {
			px, q := in[x*c:x*c+3:x*c+3], buf[3*x:3*x+3:3*x+3]
			q[0], q[1], q[2] = px[0]*g0, px[1]*g1, px[2]*g2
		}
	}
	if p.tone != nil {
		t := p.tone
		for i, v := range buf {
			buf[i] = t.at(v)
		}
	}
	if p.hasColor {
		for x := 0; x < W; x++ {
			q := buf[3*x : 3*x+3 : 3*x+3]
			r, g, b := p.color.apply(q[0], q[1], q[2])
			q[0], q[1], q[2] = imaging.Clamp01(r), imaging.Clamp01(g), imaging.Clamp01(b)
		}
	} else {
		for i, v := range buf {
			buf[i] = imaging.Clamp01(v)
		}
	}
}

// writeRow stores a rendered row into dst, copying alpha from src; RGB rows that
// were rendered in place need nothing.
func writeRow(dst, src *imaging.Image, y int, buf []float32) {
	out, c := dst.Row(y), dst.C
	if c == 3 {
		if &out[0] != &buf[0] {
			copy(out, buf)
		}
		return
	}
	in := src.Row(y)
	for x := 0; x < dst.W(); x++ {
		copy(out[x*c:x*c+3], buf[3*x:3*x+3])
		out[x*c+3] = in[x*c+3]
	}
}

func clamp01(v float64) float64 {
	if !(v > 0) {
		return 0
	}
	if v > 1 {
		return 1
	}
	return v
}
