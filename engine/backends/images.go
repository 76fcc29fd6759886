package backends

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"image"
	"image/png"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// Limits on what a backend may answer: anything smaller or larger is not a result of
// the photo that was sent.
const (
	MinAnswerEdge   = 16
	MaxAnswerPixels = 100_000_000
)

// pngEncoder trades size for speed: the bytes go to a server on the same network.
var pngEncoder = png.Encoder{CompressionLevel: png.BestSpeed}

// EncodePNG writes img (linear light, 3 channels) as an 8-bit sRGB PNG, the form every
// protocol accepts.
func EncodePNG(img *imaging.Image) ([]byte, error) {
	if img == nil || img.W() == 0 || img.H() == 0 {
		return nil, errors.New("encode png: empty image")
	}
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, img.ToNRGBA()); err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return buf.Bytes(), nil
}

// EncodePNGAlpha writes img as an 8-bit sRGB PNG with an alpha channel, for
// endpoints that need one (dall-e-2's edits): pixels where clear says so are fully
// transparent (clear may be nil), the rest opaque. level is a compress/flate
// level: the bytes may have to fit a size limit.
func EncodePNGAlpha(img *imaging.Image, clear func(x, y int) bool, level int) ([]byte, error) {
	if img == nil || img.W() == 0 || img.H() == 0 {
		return nil, errors.New("encode png: empty image")
	}
	n := img.ToNRGBA()
	if clear != nil {
		for y := 0; y < img.H(); y++ {
			for x := 0; x < img.W(); x++ {
				if clear(x, y) {
					n.Pix[y*n.Stride+4*x+3] = 0
				}
			}
		}
	}
	b, err := encodeRGBA(n, level)
	if err != nil {
		return nil, fmt.Errorf("encode png: %w", err)
	}
	return b, nil
}

// MaskStyle is how a protocol expects a mask drawn.
type MaskStyle int

const (
	// MaskGray: 8-bit gray, white (255) marks what to change (IOPaint, AUTOMATIC1111,
	// ComfyUI's LoadImageMask on the red channel).
	MaskGray MaskStyle = iota
	// MaskTransparent: RGBA whose fully transparent pixels mark what to change, the
	// rest opaque (OpenAI's image edits). The edge is hard: the protocol edits only
	// where alpha is zero.
	MaskTransparent
	// MaskWhiteOnTransparent: white where to change with alpha = coverage,
	// transparent elsewhere (Porchlight's own mask assets).
	MaskWhiteOnTransparent
)

// EncodeMask writes mask (1 channel, coverage 0..1) as a PNG in style. A nil mask
// means the whole frame of w×h may change.
func EncodeMask(mask *imaging.Image, w, h int, style MaskStyle) ([]byte, error) {
	if mask != nil {
		if mask.C != 1 {
			return nil, fmt.Errorf("encode mask: %d channels, want 1", mask.C)
		}
		w, h = mask.W(), mask.H()
	}
	if w <= 0 || h <= 0 {
		return nil, errors.New("encode mask: empty mask")
	}
	cov := func(x, y int) uint8 {
		if mask == nil {
			return 255
		}
		v := mask.Row(y)[x]
		return uint8(min(max(v, 0), 1)*255 + 0.5)
	}
	var m image.Image
	switch style {
	case MaskGray:
		g := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			row := g.Pix[y*g.Stride : y*g.Stride+w]
			for x := range row {
				row[x] = cov(x, y)
			}
		}
		m = g
	case MaskTransparent:
		n := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			row := n.Pix[y*n.Stride : y*n.Stride+4*w]
			for x := 0; x < w; x++ {
				if cov(x, y) < 128 {
					row[4*x+3] = 255 // opaque black: keep
				}
			}
		}
		m = n
	case MaskWhiteOnTransparent:
		n := image.NewNRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			row := n.Pix[y*n.Stride : y*n.Stride+4*w]
			for x := 0; x < w; x++ {
				if c := cov(x, y); c > 0 {
					row[4*x], row[4*x+1], row[4*x+2], row[4*x+3] = 255, 255, 255, c
				}
			}
		}
		m = n
	default:
		return nil, fmt.Errorf("encode mask: unknown style %d", style)
	}
	if style == MaskTransparent {
		// Always with its alpha channel, even when it marks nothing.
		b, err := encodeRGBA(m.(*image.NRGBA), zlib.BestSpeed)
		if err != nil {
			return nil, fmt.Errorf("encode mask: %w", err)
		}
		return b, nil
	}
	var buf bytes.Buffer
	if err := pngEncoder.Encode(&buf, m); err != nil {
		return nil, fmt.Errorf("encode mask: %w", err)
	}
	return buf.Bytes(), nil
}

// DecodeAnswer decodes an image a backend answered (PNG, JPEG or WebP) into linear
// light with 3 channels. Bytes that are not an image, or an image of absurd size,
// are an error: they are never taken for a result.
func DecodeAnswer(b []byte) (*imaging.Image, error) {
	if len(b) == 0 {
		return nil, errors.New("the answer is empty, not an image")
	}
	r := bytes.NewReader(b)
	info, err := codec.Probe(r, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("the answer is not an image: %v (%s)", err, Snippet(b[:min(len(b), 120)]))
	}
	if info.Width < MinAnswerEdge || info.Height < MinAnswerEdge {
		return nil, fmt.Errorf("the answer is a %dx%d image, too small to be a result", info.Width, info.Height)
	}
	if int64(info.Width)*int64(info.Height) > MaxAnswerPixels {
		return nil, fmt.Errorf("the answer is a %dx%d image, larger than %d megapixels", info.Width, info.Height, MaxAnswerPixels/1_000_000)
	}
	img, _, err := codec.Decode(r, int64(len(b)), codec.DecodeOptions{MaxPixels: MaxAnswerPixels})
	if err != nil {
		return nil, fmt.Errorf("the answer could not be decoded as an image: %v", err)
	}
	return dropAlpha(img), nil
}

// dropAlpha returns the colour channels of img: models answer RGBA only when the
// input had alpha, which the photos sent never have.
func dropAlpha(img *imaging.Image) *imaging.Image {
	if img.C == 3 {
		return img
	}
	w, h, c := img.W(), img.H(), img.C
	out := imaging.New(w, h, 3)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := img.Row(y), out.Row(y)
			for x := 0; x < w; x++ {
				s := src[x*c : x*c+c]
				if c < 3 {
					dst[3*x], dst[3*x+1], dst[3*x+2] = s[0], s[0], s[0]
					continue
				}
				dst[3*x], dst[3*x+1], dst[3*x+2] = s[0], s[1], s[2]
			}
		}
	})
	return out
}
