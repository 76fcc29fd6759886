package pipeline

import (
	"context"
	"os"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// runAlign decodes brackets (fitted within maxEdge when > 0, for speed) and runs the
// align step on them.
func runAlign(t *testing.T, maxEdge int, scene string, names ...string) (*Job, []Frame) {
	t.Helper()
	j := &Job{Options: resolved(t, core.Options{})}
	for _, n := range names {
		f, err := os.Open(testphotos.Path(t, "brackets", scene, n))
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		img, meta, err := codec.Decode(f, st.Size(), codec.DecodeOptions{ScaleToMaxEdge: maxEdge})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		j.Frames = append(j.Frames, Frame{AssetID: n, Image: toRGB(img), Meta: meta})
	}
	before := append([]Frame(nil), j.Frames...)
	if err := alignStep(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	return j, before
}

func misalignment(t *testing.T, a, b Frame) float64 {
	t.Helper()
	m, err := quality.MeasureMisalignment(a.Image.Widen(), b.Image.Widen(), quality.MisalignOptions{Grid: 1})
	if err != nil {
		t.Fatal(err)
	}
	return m.Global.Len()
}

// A tripod set stays where it is: alignment moves no bracket by a pixel or more.
func TestAlignKeepsATripodSet(t *testing.T) {
	j, before := runAlign(t, 0, "house_interior_kim", "A.jpg", "B.jpg", "C.jpg", "D.jpg")
	for i := range j.Frames {
		if d := misalignment(t, before[i], j.Frames[i]); d >= 1 {
			t.Errorf("bracket %d moved by %.2f px (notes %v)", i, d, j.Notes())
		}
	}
}

// Handheld phone brackets, a few pixels apart, end up registered to the reference.
func TestAlignRegistersPhoneBrackets(t *testing.T) {
	j, before := runAlign(t, 1600, "library_phone", "20240401_185017.JPG", "20240401_185036.JPG", "20240401_185047.JPG")
	ref := j.ref - 1
	var worstBefore, worstAfter float64
	for i := range j.Frames {
		if i == ref {
			continue
		}
		worstBefore = max(worstBefore, misalignment(t, before[ref], before[i]))
		worstAfter = max(worstAfter, misalignment(t, j.Frames[ref], j.Frames[i]))
	}
	t.Logf("worst shift to the reference: %.2f px before, %.2f px after (notes %v)", worstBefore, worstAfter, j.Notes())
	if worstBefore < 2 || worstAfter > 0.75 {
		t.Fatalf("after alignment brackets are still %.2f px off (%.2f before)", worstAfter, worstBefore)
	}
}
