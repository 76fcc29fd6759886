package engine_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// cancelOrderBound is how soon after a cancel through the API a running order must
// have let go of its worker and its memory. The figure that counts is the logged
// one; the bound is generous for a loaded machine.
const cancelOrderBound = 5 * time.Second

// cancelWhileInside submits one order, waits until its progress shows it inside
// stage (past its first report), cancels it through the API and returns how
// long the engine took to release the order's memory: the worker has returned from
// the pipeline by then, so the order has really ended, not just been marked.
func cancelWhileInside(t *testing.T, e *env, stage string, inputs []string, opts core.Options) time.Duration {
	t.Helper()
	sub, _ := e.eng.Events().Subscribe(events.Filter{Owner: e.owner}, 0)
	defer sub.Close()
	sum, err := e.eng.Submit(t.Context(), e.owner, inputs, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	first := -1.0
	inside := false
	timeout := time.After(5 * time.Minute)
	for !inside {
		select {
		case ev, ok := <-sub.C():
			if !ok {
				t.Fatal("event subscription dropped")
			}
			s, isOrder := ev.Data.(core.OrderSummary)
			if !isOrder || ev.OrderID != sum.OrderUUID {
				continue
			}
			if s.Status.Terminal() {
				t.Fatalf("order ended (%s %s) before it reported progress %s", s.Status, s.ErrorCode, stage)
			}
			if s.ProgressStage != stage {
				continue
			}
			if first < 0 {
				first = s.ProgressPercent
			} else if s.ProgressPercent > first {
				inside = true
			}
		case <-timeout:
			t.Fatalf("order never reported progress while %s", stage)
		}
	}
	cancelled := time.Now()
	got, err := e.eng.Cancel(t.Context(), e.owner, sum.OrderUUID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != core.OrderCancelled {
		t.Fatalf("cancel answered %s, want cancelled", got.Status)
	}
	waitBudget(t, e.eng.Memory(), "released after the cancel", func(s membudget.Stats) bool { return s.Used == 0 })
	ended := time.Since(cancelled)
	t.Logf("%s: the order let go of its worker and memory %v after the cancel", stage, ended.Round(time.Millisecond))
	if ended > cancelOrderBound {
		t.Fatalf("the order ran on for %v after the cancel, want within %v", ended, cancelOrderBound)
	}
	if s, _ := e.eng.Order(context.Background(), e.owner, sum.OrderUUID); s.Status != core.OrderCancelled || s.OutputAssetID != "" {
		t.Fatalf("after the cancel the order is %s with output %q", s.Status, s.OutputAssetID)
	}
	return ended
}

// A cancel through the API ends a running merge of three 21 MP brackets while the
// fusion runs, not when it is done.
func TestCancelEndsRunning21MPMerge(t *testing.T) {
	if testing.Short() {
		t.Skip("three 21 MP brackets")
	}
	e := newEnv(t, "", withWorkers(1), withPipeline(func(c *pipeline.Config) { c.ReportEvery = time.Millisecond }))
	e.serve()
	defer e.close()
	var ins []string
	for _, n := range []string{"IMG_6961.JPG", "IMG_6963.JPG", "IMG_6965.JPG"} {
		ins = append(ins, e.upload(e.owner, "brackets", "office_fisheye_5dmk2", n))
	}
	cancelWhileInside(t, e, "merging brackets", ins, core.Options{Format: ptr("png")})
}

// A cancel through the API ends a running magic-eraser fill of a 12 MP photo.
func TestCancelEndsRunning12MPErase(t *testing.T) {
	if testing.Short() {
		t.Skip("a 12 MP photo")
	}
	e := newEnv(t, "", withWorkers(1), withPipeline(func(c *pipeline.Config) { c.ReportEvery = time.Millisecond }))
	e.serve()
	defer e.close()
	in := e.upload(e.owner, "brackets", "handheld_indoor_phone", "exp2.jpg") // 3024x4032
	mask := e.uploadMask(3024, 4032, image.Rect(1000, 1400, 1900, 2500))     // 8% of the photo
	cancelWhileInside(t, e, "erasing", []string{in},
		core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(mask), Format: ptr("png")})
}

// uploadMask stores a w×h mask, white inside hole, and waits until it is ready.
func (e *env) uploadMask(w, h int, hole image.Rectangle) string {
	e.t.Helper()
	m := image.NewGray(image.Rect(0, 0, w, h))
	for y := hole.Min.Y; y < hole.Max.Y; y++ {
		for x := hole.Min.X; x < hole.Max.X; x++ {
			m.Pix[y*m.Stride+x] = 255
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		e.t.Fatal(err)
	}
	a, err := e.assets.Add(e.owner, "mask.png", "image/png", &buf)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.waitAsset(e.owner, a.ID)
}
