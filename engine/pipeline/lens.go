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
// lensfun's calibrated profile, in the frame's own storage.
//
// Brackets are aligned as corrected frames, yet resampled at most once. A set of
// brackets that share one correction is corrected after the merge, on the one merged
// image, when alignment leaves every bracket as shot (a tripod set: every bracket
// within the identity tolerance of the reference, measured in corrected pixels, see
// alignStep): the same map moves every bracket alike, so brackets that coincide as
// shot coincide corrected, and correcting them and then fusing is fusing and then
// correcting, up to the fusion's blend being taken a few pixels away (the map is
// smooth) and vignetting being divided out after the blend instead of before (the
// gain is smooth too, and the merged image keeps in floating point the highlights a
// corrected 8-bit bracket would clip). That is one resample of 21 MP instead of three.
// Every other set (one input, several lenses, brackets alignment moves) is corrected
// bracket by bracket before alignment estimates and warps: 8-bit brackets together
// (their copies take 3 bytes a pixel each), others one at a time.
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
	if len(j.Frames) > 1 && len(order) == 1 && len(groups[order[0]]) == len(j.Frames) {
		k := order[0]
		note(maps[k].Describe() + " (" + whys[k] + ")")
		deferLens(j, maps[k])
		return nil
	}
	done := 0
	for _, k := range order {
		c, idx := maps[k], groups[k]
		if err := correctFrames(ctx, j, c, idx, func(n int) {
			done += n
			j.Progress(float64(done) / float64(len(j.Frames)))
		}); err != nil {
			return err
		}
		note(c.Describe() + " (" + whys[k] + ")")
	}
	runtime.GC()
	if len(j.Frames) == 1 {
		j.Image = j.Frames[0].Image
	}
	return nil
}

// correctFrames corrects frames idx of j with c, calling done with how many it
// finished. 8-bit brackets are corrected up to lensBatch at once, one pass over the
// map for all; others one at a time, the frame replaced last collected first.
func correctFrames(ctx context.Context, j *Job, c *lens.Correction, idx []int, done func(n int)) error {
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
		done(len(part))
	}
	return nil
}

func deferLens(j *Job, c *lens.Correction) { j.lensPending = c }

// pendingLens is the correction deferred for j's brackets, if any; take removes it.
func pendingLens(j *Job, take bool) *lens.Correction {
	c := j.lensPending
	if take {
		j.lensPending = nil
	}
	return c
}

func readLensInfo(assets Assets, id string) (codec.LensInfo, error) {
	b, err := assets.OpenAsset(id)
	if err != nil {
		return codec.LensInfo{}, err
	}
	defer b.Close()
	return codec.ReadLensInfo(b, b.Size())
}
