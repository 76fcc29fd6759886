package pipeline

import (
	"image"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/engine/imaging/inpaint"
	"github.com/porchlight/porchlight/engine/membudget"
)

// The memory estimate is an upper bound of the bytes an order holds at once (live
// data plus the garbage a step makes without collecting), stage by stage, from what
// each stage allocates. The figures below were measured on real photos (see
// engine's TestOrderMemoryWithinEstimate), rounded up.
const (
	// bytesPerPixel is a decoded 3-channel float32 pixel: the working image after the
	// merge, a frame decoded as float.
	bytesPerPixel = 12
	// codesPerPixel is a bracket held as its own 8-bit sRGB codes.
	codesPerPixel = 3
	// narrowPerPixel is a bracket narrowed to 16-bit codes, and a warped bracket.
	narrowPerPixel = 6
	// jpegCoefPerPixel is libjpeg's coefficient buffer, which a progressive or
	// multi-scan JPEG fills whole before its last scan (2 bytes a sample, at most 3
	// samples a pixel); the headers read here do not say which kind a file is.
	jpegCoefPerPixel = 6
	// jpegDecodePerPixel is a JPEG decoded as float: libjpeg's output buffer (RGB or
	// CMYK bytes) beside the float frame being filled.
	jpegDecodePerPixel = jpegCoefPerPixel + 4 + bytesPerPixel
	// rotatedDecodePerPixel is a float frame and its upright copy (EXIF orientation),
	// made after libjpeg's buffers are gone.
	rotatedDecodePerPixel = max(jpegDecodePerPixel, 2*bytesPerPixel)
	// otherDecodePerPixel bounds the other decoders (PNG, TIFF, WebP, HEIC, RAW) at
	// their peak: the decoder's own image (16-bit RGBA: 8), a 16-bit copy, the float
	// frame with alpha (16) and its 3-channel or upright copy. Measured: 16-bit RGBA
	// PNG and TIFF 32 bytes a pixel, 8-bit PNG and WebP 16, with the file beside.
	otherDecodePerPixel = 36
	// alignWorkPerPixel is alignment's working set per bracket, per pixel of the
	// reduced copy it estimates motion on (measured about 20).
	alignWorkPerPixel = 32
	// fuseWorkPerPixel is exposure fusion's working set per bracket, per pixel of its
	// working size: weights, pyramids, blend and detail weights (measured 27 to 36).
	fuseWorkPerPixel = 40
	// encodePerPixel is the encoders' memory beside the image: the 8- or 16-bit copy
	// and the encoder's own buffers.
	encodePerPixel = 12
)

// defaultMemory is assumed for a step that is not registered (or declares none).
const defaultMemory = 24

// Input is what the memory estimate knows of an input before it is decoded.
type Input struct {
	Width, Height int   // upright, as the asset record has them
	Bytes         int64 // the file's size: the decoders read it whole
	// Format is the codec's name of the container (jpeg, png, ...); "" when unknown,
	// which is estimated as the costliest.
	Format string
	// Codes: an upright 8-bit sRGB JPEG, which decodes straight into its own 8-bit
	// codes when it is one of several brackets.
	Codes bool
	// Rotated: the file's EXIF orientation makes the decoder copy the frame upright;
	// assumed for a JPEG whose headers were not read.
	Rotated bool
}

// InputOf describes an input of width×height pixels and size bytes; info is its
// headers (codec.Probe) or nil when they were not read. The rule for Codes follows
// decodeInput: a bracket is decoded narrow, and the codec keeps an upright 8-bit
// sRGB JPEG as its codes.
func InputOf(width, height int, size int64, format string, info *codec.Info) Input {
	in := Input{Width: width, Height: height, Bytes: size, Format: format}
	if info != nil {
		in.Format = info.Format
	}
	if in.Format != codec.FormatJPEG {
		return in
	}
	in.Rotated = info == nil || info.Orientation >= 2
	in.Codes = info != nil && !in.Rotated && info.ColorSpace == "sRGB" && info.BitDepth == 8 && !info.HasAlpha
	return in
}

func (in Input) pixels() int64 { return int64(in.Width) * int64(in.Height) }

// frameBytes is what a decoded input holds until the merge narrows it.
func (in Input) frameBytes(brackets bool) int64 {
	if brackets && in.Codes {
		return codesPerPixel * in.pixels()
	}
	return bytesPerPixel * in.pixels()
}

// decodeBytes is the most a decode of the input holds at once, its frame and file
// included.
func (in Input) decodeBytes(brackets bool) int64 {
	px := in.pixels()
	switch {
	case in.Format != codec.FormatJPEG:
		return otherDecodePerPixel*px + in.Bytes
	case brackets && in.Codes:
		return (jpegCoefPerPixel+codesPerPixel)*px + in.Bytes
	case in.Rotated:
		return rotatedDecodePerPixel*px + in.Bytes
	default:
		return jpegDecodePerPixel*px + in.Bytes
	}
}

// narrowedBytes is a bracket after narrowing: its codes, or 16-bit codes.
func (in Input) narrowedBytes() int64 {
	if in.Codes {
		return codesPerPixel * in.pixels()
	}
	return narrowPerPixel * in.pixels()
}

// MaskArea is what admission knows of an order's magic eraser mask: its size and the
// bounds of its marked pixels, in its own pixels. The zero value, a mask not read,
// is estimated as marking the whole photo.
type MaskArea struct {
	W, H   int
	Bounds image.Rectangle
}

