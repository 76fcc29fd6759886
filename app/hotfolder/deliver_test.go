package hotfolder

import (
	"bytes"
	"context"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
)

func TestDeliversSceneWithSidecarAndMovesOriginal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Naming = "{index}_{name}"
	svc := e.start(c)

	data := readPhoto(t, photoBedroom...)
	drop(t, c.Input, "living.jpg", data)
	waitFor(t, 60*time.Second, "the scene to be delivered", func() bool { return e.settledCount("studio") == 1 })

	st := e.status("studio")
	if st.Done != 1 || st.Failed != 0 || st.Pending != 0 || st.Processing != 0 || st.State != StateWatching {
		t.Fatalf("status after one scene: %+v", st)
	}
	if got := filesIn(t, c.Output); !slices.Equal(got, []string{"0001_living.jpg", "0001_living.jpg.json"}) {
		t.Fatalf("output folder: %v", got)
	}
	out, err := os.ReadFile(filepath.Join(c.Output, "0001_living.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("the output is not a JPEG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1024 || b.Dy() != 768 {
		t.Fatalf("output size %v, want the input's 1024x768", b)
	}
	// The original moved to the done folder, byte for byte; the input is empty.
	if got := filesIn(t, c.Input); !slices.Equal(got, []string{"_done/living.jpg"}) {
		t.Fatalf("input folder after delivery: %v", got)
	}
	moved, _ := os.ReadFile(filepath.Join(c.Input, "_done", "living.jpg"))
	if !bytes.Equal(moved, data) {
		t.Fatal("the moved original differs from the dropped file")
	}
	sc := readSidecar(t, filepath.Join(c.Output, "0001_living.jpg.json"))
	if sc.Status != "completed" || sc.Output != "0001_living.jpg" || sc.OrderID == "" || len(sc.Inputs) != 1 ||
		sc.Inputs[0].Path != "living.jpg" || len(sc.Inputs[0].SHA256) != 64 || sc.Recipes["develop"] == "" {
		t.Fatalf("sidecar: %+v", sc)
	}
	// The order belongs to the hotfolders key, so the window lists it.
	o, err := e.engine.Order(context.Background(), svc.Owner(), sc.OrderID)
	if err != nil || o.Status != core.OrderCompleted {
		t.Fatalf("order %s of the owner key: %+v, %v", sc.OrderID, o, err)
	}
	ks, _ := e.keys.List()
	if len(ks) != 1 || ks[0].Name != OwnerKeyName || ks[0].UUID != svc.Owner() || ks[0].Scope != core.ScopeStandard {
		t.Fatalf("keys: %+v", ks)
	}
	if len(st.Recent) == 0 || st.Recent[0].Kind != "completed" || st.Recent[0].Output != "0001_living.jpg" {
		t.Fatalf("recent activity: %+v", st.Recent)
	}
}

func TestNameCollisionsGetSuffixAndNothingIsOverwritten(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Sidecar = false
	c.Originals = OriginalsDelete
	existing := []byte("a file that was here before")
	os.WriteFile(filepath.Join(c.Output, "room.jpg"), existing, 0o644)
	e.start(c)

	// Two scenes, one after the other, whose template gives the same name.
	drop(t, c.Input, "room.jpg", readPhoto(t, photoBedroom...))
	waitFor(t, 60*time.Second, "the first scene", func() bool { return e.settledCount("studio") == 1 })
	drop(t, c.Input, "room.jpg", readPhoto(t, photoKitchen...))
	waitFor(t, 60*time.Second, "the second scene", func() bool { return e.settledCount("studio") == 2 })

	if got := filesIn(t, c.Output); !slices.Equal(got, []string{"room-2.jpg", "room-3.jpg", "room.jpg"}) {
		t.Fatalf("output folder: %v", got)
	}
	if b, _ := os.ReadFile(filepath.Join(c.Output, "room.jpg")); !bytes.Equal(b, existing) {
		t.Fatal("an existing file was overwritten")
	}
	if got := filesIn(t, c.Input); len(got) != 0 {
		t.Fatalf("originals delete left %v", got)
	}
}

func TestTwoFoldersWithDifferentRecipes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	a := folderConfig(t, "web")
	q := 70
	pngFormat := "png"
	a.Options = core.Options{Quality: &q}
	b := folderConfig(t, "print")
	b.Options = core.Options{Format: &pngFormat}
	b.Naming = "{name}_print"
	e.start(a, b)

	data := readPhoto(t, photoBedroom...)
	drop(t, a.Input, "bedroom.jpg", data)
	drop(t, b.Input, "bedroom.jpg", data)
	waitFor(t, 90*time.Second, "both folders to deliver", func() bool {
		return e.settledCount("web") == 1 && e.settledCount("print") == 1
	})

	web, err := os.ReadFile(filepath.Join(a.Output, "bedroom.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jpeg.Decode(bytes.NewReader(web)); err != nil {
		t.Fatalf("web output is not a JPEG: %v", err)
	}
	print, err := os.ReadFile(filepath.Join(b.Output, "bedroom_print.png"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(print)); err != nil {
		t.Fatalf("print output is not a PNG: %v", err)
	}
	scWeb := readSidecar(t, filepath.Join(a.Output, "bedroom.jpg.json"))
	scPrint := readSidecar(t, filepath.Join(b.Output, "bedroom_print.png.json"))
	if scWeb.Options.Quality == nil || *scWeb.Options.Quality != 70 || scPrint.Options.Format == nil || *scPrint.Options.Format != "png" {
		t.Fatalf("sidecar options: web %+v, print %+v", scWeb.Options, scPrint.Options)
	}
	if scWeb.OrderID == scPrint.OrderID {
		t.Fatal("the two folders share an order")
	}
	// Each order ran with its folder's options.
	ow, _ := e.engine.OrderRecord(context.Background(), e.svc.Owner(), scWeb.OrderID)
	op, _ := e.engine.OrderRecord(context.Background(), e.svc.Owner(), scPrint.OrderID)
	if ow.Resolved.Quality != 70 || ow.Resolved.Format != "jpeg" || op.Resolved.Format != "png" {
		t.Fatalf("resolved options: web %+v, print %+v", ow.Resolved, op.Resolved)
	}
}

func TestUnreadableFileFailsIntoErrorsFolder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	e.start(c)

	// A complete-looking JPEG (it has an end marker) that is not an image.
	bogus := append([]byte("this is not really a photo"), 0xFF, 0xD9)
	drop(t, c.Input, "broken.jpg", bogus)
	waitFor(t, 30*time.Second, "the scene to fail", func() bool { return e.status("studio").Failed == 1 })

	if got := outputs(t, c.Output); len(got) != 0 {
		t.Fatalf("a failed scene wrote outputs: %v", got)
	}
	got := filesIn(t, c.Input)
	want := []string{"_errors/broken.error.json", "_errors/broken.error.txt", "_errors/broken.jpg"}
	if !slices.Equal(got, want) {
		t.Fatalf("input folder after failure: %v, want %v", got, want)
	}
	txt, _ := os.ReadFile(filepath.Join(c.Input, "_errors", "broken.error.txt"))
	if !strings.Contains(string(txt), "broken.jpg") || !strings.Contains(string(txt), "Reason:") {
		t.Fatalf("error report:\n%s", txt)
	}
	sc := readSidecar(t, filepath.Join(c.Input, "_errors", "broken.error.json"))
	// Its content is no photo format at all: the code says so.
	if sc.Status != "failed" || sc.Error == "" || sc.ErrorCode != "unsupported_format" {
		t.Fatalf("error sidecar: %+v", sc)
	}
	st := e.status("studio")
	if st.Recent[0].Kind != "failed" || st.Recent[0].Message == "" {
		t.Fatalf("recent: %+v", st.Recent)
	}
}
