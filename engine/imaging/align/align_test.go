package align_test

import (
	"context"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/quality"
)

func TestAlignPhoneBracketsResidual(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size phone brackets")
	}
	for _, scene := range []string{"library_phone", "building_exterior_phone"} {
		imgs := loadScene(t, scene)
		ref := align.ReferenceIndex(imgs)
		t0 := time.Now()
		out, ts, err := align.Align(context.Background(), imgs, ref, align.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: ref %d, align %v", scene, ref, time.Since(t0))
		for i := range imgs {
			before, _ := quality.MeasureMisalignment(imgs[ref], imgs[i], quality.MisalignOptions{})
			after, err := quality.MeasureMisalignment(out[ref], out[i], quality.MisalignOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("  %d: %v matches %d residual %.3f M %.4f; before max %.2f, after global (%.3f,%.3f) max %.3f",
				i, ts[i].Model, ts[i].Matches, ts[i].Residual, ts[i].M, before.Max, after.Global.DX, after.Global.DY, after.Max)
			if after.Max >= 0.5 {
				t.Errorf("%s bracket %d: residual misalignment %.3f px, want < 0.5", scene, i, after.Max)
			}
		}
	}
}

func TestAlignTripodIsIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size brackets")
	}
	imgs := loadScene(t, "office_fisheye_5dmk2")[1:4]
	ts, err := align.Estimate(context.Background(), imgs, 1, align.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, tr := range ts {
		t.Logf("%d: %v %d matches residual %.3f M %.4f", i, tr.Model, tr.Matches, tr.Residual, tr.M)
		if tr.Model != align.ModelIdentity {
			t.Errorf("bracket %d of a tripod set: %v, want identity", i, tr.Model)
		}
	}
}
