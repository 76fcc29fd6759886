package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"sync"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"golang.org/x/sync/errgroup"
)

// baseSteps are the steps every order runs.
func baseSteps(cfg Config) []Step {
	return []Step{
		{Name: StepDecode, Cost: 0.08, Memory: 8, Run: decodeStep(cfg)},
		{Name: StepResolutionCap, Cost: 0.02, Memory: bytesPerPixel, Run: capStep(cfg)},
		{Name: StepEncode, Cost: 0.06, Memory: 8, Run: encodeStep(cfg)},
	}
}

// decodeStep decodes every input into a linear-light 3-channel frame: orientation
// applied and colour converted by the codec, alpha flattened over white (deliveries
// are photos; JPEG has no alpha). Brackets of one scene must share one size.
func decodeStep(cfg Config) func(ctx context.Context, j *Job) error {
	return func(ctx context.Context, j *Job) error {
		j.Frames = make([]Frame, len(j.Inputs))
		// Two brackets decode at once: a JPEG decoder runs on one core, and the
		// conversions after it are row bands that share the others.
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(min(2, runtime.GOMAXPROCS(0)))
		var mu sync.Mutex
		done := 0
		for i, id := range j.Inputs {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				// Brackets are only read as sRGB codes until the merge: an 8-bit JPEG
				// can stay as its own codes (see imaging's narrow storage).
				f, err := decodeInput(cfg, j.Assets, i, id, len(j.Inputs) > 1)
				if err != nil {
					return err
				}
				mu.Lock()
				defer mu.Unlock()
				j.Frames[i] = f
				done++
				j.Progress(float64(done) / float64(len(j.Inputs)))
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		first := j.Frames[0].Image
		for i, f := range j.Frames[1:] {
			if !imaging.SameSize(first, f.Image) {
				return Errorf(CodeMismatchedInputs,
					"the brackets of one scene must have the same size: inputs[0] is %dx%d, inputs[%d] is %dx%d",
					first.W(), first.H(), i+1, f.Image.W(), f.Image.H())
			}
		}
		// The middle bracket is the usual reference exposure; merge may choose another.
		ref := j.Frames[len(j.Frames)/2]
		j.Meta = ref.Meta
		if len(j.Frames) == 1 {
			j.Image = first
		}
		return nil
	}
}

func decodeInput(cfg Config, assets Assets, i int, id string, narrow bool) (Frame, error) {
	b, err := assets.OpenAsset(id)
	if err != nil {
		switch core.KindOf(err) {
		case core.KindNotFound, core.KindConflict:
			return Frame{}, &Error{Code: CodeInputUnavailable, Err: err,
				Reason: fmt.Sprintf("inputs[%d] (%s) is no longer available: %v", i, id, err)}
		}
		return Frame{}, fmt.Errorf("open inputs[%d] (%s): %w", i, id, err)
	}
	defer b.Close()
	img, meta, err := codec.Decode(b, b.Size(), codec.DecodeOptions{MaxPixels: cfg.MaxPixels, Narrow: narrow})
	if err != nil {
		var ce *codec.Error
		if errors.As(err, &ce) {
			return Frame{}, &Error{Code: CodeUnreadableInput, Err: err,
				Reason: fmt.Sprintf("inputs[%d] (%s) could not be decoded: %v", i, id, err)}
		}
		return Frame{}, fmt.Errorf("decode inputs[%d] (%s): %w", i, id, err)
	}
	if img.W() == 0 || img.H() == 0 {
		return Frame{}, Errorf(CodeUnreadableInput, "inputs[%d] (%s) has no pixels", i, id)
	}
	return Frame{AssetID: id, Image: toRGB(img), Meta: meta}, nil
}

// toRGB returns img with 3 channels: alpha is composited over white in linear light,
// gray is spread to RGB. A 3-channel image is returned as it is.
func toRGB(img *imaging.Image) *imaging.Image {
	if img.C == 3 {
		return img
	}
	w, h, c := img.W(), img.H(), img.C
	out := imaging.New(w, h, 3)
	imaging.Bands(h, func(_, y0, y1 int) {
		for y := y0; y < y1; y++ {
			src, dst := img.Row(y), out.Row(y)
			for x := 0; x < w; x++ {
				s, d := src[x*c:x*c+c], dst[x*3:x*3+3:x*3+3]
				switch c {
				case 1:
					d[0], d[1], d[2] = s[0], s[0], s[0]
				case 2: // gray + alpha
					a := min(max(s[1], 0), 1)
					v := s[0]*a + (1 - a)
					d[0], d[1], d[2] = v, v, v
				default:
					a := float32(1)
					if c >= 4 {
						a = min(max(s[3], 0), 1)
					}
					d[0] = s[0]*a + (1 - a)
					d[1] = s[1]*a + (1 - a)
					d[2] = s[2]*a + (1 - a)
				}
			}
		}
	})
	return out
}

// capStep fits the working image within the resolution cap (gamma-correct Lanczos in
// linear light), never enlarging.
func capStep(cfg Config) func(ctx context.Context, j *Job) error {
	return func(ctx context.Context, j *Job) error {
		if j.Image == nil {
			return Errorf(CodeInternal, "no working image before the resolution cap")
		}
		w, h := j.Image.W(), j.Image.H()
		nw, nh := imaging.FitWithin(w, h, cfg.MaxEdge)
		if nw == w && nh == h {
			return nil
		}
		out, err := imaging.ResizeCtx(ctx, j.Image, nw, nh)
		if err != nil {
			return err
		}
		j.Image = out
		j.Note(fmt.Sprintf("resolution cap: %dx%d reduced to %dx%d (longest edge %d)", w, h, nw, nh, cfg.MaxEdge))
		return nil
	}
}

// encodeStep writes the delivery file in the order's format and quality through the
// asset store, carrying the reference input's metadata (GPS dropped unless the
// config keeps it).
func encodeStep(cfg Config) func(ctx context.Context, j *Job) error {
	return func(ctx context.Context, j *Job) error {
		if j.Image == nil {
			return Errorf(CodeInternal, "no working image to encode")
		}
		meta := j.Meta
		meta.Orientation = 0 // the pixels are already upright
		opt := codec.EncodeOptions{Format: j.Options.Format, Quality: j.Options.Quality, Meta: &meta, KeepGPS: cfg.KeepGPS}
		out, err := j.Assets.CreateOutput(j.Owner, j.OrderID, j.Options.Format, func(w io.Writer) error {
			return codec.Encode(w, j.Image, opt)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return Wrap(CodeOutputFailed, err, "writing the result")
		}
		j.Output = out
		return nil
	}
}

// CheckMask decodes asset id as an erase mask, for validating an order's mask that
// ingest did not already recognise as one.
func CheckMask(assets Assets, id string) error {
	m, err := MaskAreaOf(assets, id)
	if err != nil {
		return err
	}
	if m.Bounds.Empty() {
		return errors.New("it marks nothing to erase")
	}
	return nil
}

// LoadMask decodes the order's magic eraser mask (1 channel, coverage 0..1) and
// checks that it matches the working image's size, for the magic eraser step.
func (j *Job) LoadMask() (*imaging.Image, error) {
	id := j.Options.Mask
	if id == "" {
		return nil, Errorf(CodeInvalidMask, "the order names no mask")
	}
	b, err := j.Assets.OpenAsset(id)
	if err != nil {
		return nil, &Error{Code: CodeInputUnavailable, Err: err, Reason: fmt.Sprintf("the mask (%s) is no longer available: %v", id, err)}
	}
	defer b.Close()
	m, err := codec.DecodeMask(b, b.Size())
	if err != nil {
		return nil, &Error{Code: CodeInvalidMask, Err: err, Reason: fmt.Sprintf("the mask (%s) cannot be used: %v", id, err)}
	}
	if j.Image != nil && (m.W() != j.Image.W() || m.H() != j.Image.H()) {
		w, h := j.Image.W(), j.Image.H()
		// A mask drawn on a smaller or larger copy of the photo is scaled to it; one of
		// another shape was drawn for another photo.
		if math.Abs(float64(m.W())*float64(h)/(float64(m.H())*float64(w))-1) > maskAspectTolerance {
			return nil, Errorf(CodeInvalidMask, "the mask is %dx%d but the photo is %dx%d; a mask must have the photo's size or at least its aspect ratio",
				m.W(), m.H(), w, h)
		}
		m = resizeNearest(m, w, h)
	}
	return m, nil
}

// maskAspectTolerance is how far a mask's aspect ratio may be from its photo's (1%,
// rounding of a scaled copy) for the mask to be scaled to the photo.
const maskAspectTolerance = 0.01

// resizeNearest scales a one-channel mask by nearest neighbour, so a hard mask
// stays hard.
func resizeNearest(m *imaging.Image, w, h int) *imaging.Image {
	out := imaging.New(w, h, 1)
	xs := make([]int, w)
	for x := range xs {
		xs[x] = min(m.W()-1, (2*x+1)*m.W()/(2*w))
	}
	for y := 0; y < h; y++ {
		src := m.Row(min(m.H()-1, (2*y+1)*m.H()/(2*h)))
		dst := out.Row(y)
		for x, sx := range xs {
			dst[x] = src[sx]
		}
	}
	return out
}
