package hotfolder

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/image/draw"

	"github.com/porchlight/porchlight/engine/pipeline"
)

// smallJPEG is a real photo scaled down to width w, so that many scenes run fast.
func smallJPEG(t testing.TB, data []byte, w int) []byte {
	t.Helper()
	src, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, w, b.Dy()*w/b.Dx()))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func kimSmall(t testing.TB, w int) [][]byte {
	var out [][]byte
	for _, n := range kimBrackets {
		out = append(out, smallJPEG(t, readPhoto(t, "brackets", "house_interior_kim", n), w))
	}
	return out
}

// sidecars reads every sidecar of a folder, by output name.
func sidecars(t testing.TB, dir string) map[string]Sidecar {
	out := map[string]Sidecar{}
	for _, f := range filesIn(t, dir) {
		if strings.HasSuffix(f, ".json") {
			out[strings.TrimSuffix(f, ".json")] = readSidecar(t, filepath.Join(dir, f))
		}
	}
	return out
}

// scenesByLabel reads the sidecars of delivered scenes (beside the outputs) and of
// failed ones (the errors folder), by scene label.
func scenesByLabel(t testing.TB, c Config) map[string]Sidecar {
	out := map[string]Sidecar{}
	if c.Errors == "" {
		c.Errors = filepath.Join(c.Input, DefaultErrors)
	}
	for _, dir := range []string{c.Output, c.Errors} {
		for _, f := range filesIn(t, dir) {
			if strings.HasSuffix(f, ".json") {
				sc := readSidecar(t, filepath.Join(dir, f))
				if _, dup := out[sc.Scene]; dup {
					t.Fatalf("scene %s reported twice", sc.Scene)
				}
				out[sc.Scene] = sc
			}
		}
	}
	return out
}

// wantBrackets is the status a multi-bracket scene ends in: completed with the HDR
// merge, failed as feature_unavailable in a build without it. Grouping is checked
// either way, from the scene reports.
func (e *env) wantBrackets() string {
	if e.pipe.Has(pipeline.StepMerge) {
		return "completed"
	}
	return "failed"
}

func inputPaths(sc Sidecar) []string {
	var out []string
	for _, in := range sc.Inputs {
		out = append(out, in.Path)
	}
	return out
}

