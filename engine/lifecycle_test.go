package engine_test

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/pipeline"
)

func readOutput(t *testing.T, e *env, owner, id string) (core.Asset, image.Image, string) {
	t.Helper()
	a, err := e.assets.Get(owner, id)
	if err != nil {
		t.Fatalf("output asset: %v", err)
	}
	f, _, err := e.assets.Open(id)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("output does not decode: %v", err)
	}
	return a, img, format
}

func TestOrderCompletesWithOutputAndRecipes(t *testing.T) {
	e := newEnv(t, "")
	in := e.upload(e.owner, photoPNG...)
	feed := collect(e.eng.Events(), events.Filter{Owner: e.owner})
	e.serve()

	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Format: ptr("png")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != core.OrderPending || sum.OrderUUID == "" || len(sum.Inputs) != 1 {
		t.Fatalf("submit answered %+v", sum)
	}
	done := e.wait(e.owner, sum.OrderUUID)
	if done.Status != core.OrderCompleted {
		t.Fatalf("order ended %s: %s (%s)", done.Status, done.Error, done.ErrorCode)
	}
	if done.OutputAssetID == "" || done.ProgressPercent != 100 || done.ETASeconds != nil {
		t.Fatalf("completed summary %+v", done)
	}
	if got := done.Recipes["develop"]; got != "1.3.0" || len(done.Recipes) != 1 {
		t.Errorf("recipes %v, want only develop 1.3.0", done.Recipes)
	}
	a, img, format := readOutput(t, e, e.owner, done.OutputAssetID)
	if format != "png" || a.Kind != core.AssetOutput || a.OrderID != sum.OrderUUID {
		t.Errorf("output is %s, kind %s, order %s", format, a.Kind, a.OrderID)
	}
	if b := img.Bounds(); b.Dx() != 512 || b.Dy() != 768 {
		t.Errorf("output is %v, want 512x768 (under the cap, never enlarged)", b)
	}

	// Another key sees nothing of it.
	if _, err := e.eng.Order(context.Background(), "someone-else", sum.OrderUUID); kindOf(err) != core.KindNotFound {
		t.Errorf("another key's Order: %v, want NotFound", err)
	}
	if _, err := e.eng.Cancel(context.Background(), "someone-else", sum.OrderUUID); kindOf(err) != core.KindNotFound {
		t.Errorf("another key's Cancel: %v, want NotFound", err)
	}

	// Events: pending, running..., completed; ids increasing; nothing after terminal.
	e.stop()
	evs := feed.stop()
	var statuses []core.OrderStatus
	var last uint64
	for _, ev := range evs {
		if ev.ID <= last {
			t.Fatalf("event ids not increasing: %d after %d", ev.ID, last)
		}
		last = ev.ID
		if ev.Type != core.EventOrder || ev.OrderID != sum.OrderUUID {
			continue
		}
		s := ev.Data.(core.OrderSummary)
		statuses = append(statuses, s.Status)
	}
	if len(statuses) < 3 || statuses[0] != core.OrderPending || statuses[len(statuses)-1] != core.OrderCompleted {
		t.Fatalf("order event statuses %v, want pending, running..., completed", statuses)
	}
	for _, s := range statuses[1 : len(statuses)-1] {
		if s != core.OrderRunning {
			t.Fatalf("order event statuses %v: %s in the middle", statuses, s)
		}
	}
}

func TestResolutionCapNeverEnlarges(t *testing.T) {
	e := newEnv(t, "", withPipeline(func(c *pipeline.Config) { c.MaxEdge = 300 }))
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	sum, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Quality: ptr(80)}, "")
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(e.owner, sum.OrderUUID)
	if done.Status != core.OrderCompleted {
		t.Fatalf("order ended %s: %s", done.Status, done.Error)
	}
	_, img, format := readOutput(t, e, e.owner, done.OutputAssetID)
	// 752x500 fitted within 300: 300x199.5 -> 300x199 or 300x200.
	if b := img.Bounds(); format != "jpeg" || b.Dx() != 300 || b.Dy() < 199 || b.Dy() > 200 {
		t.Fatalf("output %s %v, want jpeg 300x~200", format, b)
	}
	if len(done.Notes) == 0 {
		t.Error("the resolution cap left no note")
	}
}

func TestSameInputsSameOutputBytes(t *testing.T) {
	e := newEnv(t, "")
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	var sums []string
	for i := 0; i < 2; i++ {
		s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{Format: ptr("webp"), Quality: ptr(70)}, "")
		if err != nil {
			t.Fatal(err)
		}
		done := e.wait(e.owner, s.OrderUUID)
		if done.Status != core.OrderCompleted {
			t.Fatalf("order ended %s: %s", done.Status, done.Error)
		}
		a, err := e.assets.Get(e.owner, done.OutputAssetID)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, a.SHA256)
	}
	if sums[0] != sums[1] {
		t.Fatalf("two runs of the same order wrote different files: %s vs %s", sums[0], sums[1])
	}
}

func TestStepTimingsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	e := newEnv(t, dir)
	in := e.upload(e.owner, photoSmallJPEG...)
	e.serve()
	s, _ := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if d := e.wait(e.owner, s.OrderUUID); d.Status != core.OrderCompleted {
		t.Fatalf("order ended %s", d.Status)
	}
	measured := e.pipe.Timings().Snapshot()
	e.close()
	e = newEnv(t, dir)
	loaded := e.pipe.Timings().Snapshot()
	for _, step := range []string{pipeline.StepDecode, pipeline.StepEncode} {
		if loaded[step] <= 0 || loaded[step] != measured[step] {
			t.Fatalf("%s: loaded %v after restart, measured %v", step, loaded[step], measured[step])
		}
	}
}

// Brackets of one scene are merged when this build has the merge step; without it
// the order fails naming auto HDR, never delivering one bracket as the result.
func TestMultiInputOrder(t *testing.T) {
	e := newEnv(t, "")
	a := e.upload(e.owner, photoSmallJPEG...)
	b := e.upload(e.owner, photoSmallJPEG2...)
	e.serve()
	s, err := e.eng.Submit(context.Background(), e.owner, []string{a, b}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	done := e.wait(e.owner, s.OrderUUID)
	if !e.pipe.Has(pipeline.StepMerge) {
		if done.Status != core.OrderFailed || done.ErrorCode != pipeline.CodeFeatureUnavailable ||
			!strings.Contains(done.Error, "auto HDR") || done.OutputAssetID != "" {
			t.Fatalf("two brackets without a merge step: %+v", done)
		}
		return
	}
	if done.Status != core.OrderCompleted || done.Recipes["develop"] == "" {
		t.Fatalf("two brackets: %+v", done)
	}
	_, img, _ := readOutput(t, e, e.owner, done.OutputAssetID)
	if b := img.Bounds(); b.Dx() != 752 || b.Dy() != 500 {
		t.Fatalf("merged output %v", b)
	}
}