// On returns the marked bounds on a w×h working image, to which the mask is scaled,
// rounded outwards; unknown bounds cover all of it.
func (m MaskArea) On(w, h int) image.Rectangle {
	all := image.Rect(0, 0, w, h)
	if m.W <= 0 || m.H <= 0 || m.Bounds.Empty() {
		return all
	}
	b := m.Bounds
	r := image.Rect(b.Min.X*w/m.W, b.Min.Y*h/m.H, (b.Max.X*w+m.W-1)/m.W, (b.Max.Y*h+m.H-1)/m.H)
	return r.Intersect(all)
}

// MaskAreaOf reads mask asset id and bounds the pixels it marks, by the eraser's
// rule (inpaint.Marked).
func MaskAreaOf(assets Assets, id string) (MaskArea, error) {
	b, err := assets.OpenAsset(id)
	if err != nil {
		return MaskArea{}, err
	}
	defer b.Close()
	m, err := codec.DecodeMask(b, b.Size())
	if err != nil {
		return MaskArea{}, err
	}
	w, h := m.W(), m.H()
	area := MaskArea{W: w, H: h}
	for y := 0; y < h; y++ {
		row := m.Row(y)[:w]
		first, last := 0, w-1
		for first < w && !inpaint.Marked(row[first]) {
			first++
		}
		if first == w {
			continue
		}
		for !inpaint.Marked(row[last]) {
			last--
		}
		area.Bounds = area.Bounds.Union(image.Rect(first, y, last+1, y+1))
	}
	return area, nil
}

// EstimateMemory is EstimateInputs for inputs known only by their sizes, estimated
// as the costliest format, and a mask not read.
func (p *Pipeline) EstimateMemory(r core.Resolved, sizes []image.Point) int64 {
	ins := make([]Input, len(sizes))
	for i, s := range sizes {
		ins[i] = Input{Width: s.X, Height: s.Y}
	}
	return p.EstimateInputs(r, ins, MaskArea{})
}

// EstimateInputs returns the peak bytes an order with these settings, inputs and
// mask needs, an upper bound for admission: the largest of its stages (decode,
// align, merge, each later step over the working image, the resolution cap and the
// encode), with membudget's headroom for garbage and for what does not scale with
// the pixels.
func (p *Pipeline) EstimateInputs(r core.Resolved, ins []Input, mask MaskArea) int64 {
	if len(ins) == 0 {
		return membudget.Bound(0)
	}
	n := len(ins)
	brackets := n > 1
	var w, h int
	var px, maxFile int64
	var frames, narrowed, extraDecode, maxNarrowed int64
	for _, in := range ins {
		if in.pixels() > px {
			w, h, px = in.Width, in.Height, in.pixels()
		}
		maxFile = max(maxFile, in.Bytes)
		f := in.frameBytes(brackets)
		frames += f
		narrowed += in.narrowedBytes()
		maxNarrowed = max(maxNarrowed, in.narrowedBytes())
		extraDecode = max(extraDecode, in.decodeBytes(brackets)-f)
	}
	working := bytesPerPixel * px

	// Decode: every finished frame, and up to two decodes in flight (decodeStep).
	peak := frames + int64(min(2, n))*extraDecode
	if brackets {
		// Narrowing copies one float frame at a time, collecting before each.
		narrowing := frames + narrowPerPixel*px
		if r.Align {
			ap := int64(align.WorkPixels(w, h, align.Options{}))
			// Estimating motion on reduced copies; then warping: the originals stay
			// referenced until the step returns, beside the 16-bit warped copies.
			peak = max(peak, narrowing, narrowed+alignWorkPerPixel*int64(n)*ap,
				narrowed+int64(n-1)*narrowPerPixel*px)
			// The merge reads the reference as it was and the others warped.
			narrowed = int64(n-1)*narrowPerPixel*px + maxNarrowed
		} else {
			peak = max(peak, narrowing)
		}
		wp := int64(fuse.WorkPixels(w, h, fuse.DefaultOptions()))
		peak = max(peak, narrowed+fuseWorkPerPixel*int64(n)*wp+working)
		if r.LensCorrection {
			// A set merged as shot is corrected on the merge, once the brackets are
			// dropped: the merge and its corrected copy.
			peak = max(peak, 2*working)
		}
	}

	// The steps after the merge work on one image; each declares its own memory.
	p.mu.RLock()
	for _, name := range stepNames(r, n) {
		switch name {
		case StepDecode, StepAlign, StepMerge, StepResolutionCap, StepEncode:
			continue
		}
		mem := float64(defaultMemory)
		if s, ok := p.steps[name]; ok {
			if s.MemoryFor != nil {
				peak = max(peak, working+s.MemoryFor(w, h, mask))
				continue
			}
			mem = s.Memory
		} else if sl, _, _ := slotOf(name); sl.optional {
			continue // skipped by Plan
		}
		peak = max(peak, working+int64(mem*float64(px)))
	}
	p.mu.RUnlock()

	// The resolution cap resamples in two passes: source, intermediate and result.
	ow, oh := imaging.FitWithin(w, h, p.cfg.MaxEdge)
	out := int64(ow) * int64(oh)
	if out < px {
		tmp := max(int64(ow)*int64(h), int64(w)*int64(oh))
		peak = max(peak, working+bytesPerPixel*(tmp+out))
	}
	peak = max(peak, (bytesPerPixel+encodePerPixel)*out)
	return membudget.Bound(peak)
}
