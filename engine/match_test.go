package engine_test

import (
	"cmp"
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/color/colortest"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// shootScenes are the test interiors of one made-up listing: single photos of
// several houses and two bracket sets, all small enough for the default suite.
var shootScenes = [][][]string{
	{{"interiors", "houses_109_bedroom.jpg"}},
	{{"interiors", "houses_111_bedroom.jpg"}},
	{{"interiors", "houses_156_bedroom.jpg"}},
	{{"interiors", "houses_158_bedroom.jpg"}},
	{{"interiors", "houses_162_bedroom.jpg"}},
	{{"interiors", "houses_162_kitchen.jpg"}},
	{{"interiors", "houses_185_kitchen.jpg"}},
	{{"interiors", "houses_218_kitchen.jpg"}},
	{{"brackets", "house_interior_kim", "A.jpg"}, {"brackets", "house_interior_kim", "B.jpg"}, {"brackets", "house_interior_kim", "C.jpg"}, {"brackets", "house_interior_kim", "D.jpg"}},
	{{"brackets", "living_room_windows", "DSC_0080.png"}, {"brackets", "living_room_windows", "DSC_0084.png"}, {"brackets", "living_room_windows", "DSC_0088.png"}},
}

func (e *env) uploadScenes(scenes [][][]string) []engine.Scene {
	e.t.Helper()
	out := make([]engine.Scene, len(scenes))
	for i, sc := range scenes {
		for _, p := range sc {
			out[i].Inputs = append(out[i].Inputs, e.upload(e.owner, p...))
		}
	}
	return out
}

// output decodes a completed order's delivery (linear light).
func (e *env) output(s core.OrderSummary) *imaging.Image {
	e.t.Helper()
	f, a, err := e.assets.Open(s.OutputAssetID)
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	img, _, err := codec.Decode(f, a.Size, codec.DecodeOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return img
}

// neutralCast is the chroma of the mean colour (a*, b*) in img of the neutral
// surfaces colortest.NeutralChroma picks in ref: the cast a white balance leaves on
// them. NeutralChroma's own mean of each pixel's chroma also counts the pale
// colours of the surfaces themselves (cream walls, pale wood), which no white
// balance changes; it is logged beside.
func neutralCast(ref, img *imaging.Image) float64 {
	type px struct {
		x, y int
		l    float64
	}
	var cand []px
	for y := 0; y < ref.H(); y += 2 {
		r := ref.Row(y)
		for x := 0; x < ref.W(); x += 2 {
			p := r[x*ref.C : x*ref.C+3]
			if max(p[0], p[1], p[2]) >= 0.98 {
				continue
			}
			if l := colortest.LabOf(float64(p[0]), float64(p[1]), float64(p[2])); l.Chroma() < 25 && l.L > 40 {
				cand = append(cand, px{x, y, l.L})
			}
		}
	}
	slices.SortStableFunc(cand, func(p, q px) int { return cmp.Compare(q.l, p.l) })
	cand = cand[:max(1, len(cand)/10)]
	var a, b float64
	for _, c := range cand {
		p := img.Row(c.y)[c.x*img.C : c.x*img.C+3]
		l := colortest.LabOf(float64(p[0]), float64(p[1]), float64(p[2]))
		a += l.A
		b += l.B
	}
	n := float64(len(cand))
	return math.Hypot(a/n, b/n)
}

// midL is the median L* of the unclipped pixels above near black: the mid-tone
// exposure as a viewer compares two rooms.
func midL(img *imaging.Image) float64 {
	var ls []float64
	for y := 0; y < img.H(); y += 2 {
		r := img.Row(y)
		for x := 0; x < img.W(); x += 2 {
			p := r[x*img.C : x*img.C+3]
			if max(p[0], p[1], p[2]) >= 0.98 {
				continue
			}
			if l := colortest.LabOf(float64(p[0]), float64(p[1]), float64(p[2])).L; l > 5 {
				ls = append(ls, l)
			}
		}
	}
	slices.Sort(ls)
	return ls[len(ls)/2]
}

func spread(v []float64) (sd, rng float64) {
	var m float64
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	for _, x := range v {
		sd += (x - m) * (x - m)
	}
	return math.Sqrt(sd / float64(len(v))), slices.Max(v) - slices.Min(v)
}

// TestShootConsistencyHalvesSpread runs one shoot of real interiors twice through
// the engine, without and with shoot consistency, and compares how much the scenes
// differ in the chroma of their neutral surfaces and in mid-tone exposure.
func TestShootConsistencyHalvesSpread(t *testing.T) {
	e := newEnv(t, "", withWorkers(2))
	scenes := e.uploadScenes(shootScenes)
	e.serve()
	run := func(on bool) core.BatchAggregate {
		agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{
			Name: "shoot", Defaults: core.Options{ShootConsistency: ptr(on)}, Scenes: scenes}, "")
		if err != nil {
			t.Fatal(err)
		}
		fin := e.waitBatch(e.owner, agg.BatchID)
		if fin.Completed != len(scenes) {
			t.Fatalf("shoot_consistency %v: %d of %d scenes completed: %+v", on, fin.Completed, len(scenes), fin)
		}
		return fin
	}
	off, on := run(false), run(true)

	var castOff, castOn, chrOff, chrOn, lOff, lOn []float64
	for i := range scenes {
		a, b := off.Orders[i], on.Orders[i]
		if a.SceneIndex == nil || *a.SceneIndex != i || b.SceneIndex == nil || *b.SceneIndex != i {
			t.Fatalf("scene order at %d: %v, %v", i, a.SceneIndex, b.SceneIndex)
		}
		for _, n := range a.Notes {
			if strings.HasPrefix(n, "shoot consistency") {
				t.Errorf("scene %d matched with shoot_consistency false: %q", i, n)
			}
		}
		if !slices.ContainsFunc(b.Notes, func(n string) bool { return strings.HasPrefix(n, "shoot consistency: ") }) {
			t.Errorf("scene %d has no shoot consistency note: %q", i, b.Notes)
		}
		ia, ib := e.output(a), e.output(b)
		if !imaging.SameSize(ia, ib) {
			t.Fatalf("scene %d: outputs of different sizes", i)
		}
		// The same surfaces in both: those the unmatched delivery shows as neutral.
		castOff = append(castOff, neutralCast(ia, ia))
		castOn = append(castOn, neutralCast(ia, ib))
		chrOff = append(chrOff, colortest.NeutralChroma(ia, ia, 2))
		chrOn = append(chrOn, colortest.NeutralChroma(ia, ib, 2))
		lOff = append(lOff, midL(ia))
		lOn = append(lOn, midL(ib))
		t.Logf("scene %d: neutral cast %.2f -> %.2f (mean pixel chroma %.2f -> %.2f), mid-tone L* %.1f -> %.1f; %q",
			i, castOff[i], castOn[i], chrOff[i], chrOn[i], lOff[i], lOn[i], b.Notes)
	}
	kSDOff, kRngOff := spread(castOff)
	kSDOn, kRngOn := spread(castOn)
	cSDOff, cRngOff := spread(chrOff)
	cSDOn, cRngOn := spread(chrOn)
	lSDOff, lRngOff := spread(lOff)
	lSDOn, lRngOn := spread(lOn)
	t.Logf("neutral-surface cast chroma across %d scenes: sd %.2f -> %.2f, range %.2f -> %.2f", len(scenes), kSDOff, kSDOn, kRngOff, kRngOn)
	t.Logf("neutral-surface mean pixel chroma (colortest.NeutralChroma): sd %.2f -> %.2f, range %.2f -> %.2f", cSDOff, cSDOn, cRngOff, cRngOn)
	t.Logf("mid-tone L* across %d scenes: sd %.2f -> %.2f, range %.2f -> %.2f", len(scenes), lSDOff, lSDOn, lRngOff, lRngOn)
	if kSDOn > kSDOff/2 {
		t.Errorf("neutral-surface cast spread %.2f -> %.2f, want at least halved", kSDOff, kSDOn)
	}
	if lSDOn > lSDOff/2 {
		t.Errorf("mid-tone L* spread %.2f -> %.2f, want at least halved", lSDOff, lSDOn)
	}
}

// TestShootConsistencyBadSceneLeftOut: a scene whose photo cannot be decoded fails
// alone; its siblings complete and are matched without it.
func TestShootConsistencyBadSceneLeftOut(t *testing.T) {
	e := newEnv(t, "")
	scenes := e.uploadScenes(shootScenes[:3])
	bad := e.upload(e.owner, photoPNG...)
	a, err := e.assets.Get(e.owner, bad)
	if err != nil {
		t.Fatal(err)
	}
	corruptBlob(t, e.dir, a.SHA256)
	scenes = slices.Insert(scenes, 1, engine.Scene{Inputs: []string{bad}})
	e.serve()
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: scenes}, "")
	if err != nil {
		t.Fatal(err)
	}
	fin := e.waitBatch(e.owner, agg.BatchID)
	if fin.Completed != 3 || fin.Failed != 1 {
		t.Fatalf("batch counters %+v", fin)
	}
	if s := fin.Orders[1]; s.Status != core.OrderFailed || s.ErrorCode != pipeline.CodeUnreadableInput {
		t.Fatalf("the damaged scene: %+v", s)
	}
	for _, s := range fin.Orders {
		if s.Status != core.OrderCompleted {
			continue
		}
		if !slices.ContainsFunc(s.Notes, func(n string) bool {
			return strings.HasPrefix(n, "shoot consistency: ") && strings.Contains(n, "(3 scenes)") ||
				n == "shoot consistency: already matches the shoot's look"
		}) {
			t.Errorf("scene %s not matched to the 3 good scenes: %q", s.OrderUUID, s.Notes)
		}
	}
}

