package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/grouping"
)

func names(sh *Shoot) string {
	var out []string
	for _, s := range sh.Scenes() {
		out = append(out, s.Name+":"+strings.Join(baseNames(s.Files), ","))
	}
	return strings.Join(out, " ")
}

func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = stem(f)
	}
	return out
}

func TestShootNamesScenes(t *testing.T) {
	sh := NewShoot()
	sh.Add([]grouping.Scene{
		{Files: []string{"/s/kitchen/a.jpg", "/s/kitchen/b.jpg", "/s/kitchen/c.jpg"}},
		{Files: []string{"/s/loose/x.jpg"}},
		{Files: []string{"/s/loose/y.jpg", "/s/loose/z.jpg"}},
	})
	if got := names(sh); got != "kitchen:a,b,c x:x y:y,z" {
		t.Fatalf("scenes %s", got)
	}
	// Another folder with the same name gets a distinct scene name; files already
	// there are not added twice.
	ids := sh.Add([]grouping.Scene{{Files: []string{"/t/kitchen/a.jpg"}}, {Files: []string{"/s/loose/x.jpg"}}})
	if len(ids) != 1 || !strings.HasSuffix(names(sh), "kitchen (2):a") {
		t.Fatalf("second drop: %v %s", ids, names(sh))
	}
}

func TestShootSplitMergeReorder(t *testing.T) {
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{
		{Files: []string{"/d/r1/1.jpg", "/d/r1/2.jpg", "/d/r1/3.jpg", "/d/r1/4.jpg"}},
		{Files: []string{"/d/r2/5.jpg", "/d/r2/6.jpg"}},
	})
	yes := true
	sh.SetOverrides(ids[0], core.Options{Sky: &yes})
	nid, err := sh.Split(ids[0], 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(sh); got != "r1:1,2 3:3,4 r2:5,6" {
		t.Fatalf("after split: %s", got)
	}
	if n, _ := sh.Get(nid); n.Overrides.Sky == nil || !*n.Overrides.Sky {
		t.Fatal("the split-off scene lost the scene's overrides")
	}
	for _, at := range []int{0, 2, -1} {
		if _, err := sh.Split(ids[0], at); err == nil {
			t.Errorf("split at %d accepted", at)
		}
	}
	if err := sh.MergeNext(ids[0]); err != nil {
		t.Fatal(err)
	}
	if got := names(sh); got != "r1:1,2,3,4 r2:5,6" {
		t.Fatalf("after merge: %s", got)
	}
	// Up to nine brackets make one scene; 7 + 3 is more than a scene takes.
	big := NewShoot()
	bid := big.Add([]grouping.Scene{
		{Files: []string{"/b/a/1.jpg", "/b/a/2.jpg", "/b/a/3.jpg", "/b/a/4.jpg", "/b/a/5.jpg", "/b/a/6.jpg", "/b/a/7.jpg"}},
		{Files: []string{"/b/b/8.jpg", "/b/b/9.jpg", "/b/b/10.jpg"}},
	})
	if err := big.MergeNext(bid[0]); err == nil || !strings.Contains(err.Error(), "at most 9") {
		t.Fatalf("merging into 10 brackets: %v", err)
	}
	if _, err := big.Split(bid[1], 1); err != nil {
		t.Fatal(err)
	}
	if err := big.MergeNext(bid[0]); err != nil {
		t.Fatalf("merging into 8 brackets: %v", err)
	}
	if err := sh.MergeNext(ids[1]); err == nil {
		t.Fatal("merged the last scene with nothing")
	}
	if err := sh.Move(ids[1], -1); err != nil || names(sh) != "r2:5,6 r1:1,2,3,4" {
		t.Fatalf("move up: %v %s", err, names(sh))
	}
	sh.Move(ids[1], 10) // clamps
	if names(sh) != "r1:1,2,3,4 r2:5,6" {
		t.Fatalf("move down: %s", names(sh))
	}
	// A submitted scene can no longer change.
	sh.Prepare([]int{ids[0]}, 1)
	sh.Submitted(ids[0], core.OrderSummary{OrderUUID: "o1", Status: core.OrderPending})
	if _, err := sh.Split(ids[0], 1); err == nil {
		t.Fatal("split a submitted scene")
	}
	if err := sh.SetOverrides(ids[0], core.Options{}); err == nil {
		t.Fatal("changed a submitted scene's options")
	}
	if d := sh.Drafts(); len(d) != 1 || d[0].ID != ids[1] {
		t.Fatalf("drafts %v", d)
	}
}

