package pipeline

import (
	"context"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/catalog"
)

func TestPrivacyStepBlursFacesAndLeavesEmptyRoomsAlone(t *testing.T) {
	j := loadPhoto(t, "privacy", "faces", "2008_002506.jpg")
	j.Options.Privacy, j.Options.Threshold = true, 0.3
	j.Options.Categories = append([]string(nil), catalog.DefaultCategories...)
	before := j.Image
	if err := privacyStep(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if j.Image == before || len(j.Notes()) != 1 || !strings.Contains(j.Notes()[0], "human face") {
		t.Fatalf("faces not blurred: %v", j.Notes())
	}

	room := loadPhoto(t, "interiors", "houses_109_bedroom.jpg")
	room.Options.Privacy, room.Options.Threshold = true, 0.3
	room.Options.Categories = append([]string(nil), catalog.DefaultCategories...)
	before = room.Image
	if err := privacyStep(context.Background(), room); err != nil {
		t.Fatal(err)
	}
	if room.Image != before {
		t.Fatalf("an empty room changed: %v", room.Notes())
	}
}
