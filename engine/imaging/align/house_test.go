package align_test

import (
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/quality"
)

func TestAlignAlignedSetsStayPut(t *testing.T) {
	for _, scene := range []string{"house_interior_kim", "living_room_windows", "memorial_church_debevec", "oldhouse_exterior", "room_window_e995"} {
		imgs := loadScene(t, scene)
		ref := align.ReferenceIndex(imgs)
		out, ts, err := align.Align(imgs, ref, align.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i, tr := range ts {
			m, _ := quality.MeasureMisalignment(out[ref], out[i], quality.MisalignOptions{Tile: 256})
			b, _ := quality.MeasureMisalignment(imgs[ref], imgs[i], quality.MisalignOptions{Tile: 256})
			x, y := tr.M.Apply(float64(imgs[0].W())/2, float64(imgs[0].H())/2)
			t.Logf("%s %d: %v matches %d shift at centre (%.2f, %.2f); misalignment before %.2f after %.2f", scene, i, tr.Model, tr.Matches, x-float64(imgs[0].W())/2, y-float64(imgs[0].H())/2, b.Max, m.Max)
			if m.Max > 0.5 {
				t.Errorf("%s bracket %d: misalignment %.2f px after alignment (%.2f before)", scene, i, m.Max, b.Max)
			}
		}
	}
}
