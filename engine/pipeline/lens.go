package pipeline

import (
	"context"
	"errors"
	"fmt"
	"runtime"

	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/lens"
)

// lensSteps is lens correction: distortion, chromatic aberration and vignetting from
// lensfun's calibrated profile, on every bracket before alignment. It makes one
// corrected copy at a time, in the frame's own storage.
func lensSteps() []Step {
	return []Step{{Name: StepLens, Cost: 0.03, Memory: bytesPerPixel, Run: lensStep}}
}

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
		// Collect the frame replaced last, so at most one corrected copy is held beside
		// the frames.
		runtime.GC()
		out, err := c.Apply(f.Image)
		if err != nil {
			return err
		}
		f.Image = out
		note(c.Describe() + " (" + why + ")")
		j.Progress(float64(i+1) / float64(len(j.Frames)))
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
