package pipeline

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func loadPhoto(t *testing.T, rel ...string) *Job {
	t.Helper()
	f, err := os.Open(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	img, meta, err := codec.Decode(f, st.Size(), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &Job{Image: img, Meta: meta}
}

func TestSkyStepReplacesExteriorSkyAndSkipsInteriors(t *testing.T) {
	j := loadPhoto(t, "exteriors", "houses_112_frontal.jpg")
	j.Options.Sky, j.Options.SkyStyle = true, "clear"
	before := j.Image
	if err := skyStep(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if j.Image == before || len(j.Notes()) != 1 || !strings.Contains(j.Notes()[0], "replaced") {
		t.Fatalf("exterior sky not replaced: %v", j.Notes())
	}

	in := loadPhoto(t, "interiors", "houses_109_bedroom.jpg")
	in.Options.Sky, in.Options.SkyStyle = true, "clear"
	before = in.Image
	if err := skyStep(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	if in.Image != before || len(in.Notes()) != 1 || !strings.Contains(in.Notes()[0], "no sky") {
		t.Fatalf("interior changed or unexplained: %v", in.Notes())
	}
}