func TestShootUpdatesKeepOrder(t *testing.T) {
	sh := NewShoot()
	id := sh.Add([]grouping.Scene{{Files: []string{"/a/x.jpg"}}})[0]
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	sh.Prepare([]int{id}, 1)
	sh.Submitted(id, core.OrderSummary{OrderUUID: "o", Status: core.OrderPending, UpdatedAt: t0})
	if _, found, _ := sh.Update(core.OrderSummary{OrderUUID: "other"}); found {
		t.Fatal("an unknown order found a scene")
	}
	sh.Update(core.OrderSummary{OrderUUID: "o", Status: core.OrderRunning, ProgressPercent: 40, UpdatedAt: t0.Add(2 * time.Second)})
	// A poll answered before the event arrives late: it must not step back.
	sh.Update(core.OrderSummary{OrderUUID: "o", Status: core.OrderPending, UpdatedAt: t0.Add(time.Second)})
	if s, _ := sh.Get(id); s.Summary.Status != core.OrderRunning || s.Summary.ProgressPercent != 40 {
		t.Fatalf("stale summary won: %+v", s.Summary)
	}
	_, _, settled := sh.Update(core.OrderSummary{OrderUUID: "o", Status: core.OrderCompleted, ProgressPercent: 100, UpdatedAt: t0.Add(3 * time.Second)})
	if !settled {
		t.Fatal("completion did not report settling")
	}
	if _, _, again := sh.Update(core.OrderSummary{OrderUUID: "o", Status: core.OrderCancelled, UpdatedAt: t0.Add(4 * time.Second)}); again {
		t.Fatal("a settled order settled twice")
	}
	if s, _ := sh.Get(id); s.Summary.Status != core.OrderCompleted {
		t.Fatalf("settled state changed to %s", s.Summary.Status)
	}
	c := sh.Counts()
	if c.Completed != 1 || c.Total != 1 || c.Progress != 1 {
		t.Fatalf("counts %+v", c)
	}
	if n := sh.ClearSettled(); n != 1 || sh.Len() != 0 {
		t.Fatalf("cleared %d, %d left", n, sh.Len())
	}
}

func TestCountsAndETA(t *testing.T) {
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{{Files: []string{"/a/1.jpg"}}, {Files: []string{"/b/2.jpg"}}, {Files: []string{"/c/3.jpg"}}})
	sh.Prepare(ids[:2], 1)
	eta := 40
	sh.Submitted(ids[0], core.OrderSummary{OrderUUID: "a", Status: core.OrderRunning, ProgressPercent: 50, ETASeconds: &eta})
	sh.Refuse(ids[1], "could not import")
	c := sh.Counts()
	if c.Draft != 1 || c.Active != 1 || c.Failed != 1 || c.ETASeconds != 40 {
		t.Fatalf("counts %+v", c)
	}
	if got := countsLine(c); got != "3 scenes · 1 to process · 1 working · 1 failed · about 40 s left" || c.Queued != 0 {
		t.Fatalf("status line %q", got)
	}
}

func TestShootRetry(t *testing.T) {
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{{Files: []string{"/a/1.jpg"}}, {Files: []string{"/b/2.jpg"}}})
	sh.Prepare(ids, 1)
	sh.Submitted(ids[0], core.OrderSummary{OrderUUID: "a", Status: core.OrderFailed, Error: "boom"})
	sh.Submitted(ids[1], core.OrderSummary{OrderUUID: "b", Status: core.OrderCompleted})
	if err := sh.Retry(ids[1]); err == nil {
		t.Fatal("a completed scene was reset")
	}
	if err := sh.Retry(ids[0]); err != nil {
		t.Fatal(err)
	}
	s, _ := sh.Get(ids[0])
	if s.Phase != PhaseDraft || s.OrderID != "" || s.Summary.Error != "" {
		t.Fatalf("after retry: %+v", s)
	}
	if _, found, _ := sh.Update(core.OrderSummary{OrderUUID: "a", Status: core.OrderRunning}); found {
		t.Fatal("the old order still updates the scene")
	}
	if d := sh.Drafts(); len(d) != 1 || d[0].ID != ids[0] {
		t.Fatalf("drafts %v", d)
	}
}

