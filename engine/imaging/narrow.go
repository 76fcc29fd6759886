package imaging

import (
	"fmt"
	"image"
	"sync/atomic"
)

// Narrow storage. Brackets waiting for alignment and fusion are only read, and the
// fusion reads them as sRGB-encoded values, so they are held as sRGB codes: 8 bits
// when every sample is exactly an 8-bit code (a JPEG decoded without a profile
// conversion), else 16 bits. That is a quarter or half of float32's memory, and an
// 8-bit sample becomes its encoded value by one small table lookup.
//
// A narrow image has Pix8 or Pix16 set and Pix nil; Stride and C mean what they do for
// Pix. Row, At and Set work on float32 images only: a step that needs float samples
// calls Widen.

// IsNarrow reports whether m holds sRGB codes instead of float32 samples.
func (m *Image) IsNarrow() bool { return m.Pix == nil && (m.Pix8 != nil || m.Pix16 != nil) }

// CheckBuffer returns an error when the sample buffer in use is shorter than the
// image.
func (m *Image) CheckBuffer() error {
	n := len(m.Pix)
	switch {
	case m.Pix8 != nil:
		n = len(m.Pix8)
	case m.Pix16 != nil:
		n = len(m.Pix16)
	}
	if m.W() > 0 && m.H() > 0 && (m.Stride < m.W()*m.C || n < (m.H()-1)*m.Stride+m.W()*m.C) {
		return fmt.Errorf("pixel buffer shorter than the %dx%d image", m.W(), m.H())
	}
	return nil
}

// Bytes is the size of the sample buffer in use.
func (m *Image) Bytes() int {
	switch {
	case m.Pix8 != nil:
		return len(m.Pix8)
	case m.Pix16 != nil:
		return 2 * len(m.Pix16)
	}
	return 4 * len(m.Pix)
}

// code8 maps linear light in 0..1, in code8Steps steps, to the nearest 8-bit code's
// linear value; it is fine enough that every decoded 8-bit value lands on its own code
// (neighbouring codes are at least 1/3300 apart).
const code8Steps = 1 << 14

var code8 = func() *[code8Steps + 1]uint8 {
	var t [code8Steps + 1]uint8
	c := 0
	for i := range t {
		v := float32(i) / code8Steps
		for c < 255 && decode8[c+1]-v < v-decode8[c] {
			c++
		}
		t[i] = uint8(c)
	}
	return &t
}()

// encLerpSteps is the resolution of the interpolated linear -> sRGB table for 16-bit
// codes: within a tenth of a 16-bit code everywhere.
const encLerpSteps = 1 << 14

var encLerp = func() []float32 {
	t := make([]float32, encLerpSteps+2)
	for i := range t {
		t[i] = LinearToSRGB(float32(i)/encLerpSteps) * 65535
	}
	return t
}()

// encode16Exact maps linear light to a 16-bit sRGB code, clamping (NaN gives 0).
func encode16Exact(v float32) uint16 {
	if !(v > 0) {
		return 0
	}
	if v >= 1 {
		return 65535
	}
	p := v * encLerpSteps
	i := int(p)
	f := p - float32(i)
	return uint16(encLerp[i] + f*(encLerp[i+1]-encLerp[i]) + 0.5)
}

// Narrow returns m held as sRGB codes (8-bit when that is exact, else 16-bit); m
// itself when it is narrow already. Samples outside 0..1 are clamped.
func (m *Image) Narrow() *Image {
	if m.IsNarrow() {
		return m
	}
	w, h, c := m.W(), m.H(), m.C
	n := &Image{Stride: w * c, C: c, Rect: m.Rect}
	n.Pix8 = MakePixels[uint8](w * h * c)
	var inexact atomic.Bool
	Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1 && !inexact.Load(); y++ {
			src, dst := m.Row(y), n.Pix8[y*n.Stride:(y+1)*n.Stride]
			dst = dst[:len(src)]
			miss := false
			for i, v := range src {
				k := int(v*code8Steps + 0.5)
				if k < 0 || k > code8Steps {
					miss = true
					break
				}
				q := code8[k]
				miss = miss || decode8[q] != v
				dst[i] = q
			}
			if miss {
				inexact.Store(true)
			}
		}
	})
	if !inexact.Load() {
		return n
	}
	n.Pix8 = nil
	n.Pix16 = MakePixels[uint16](w * h * c)
	Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := m.Row(y), n.Pix16[y*n.Stride:(y+1)*n.Stride]
			dst = dst[:len(src)]
			for i, v := range src {
				dst[i] = encode16Exact(v)
			}
		}
	})
	return n
}

// NarrowLike returns a zeroed w×h image with 16-bit codes, for results (a warped
// bracket) made from narrow images.
func NarrowLike(w, h, c int) *Image {
	return &Image{Pix16: MakePixels[uint16](w * h * c), Stride: w * c, C: c, Rect: image.Rect(0, 0, w, h)}
}

// Row16 returns the 16-bit codes of row y of an image made by NarrowLike.
func (m *Image) Row16(y int) []uint16 {
	o := y * m.Stride
	return m.Pix16[o : o+m.W()*m.C]
}

// PutLinearRow stores linear samples (W·C) into row y of a narrow 16-bit image,
// encoding them.
func (m *Image) PutLinearRow(y int, src []float32) {
	dst := m.Row16(y)
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = encode16Exact(v)
	}
}

// enc8 maps 8-bit codes to encoded values in 0..1.
var enc8 = func() (t [256]float32) {
	for i := range t {
		t[i] = float32(i) / 255
	}
	return
}()

// EncodedRow writes the sRGB-encoded values (0..1) of row y, W·C samples, into
// dst and returns them. Float samples are encoded with LinearToSRGB's clamping.
func (m *Image) EncodedRow(y int, dst []float32) []float32 {
	n := m.W() * m.C
	dst = dst[:n]
	o := y * m.Stride
	switch {
	case m.Pix8 != nil:
		for i, v := range m.Pix8[o : o+n] {
			dst[i] = enc8[v]
		}
	case m.Pix16 != nil:
		for i, v := range m.Pix16[o : o+n] {
			dst[i] = float32(v) * (1.0 / 65535)
		}
	default:
		for i, v := range m.Pix[o : o+n] {
			dst[i] = float32(encode16Exact(v)) * (1.0 / 65535)
		}
	}
	return dst
}

// LinearRow returns the linear samples of row y: the row itself for a float32 image,
// else decoded into dst (W·C samples).
func (m *Image) LinearRow(y int, dst []float32) []float32 {
	n := m.W() * m.C
	o := y * m.Stride
	switch {
	case m.Pix8 != nil:
		dst = dst[:n]
		for i, v := range m.Pix8[o : o+n] {
			dst[i] = decode8[v]
		}
		return dst
	case m.Pix16 != nil:
		dst = dst[:n]
		for i, v := range m.Pix16[o : o+n] {
			dst[i] = decode16[v]
		}
		return dst
	}
	return m.Pix[o : o+n]
}

// Widen returns m as a float32 image: m itself when it is one, else a decoded copy.
func (m *Image) Widen() *Image {
	if !m.IsNarrow() {
		return m
	}
	out := New(m.W(), m.H(), m.C)
	out.Rect = m.Rect
	Bands(m.H(), func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			m.LinearRow(y, out.Row(y))
		}
	})
	return out
}
