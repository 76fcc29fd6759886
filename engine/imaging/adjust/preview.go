package adjust

import (
	"fmt"
	"image"

	"github.com/porchlight/porchlight/engine/imaging"
)

// PreviewEdge is the long edge, in pixels, of the base a window previews the sliders
// on.
const PreviewEdge = 2048

// Preview renders the sliders over a cached base image straight to 8-bit sRGB, for a
// window that redraws on every slider move. It keeps its output and scratch buffers
// across renders, so a render allocates nothing but the bands' goroutines. A Preview
// is not safe for concurrent use.
type Preview struct {
	base    *imaging.Image
	out     *image.NRGBA
	p       plan
	scratch [][]float32 // one row per worker
}

// NewPreview returns a preview of base: the working image before the sliders,
// linear light, 3 or 4 channels, usually fitted within PreviewEdge (see
// pipeline.LoadPreviewBase). The preview reads base on every render and never
// changes it.
func NewPreview(base *imaging.Image) (*Preview, error) {
	if err := check(base); err != nil {
		return nil, err
	}
	return &Preview{base: base}, nil
}

// Base returns the image the preview renders from.
func (v *Preview) Base() *imaging.Image { return v.base }

// Render renders s and returns the preview's own output image, which the next
// Render overwrites: copy it, or draw it, before calling again.
func (v *Preview) Render(s Settings) (*image.NRGBA, error) {
	if v.out == nil {
		v.out = image.NewNRGBA(image.Rect(0, 0, v.base.W(), v.base.H()))
	}
	if err := v.RenderInto(v.out, s); err != nil {
		return nil, err
	}
	return v.out, nil
}

// RenderInto renders s into dst, which must be the base's size (its origin may be
// anywhere); a window that double-buffers passes its two images in turn.
func (v *Preview) RenderInto(dst *image.NRGBA, s Settings) error {
	w, h := v.base.W(), v.base.H()
	if dst.Rect.Dx() != w || dst.Rect.Dy() != h {
		return fmt.Errorf("adjust: preview is %dx%d, destination %dx%d", w, h, dst.Rect.Dx(), dst.Rect.Dy())
	}
	if err := s.Validate(); err != nil {
		return err
	}
	v.p.compile(s)
	if n := imaging.Workers(); len(v.scratch) < n {
		v.scratch = make([][]float32, n)
	}
	c := v.base.C
	identity := s.IsZero()
	imaging.Bands(h, func(worker, y0, y1 int) {
		buf := v.scratch[worker]
		if len(buf) < w*c {
			buf = make([]float32, w*c)
			v.scratch[worker] = buf
		}
		for y := y0; y < y1; y++ {
			in := v.base.Row(y)
			row := in
			if !identity {
				row = buf[:w*c]
				v.p.row(row, in, c)
			}
			o := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
			encodeRow(o, row, c)
		}
	})
	return nil
}

// encodeRow writes c-channel linear samples as opaque 8-bit sRGB NRGBA pixels.
func encodeRow(out []uint8, in []float32, c int) {
	for x, i := 0, 0; i+2 < len(in); x, i = x+4, i+c {
		px := in[i : i+3 : i+3]
		o := out[x : x+4 : x+4]
		o[0], o[1], o[2], o[3] = encode8(px[0]), encode8(px[1]), encode8(px[2]), 0xff
	}
}

// encode8LUTSize is the resolution of the linear -> 8-bit sRGB table: fine enough
// that every code but the lowest few is reached exactly as imaging.Encode8 rounds.
const encode8LUTSize = 1 << 14

var encode8LUT = func() (t [encode8LUTSize + 1]uint8) {
	for i := range t {
		t[i] = imaging.Encode8(float32(i) / encode8LUTSize)
	}
	return t
}()

func encode8(v float32) uint8 {
	if !(v > 0) {
		return 0
	}
	if v >= 1 {
		return 255
	}
	return encode8LUT[int(v*encode8LUTSize+0.5)]
}
