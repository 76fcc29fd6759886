package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
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
