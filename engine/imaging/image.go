// Package imaging is Porchlight's pixel layer: a float32 linear-light image type,
// conversion in from and out to Go images, row-band parallelism and resampling.
// Algorithms (alignment, fusion, perspective, tone, sky, privacy, inpainting) live in
// subpackages that import only this one; imaging imports nothing of Porchlight's.
//
// Pixels are stored as interleaved float32 samples, linear light (not sRGB-encoded)
// in 0..1 for displayable values, so averaging and resampling are gamma-correct.
// Values above 1 are allowed in intermediate HDR data. Images that are only read
// until a merge can be held narrow, as 8- or 16-bit sRGB codes (see Narrow); frame-size
// buffers ask for transparent huge pages (see MakePixels).
//
// Long-running entry points take a context.Context first and stop within a fraction
// of a second of a cancel, returning ctx.Err(): their loops ask Canceled every row or
// so, or run their bands through BandsCtx, which cuts them into short pieces.
package imaging

import (
	"image"
)

// Image is a float32 image with C interleaved channels (1 = gray, 3 = RGB, 4 = RGBA).
// Pix[(y-Rect.Min.Y)*Stride + (x-Rect.Min.X)*C + c] is channel c of pixel (x, y).
// A narrow image (see Narrow) holds sRGB codes in Pix8 or Pix16 instead, same layout.
type Image struct {
	Pix    []float32
	Stride int // samples per row
	C      int // channels per pixel
	Rect   image.Rectangle

	Pix8  []uint8  // sRGB-encoded 8-bit codes of a narrow image, Pix nil
	Pix16 []uint16 // sRGB-encoded 16-bit codes of a narrow image, Pix nil
}

// New allocates a zeroed w×h image with c channels.
func New(w, h, c int) *Image {
	return &Image{Pix: MakePixels[float32](w * h * c), Stride: w * c, C: c, Rect: image.Rect(0, 0, w, h)}
}

// Bounds returns the image rectangle.
func (m *Image) Bounds() image.Rectangle { return m.Rect }

// W is the width in pixels.
func (m *Image) W() int { return m.Rect.Dx() }

// H is the height in pixels.
func (m *Image) H() int { return m.Rect.Dy() }

// Row returns the samples of row y (0-based from Rect.Min.Y).
func (m *Image) Row(y int) []float32 {
	o := y * m.Stride
	return m.Pix[o : o+m.W()*m.C]
}

// At returns channel c of the pixel at (x, y), 0-based from Rect.Min.
func (m *Image) At(x, y, c int) float32 { return m.Pix[y*m.Stride+x*m.C+c] }

// Set sets channel c of the pixel at (x, y), 0-based from Rect.Min.
func (m *Image) Set(x, y, c int, v float32) { m.Pix[y*m.Stride+x*m.C+c] = v }

// Clone returns a deep copy.
func (m *Image) Clone() *Image {
	if m.IsNarrow() {
		n := &Image{Stride: m.Stride, C: m.C, Rect: m.Rect}
		n.Pix8 = append([]uint8(nil), m.Pix8...)
		n.Pix16 = append([]uint16(nil), m.Pix16...)
		return n
	}
	n := New(m.W(), m.H(), m.C)
	for y := 0; y < m.H(); y++ {
		copy(n.Row(y), m.Row(y))
	}
	n.Rect = m.Rect
	return n
}

// SameSize reports whether a and b have the same width and height.
func SameSize(a, b *Image) bool { return a.W() == b.W() && a.H() == b.H() }
