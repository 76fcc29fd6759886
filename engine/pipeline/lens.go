package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
)

// lensSteps is lens correction: distortion, chromatic aberration and vignetting from
// lensfun's calibrated profile, on every bracket before alignment, in the frame's own
// storage: 8-bit brackets are corrected together (their copies take 3 bytes a pixel
// each), others one at a time.
func lensSteps() []Step {
	return []Step{{Name: StepLens, Cost: 0.03, Memory: bytesPerPixel, Run: lensStep}}
}

// lensBatch is how many 8-bit brackets are corrected in one pass: their copies take
// 9 bytes a pixel, within the step's declared memory (a float frame's 12).
const lensBatch = 3

type lensKey struct {
	shot lens.Shot
	w, h int
}

func lensStep(ctx context.Context, j *Job) error {
	if len(j.Frames) == 0 {
		return nil
	}
	seen := map[string]bool{}
	note := func(s string) {
		if !seen[s] {
			seen[s] = true
			j.Note("lens correction: " + s)
		}
	}
	// The brackets of a scene share a lens: the map is computed once and reused.
	maps := map[lensKey]*lens.Correction{}
	var order []lensKey
	groups := map[lensKey][]int{}
	whys := map[lensKey]string{}
	for i := range j.Frames {
		if err := ctx.Err(); err != nil {
			return err
		}
		f := &j.Frames[i]
		li, err := readLensInfo(j.Assets, f.AssetID)
		if err != nil {
			note(fmt.Sprintf("inputs[%d]'s metadata could not be read (%v); left uncorrected", i, err))
			continue
		}
		ok, why := lens.Decide(lens.Origin{Raw: li.Format == codec.FormatRaw, Software: f.Meta.Software,
			CreatorTool: li.CreatorTool, LensProfile: li.LensProfile, CameraCorrected: li.CameraCorrected})
		if !ok {
			note(why)
			continue
		}
		k := lensKey{shot: lens.Shot{Make: f.Meta.Make, Model: f.Meta.Model, LensMake: li.LensMake,
			LensModel: f.Meta.LensModel, Focal: f.Meta.FocalLength, Aperture: f.Meta.FNumber},
			w: f.Image.W(), h: f.Image.H()}
		c, done := maps[k]
		if !done {
			c, err = lens.Prepare(k.shot, k.w, k.h)
			var np *lens.NoProfileError
			switch {
			case errors.Is(err, lens.ErrNoDatabase):
				note("lensfun's lens database is not installed; left uncorrected")
			case errors.As(err, &np):
				note(np.Error() + "; left uncorrected")
			case err != nil:
				return err
			}
			maps[k] = c
		}
		if c == nil {
			continue
		}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
		whys[k] = why
	}
	done := 0
	for _, k := range order {
		c, idx := maps[k], groups[k]
		// 8-bit brackets are corrected up to lensBatch at once, one pass over the map
		// for all; others one at a time, the frame replaced last collected first.
		batch := true
		for _, i := range idx {
			batch = batch && j.Frames[i].Image.Pix8 != nil
		}
		step := 1
		if batch {
			step = lensBatch
		}
		for s := 0; s < len(idx); s += step {
			if err := ctx.Err(); err != nil {
				return err
			}
			part := idx[s:min(s+step, len(idx))]
			imgs := make([]*imaging.Image, len(part))
			for n, i := range part {
				imgs[n] = j.Frames[i].Image
			}
			runtime.GC()
			outs, err := c.ApplyAll(ctx, imgs)
			if err != nil {
				return err
			}
			for n, i := range part {
				j.Frames[i].Image = outs[n]
			}
			done += len(part)
			j.Progress(float64(done) / float64(len(j.Frames)))
		}
		note(c.Describe() + " (" + whys[k] + ")")
	}
	runtime.GC()
	if len(j.Frames) == 1 {
		j.Image = j.Frames[0].Image
	}
	return nil
}

func readLensInfo(assets Assets, id string) (codec.LensInfo, error) {
	b, err := assets.OpenAsset(id)
	if err != nil {
		return codec.LensInfo{}, err
	}
	defer b.Close()
	return codec.ReadLensInfo(b, b.Size())
}