// A shoot's record reads back as the same shoot: order, overrides, options and
// versions; a scene that was being submitted is a draft again; the engine's answer
// for an order that finished meanwhile settles its version once.
func TestShootRecordRoundTrip(t *testing.T) {
	sh := NewShoot()
	q := 70
	sh.SetOptions(core.Options{Quality: &q})
	ids := sh.Add([]grouping.Scene{{Files: []string{"/elm/1.jpg"}}, {Files: []string{"/elm/2.jpg"}}, {Files: []string{"/elm/3.jpg"}}})
	if sh.Name() != "elm" {
		t.Errorf("a new shoot is named %q, want its folder", sh.Name())
	}
	sh.SetOverrides(ids[2], core.Options{Quality: &q})
	sh.Move(ids[2], -2)
	sh.SetFile("/elm/1.jpg", FileState{AssetID: "a1", Status: core.AssetReady})
	sh.Prepare([]int{ids[0], ids[1]}, 1)
	sh.SubmittedWith(ids[0], core.OrderSummary{OrderUUID: "o1", Status: core.OrderRunning}, core.Options{Quality: &q})

	back := LoadShoot(sh.Record("owner"))
	if back.ID() != sh.ID() || back.Name() != "elm" || *back.Options().Quality != 70 {
		t.Fatalf("shoot %s %q", back.ID(), back.Name())
	}
	got := back.Scenes()
	if len(got) != 3 || got[0].ID != ids[2] || got[1].ID != ids[0] || got[2].ID != ids[1] {
		t.Fatalf("order %v", sceneNames(back))
	}
	if got[0].Phase != PhaseDraft || *got[0].Overrides.Quality != 70 {
		t.Errorf("draft %+v", got[0])
	}
	if got[2].Phase != PhaseDraft {
		t.Errorf("a scene being submitted came back as phase %d", got[2].Phase)
	}
	if got[1].Phase != PhaseSubmitted || got[1].OrderID != "o1" || len(got[1].Versions) != 1 || *got[1].Versions[0].Options.Quality != 70 {
		t.Fatalf("submitted %+v", got[1])
	}
	if st := back.File("/elm/1.jpg"); st.AssetID != "a1" {
		t.Errorf("imported photo %+v", st)
	}
	if _, found, settled := back.Attach(core.OrderSummary{OrderUUID: "o1", Status: core.OrderCompleted, OutputAssetID: "out"}); !found || !settled {
		t.Fatal("the finished order did not settle its version")
	}
	if _, _, settled := back.Attach(core.OrderSummary{OrderUUID: "o1", Status: core.OrderCompleted, OutputAssetID: "out"}); settled {
		t.Fatal("settled twice")
	}
	if next := back.Add([]grouping.Scene{{Files: []string{"/elm/4.jpg"}}}); len(next) != 1 || next[0] <= ids[2] {
		t.Errorf("a new scene reused id %v", next)
	}
}

// Processing a scene again keeps its results: a running order goes on as its
// version, the new order is the newest version, and a deleted version leaves the
// others.
func TestShootReeditKeepsVersions(t *testing.T) {
	sh := NewShoot()
	id := sh.Add([]grouping.Scene{{Files: []string{"/a/1.jpg"}}})[0]
	sh.Prepare([]int{id}, 1)
	sh.Submitted(id, core.OrderSummary{OrderUUID: "v1", Status: core.OrderRunning})
	if err := sh.Reedit(id); err != nil {
		t.Fatal(err)
	}
	if _, err := sh.Split(id, 0); err == nil {
		t.Error("a processed scene was split")
	}
	s, _ := sh.Get(id)
	if s.Phase != PhaseDraft || s.OrderID != "" || len(s.Versions) != 1 {
		t.Fatalf("after re-edit %+v", s)
	}
	// The first order finishes while the scene is a draft again.
	v, found, settled := sh.Update(core.OrderSummary{OrderUUID: "v1", Status: core.OrderCompleted, OutputAssetID: "r1"})
	if !found || !settled || v.OrderID != "v1" || v.Summary.OutputAssetID != "r1" {
		t.Fatalf("update of the earlier version: %v %v %+v", found, settled, v)
	}
	if err := sh.DeleteVersion(id, 0); err != nil {
		t.Fatal(err)
	}
	sh.Submitted(id, core.OrderSummary{OrderUUID: "v1b", Status: core.OrderCompleted})
	sh.Reedit(id)
	sh.Prepare([]int{id}, 2)
	sh.Submitted(id, core.OrderSummary{OrderUUID: "v2", Status: core.OrderRunning})
	if err := sh.DeleteVersion(id, 1); err == nil {
		t.Error("a running version was deleted")
	}
	sh.SetVersionSaved(id, "v1b", "/out/a.jpg", "")
	s, _ = sh.Get(id)
	if len(s.Versions) != 2 || s.OrderID != "v2" || s.Saved != "" || s.Versions[0].Saved != "/out/a.jpg" {
		t.Fatalf("versions %+v", s.Versions)
	}
	if at := s.AtVersion(0); at.OrderID != "v1b" || at.Saved != "/out/a.jpg" || at.Phase != PhaseSubmitted {
		t.Errorf("first version shows %+v", at)
	}
	sh.Update(core.OrderSummary{OrderUUID: "v2", Status: core.OrderFailed})
	if err := sh.Retry(id); err != nil {
		t.Fatal(err)
	}
	s, _ = sh.Get(id)
	if s.Phase != PhaseDraft || len(s.Versions) != 1 || s.Versions[0].OrderID != "v1b" {
		t.Fatalf("retry kept %+v", s.Versions)
	}
}