// TestShootConsistencyCancelledSceneLeftOut: a scene cancelled before the look is
// taken is left out of it and holds up nobody.
func TestShootConsistencyCancelledSceneLeftOut(t *testing.T) {
	e := newEnv(t, "", withWorkers(1))
	scenes := e.uploadScenes(shootScenes[:3])
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: scenes}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eng.Cancel(context.Background(), e.owner, agg.Orders[2].OrderUUID); err != nil {
		t.Fatal(err)
	}
	e.serve()
	fin := e.waitBatch(e.owner, agg.BatchID)
	if fin.Completed != 2 || fin.Failed != 1 || fin.Orders[2].Status != core.OrderCancelled {
		t.Fatalf("batch counters %+v", fin)
	}
	for _, s := range fin.Orders[:2] {
		if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasSuffix(n, "(2 scenes)") }) {
			t.Errorf("scene %s not matched to the 2 scenes left: %q", s.OrderUUID, s.Notes)
		}
	}
}

// TestShootConsistencyOneWorker: a batch larger than the workers completes; no scene
// waits for a sibling's run.
func TestShootConsistencyOneWorker(t *testing.T) {
	e := newEnv(t, "", withWorkers(1))
	in := e.upload(e.owner, photoSmallJPEG...)
	in2 := e.upload(e.owner, photoSmallJPEG2...)
	var scenes []engine.Scene
	for i := range 5 {
		scenes = append(scenes, engine.Scene{Inputs: []string{[]string{in, in2}[i%2]}})
	}
	e.serve()
	agg, err := e.eng.SubmitBatch(context.Background(), e.owner, engine.BatchRequest{Scenes: scenes}, "")
	if err != nil {
		t.Fatal(err)
	}
	fin := e.waitBatch(e.owner, agg.BatchID)
	if fin.Completed != len(scenes) {
		t.Fatalf("batch counters %+v", fin)
	}
	for _, s := range fin.Orders {
		if !slices.ContainsFunc(s.Notes, func(n string) bool { return strings.HasPrefix(n, "shoot consistency: ") }) {
			t.Errorf("scene %s has no shoot consistency note: %q", s.OrderUUID, s.Notes)
		}
	}
}

// TestSingleOrderNotMatched: an order outside a batch never runs the step.
func TestSingleOrderNotMatched(t *testing.T) {
	e := newEnv(t, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{ShootConsistency: ptr(true)}, "")
	if err != nil {
		t.Fatal(err)
	}
	s := e.wait(e.owner, sum.OrderUUID)
	if s.Status != core.OrderCompleted {
		t.Fatalf("order ended %s: %s", s.Status, s.Error)
	}
	for _, n := range s.Notes {
		if strings.Contains(n, "shoot consistency") {
			t.Fatalf("a single order was matched: %q", n)
		}
	}
}
