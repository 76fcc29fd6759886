package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

// A photo with no vertical structure is left as it is, with a note, not a failure.
func TestPerspectiveLeavesStructurelessPhotoWithNote(t *testing.T) {
	img := imaging.New(400, 300, 3)
	for i := range img.Pix {
		img.Pix[i] = 0.4
	}
	j := &Job{Image: img}
	j.Options.Perspective = true
	j.Options.PerspectiveStrength = 1
	if err := perspectiveStep(context.Background(), j); err != nil {
		t.Fatalf("a flat photo failed the order: %v", err)
	}
	if j.Image != img {
		t.Fatal("a flat photo was warped")
	}
	if n := j.Notes(); len(n) != 1 || !strings.Contains(n[0], "perspective") {
		t.Fatalf("notes %v", n)
	}
}

// A shot from the foot of a building (the camera tilted up 28 degrees) is straightened
// only part of the way, keeping the frame, and the notes say how far and why.
func TestPerspectiveLimitsAnExtremeCorrectionWithNote(t *testing.T) {
	img := imagingtest.LoadPhoto(t, "brackets", "oldhouse_exterior", "OldHouse2.jpg")
	j := &Job{Image: img}
	j.Options.Perspective = true
	j.Options.PerspectiveStrength = 1
	if err := perspectiveStep(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if j.Image == img || j.Image.W() != img.W() || j.Image.H() != img.H() {
		t.Fatalf("not corrected at the source size: %dx%d", j.Image.W(), j.Image.H())
	}
	n := j.Notes()
	if len(n) != 1 || !strings.Contains(n[0], "partly straightened") || !strings.Contains(n[0], "of the frame kept") {
		t.Fatalf("notes %q", n)
	}
	t.Log(n[0])
}
