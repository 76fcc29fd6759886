package hotfolder

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
)

// The scenes of one drop go to the engine as one batch and come back matched to
// one look; a bad file of the drop fails alone and its report is written as before.
func TestDropSubmittedAsOneBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	svc := e.start(c)
	drop(t, c.Input, "bedroom.jpg", readPhoto(t, photoBedroom...))
	drop(t, c.Input, "kitchen.jpg", readPhoto(t, photoKitchen...))
	drop(t, c.Input, "dining.jpg", readPhoto(t, "brackets", "house_interior_kim", "B.jpg"))
	drop(t, c.Input, "notes.jpg", []byte("not a photo at all"))
	// Whole to the scan (it starts and ends as a JPEG), refused by ingest: a scene of
	// the drop that fails after it was formed.
	drop(t, c.Input, "broken.jpg", append(append([]byte{0xFF, 0xD8, 0xFF, 0xE0}, make([]byte, 4096)...), 0xFF, 0xD9))
	waitFor(t, 90*time.Second, "the drop to be delivered", func() bool { return e.settledCount("studio") == 5 })

	st := e.status("studio")
	if st.Done != 3 || st.Failed != 2 {
		t.Fatalf("status: %+v", st)
	}
	if errorReport(c, "broken") == "" {
		t.Fatalf("the broken photo has no report: %v", filesIn(t, c.Input))
	}
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"bedroom.jpg", "dining.jpg", "kitchen.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	if errorReport(c, "notes") == "" {
		t.Fatalf("the bad file has no report: %v", filesIn(t, c.Input))
	}
	batch := ""
	for _, name := range []string{"bedroom.jpg", "kitchen.jpg", "dining.jpg"} {
		sc := readSidecar(t, filepath.Join(c.Output, name+".json"))
		o, err := e.engine.OrderRecord(context.Background(), svc.Owner(), sc.OrderID)
		if err != nil {
			t.Fatal(err)
		}
		if o.BatchID == "" || batch != "" && o.BatchID != batch {
			t.Fatalf("%s: order %s in batch %q, want the drop's one batch %q", name, o.ID, o.BatchID, batch)
		}
		batch = o.BatchID
		if !slices.ContainsFunc(o.Notes, func(n string) bool { return strings.HasPrefix(n, "shoot consistency: ") }) {
			t.Errorf("%s was not matched to the shoot: %q", name, o.Notes)
		}
	}
	agg, err := e.engine.Batch(context.Background(), svc.Owner(), batch)
	if err != nil || len(agg.Orders) != 3 {
		t.Fatalf("the drop's batch: %+v, %v", agg, err)
	}
}

// A run that submitted a drop's batch and died before journaling it: the next run
// gathers the same scenes, submits with the same Idempotency-Key and gets the same
// batch, not a second.
func TestDropResubmissionGetsSameBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	owner, a, j := ownedScene(t, e, c, "room.jpg")
	_, b, _ := ownedScene(t, e, c, "hall.jpg")
	scenes := []*journal.Scene{a, b}
	for _, s := range scenes {
		s.Drop = "drop-1"
		f, _ := os.Open(filepath.Join(c.Input, s.Files[0].Rel))
		as, err := e.assets.Add(owner, s.Files[0].Rel, "application/octet-stream", f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, 30*time.Second, "ingest", func() bool {
			got, _ := e.assets.Get(owner, as.ID)
			return got.Status == core.AssetReady
		})
		s.Assets, s.Stage = []string{as.ID}, journal.StageUploaded
	}
	if err := j.RecordScenes(scenes); err != nil {
		t.Fatal(err)
	}
	req := engine.BatchRequest{Name: batchName(c.Name, a.Label)}
	for _, s := range scenes {
		req.Scenes = append(req.Scenes, engine.Scene{Inputs: s.Assets, Options: s.Options})
	}
	lost, err := e.engine.SubmitBatch(context.Background(), owner, req, batchKey(c.Name, scenes))
	if err != nil {
		t.Fatal(err)
	}

	e.start(c)
	waitFor(t, 60*time.Second, "the scenes", func() bool { return e.settledCount("studio") == 2 })
	orders, _ := e.engine.Orders(context.Background(), owner, 0)
	if len(orders) != 2 {
		t.Fatalf("orders after the resubmission: %+v", orders)
	}
	for i, s := range scenes {
		if sc := readSidecar(t, filepath.Join(c.Output, s.Files[0].Rel+".json")); sc.OrderID != lost.Orders[i].OrderUUID {
			t.Fatalf("%s: sidecar order %s, want %s of the lost batch", s.Files[0].Rel, sc.OrderID, lost.Orders[i].OrderUUID)
		}
	}
}