// A burst of 200 files written at once becomes 50 scenes of four consecutive files,
// not 200 one-photo orders.
func TestBurstOf200FilesFormsScenes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Count = 4
	c.Naming = "{name}"
	e.start(c)
	frames := kimSmall(t, 160)
	const scenes = 50
	begin := time.Now()
	for i := 1; i <= scenes; i++ {
		for j, n := range kimBrackets {
			drop(t, c.Input, fmt.Sprintf("s%03d_%s", i, n), frames[j])
		}
	}
	waitFor(t, 3*time.Minute, "50 scenes", func() bool { return e.settledCount("studio") == scenes })
	t.Logf("200 files -> %d scenes settled in %v", scenes, time.Since(begin).Round(time.Millisecond))

	want := e.wantBrackets()
	st := e.status("studio")
	if (want == "completed" && st.Done != scenes) || (want == "failed" && st.Failed != scenes) {
		t.Fatalf("status: %+v, want every scene %s", st, want)
	}
	scs := scenesByLabel(t, c)
	if len(scs) != scenes {
		t.Fatalf("%d scene reports, want %d", len(scs), scenes)
	}
	for i := 1; i <= scenes; i++ {
		sc, ok := scs[fmt.Sprintf("s%03d_A", i)]
		var inputs []string
		for _, n := range kimBrackets {
			inputs = append(inputs, fmt.Sprintf("s%03d_%s", i, n))
		}
		if !ok || !slices.Equal(inputPaths(sc), inputs) || sc.Status != want {
			t.Fatalf("scene %d: %+v", i, sc)
		}
		if want == "failed" && sc.ErrorCode != "feature_unavailable" {
			t.Fatalf("scene %d failed for another reason: %+v", i, sc)
		}
	}
	orders, err := e.engine.Orders(context.Background(), e.svc.Owner(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(orders) != scenes {
		t.Fatalf("%d orders, want %d", len(orders), scenes)
	}
	for _, o := range orders {
		if len(o.Inputs) != 4 {
			t.Fatalf("order %s has %d inputs", o.OrderUUID, len(o.Inputs))
		}
	}
	moved := filepath.Join(c.Input, DefaultDone)
	if want == "failed" {
		moved = filepath.Join(c.Input, DefaultErrors)
	}
	if n := len(outputs(t, moved)); n != 4*scenes+scenes*boolInt(want == "failed") {
		t.Fatalf("%d files in %s, want the %d originals", n, moved, 4*scenes)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Automatic grouping sorts two real bracket sets dropped into one folder into their
// scenes.
func TestAutoGroupingOfRealBrackets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupAuto, 0
	e.start(c)
	for _, n := range kimBrackets {
		drop(t, c.Input, n, readPhoto(t, "brackets", "house_interior_kim", n))
	}
	for _, n := range oldHouse {
		drop(t, c.Input, n, readPhoto(t, "brackets", "oldhouse_exterior", n))
	}
	waitFor(t, 2*time.Minute, "two scenes", func() bool { return e.settledCount("studio") == 2 })
	scs := scenesByLabel(t, c)
	if len(scs) != 2 || !slices.Equal(inputPaths(scs["A"]), kimBrackets) || !slices.Equal(inputPaths(scs["OldHouse1"]), oldHouse) {
		t.Fatalf("scenes: %+v", scs)
	}
	for name, sc := range scs {
		if sc.Status != e.wantBrackets() {
			t.Fatalf("%s: %+v", name, sc)
		}
	}
}

// With subfolder grouping each subfolder is one scene, loose files are one scene
// each, a RAW file's JPEG twin travels with it, and a subfolder of more photos than
// a scene takes fails with that reason.
func TestSubfolderGrouping(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupSubfolder, 0
	c.Naming = "{scene}"
	e.start(c)
	frames := kimSmall(t, 200)
	for i, n := range kimBrackets {
		drop(t, c.Input, "dining/"+n, frames[i])
	}
	for i := range 10 { // a scene takes up to nine brackets
		drop(t, c.Input, fmt.Sprintf("toomany/f%d.jpg", i), frames[i%4])
	}
	for i := range 7 {
		drop(t, c.Input, fmt.Sprintf("seven/s%d.jpg", i), frames[i%4])
	}
	drop(t, c.Input, "tree/tree.CRW", readPhoto(t, "raw", "CRW.CRW"))
	drop(t, c.Input, "tree/tree.JPG", frames[0])
	drop(t, c.Input, "loose.jpg", frames[2])
	waitFor(t, 2*time.Minute, "five scenes", func() bool { return e.settledCount("studio") == 5 })

	scs := scenesByLabel(t, c)
	var dining []string
	for _, n := range kimBrackets {
		dining = append(dining, "dining/"+n)
	}
	if sc := scs["dining"]; !slices.Equal(inputPaths(sc), dining) || sc.Status != e.wantBrackets() {
		t.Fatalf("dining: %+v", sc)
	}
	if sc := scs["tree"]; !slices.Equal(inputPaths(sc), []string{"tree/tree.CRW"}) || len(sc.Extras) != 1 ||
		sc.Extras[0].Path != "tree/tree.JPG" || sc.Status != "completed" || sc.Output != "tree.jpg" {
		t.Fatalf("tree: %+v", sc)
	}
	if sc := scs["loose"]; !slices.Equal(inputPaths(sc), []string{"loose.jpg"}) || sc.Status != "completed" {
		t.Fatalf("loose: %+v", sc)
	}
	if sc := scs["seven"]; len(sc.Inputs) != 7 || sc.Status != e.wantBrackets() {
		t.Fatalf("seven brackets are one scene: %+v", sc)
	}
	if sc := scs["toomany"]; sc.ErrorCode != "too_many_inputs" || !strings.Contains(sc.Error, "10 photos") || sc.OrderID != "" {
		t.Fatalf("toomany: %+v", sc)
	}
	in := filesIn(t, c.Input)
	for _, want := range []string{"_done/tree/tree.CRW", "_done/tree/tree.JPG", "_errors/toomany/f9.jpg", "_done/loose.jpg"} {
		if !slices.Contains(in, want) {
			t.Fatalf("input folder lacks %s: %v", want, in)
		}
	}
	for _, f := range in {
		if !strings.HasPrefix(f, "_done/") && !strings.HasPrefix(f, "_errors/") {
			t.Fatalf("%s left in the input", f)
		}
	}
}
