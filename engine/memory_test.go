package engine_test

import (
	"bytes"
	"context"
	"image"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/membudget"
	"github.com/porchlight/porchlight/engine/pipeline"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var photo21MP = [][]string{ // 5616x3744 camera JPEGs, three brackets of one scene
	{"brackets", "office_fisheye_5dmk2", "IMG_6959.JPG"},
	{"brackets", "office_fisheye_5dmk2", "IMG_6961.JPG"},
	{"brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"},
}

// photoAsset describes a test photo as its asset record will (upright size, bytes,
// format) with its headers, before it is uploaded.
func photoAsset(t testing.TB, rel []string) (core.Asset, *codec.Info) {
	t.Helper()
	f, err := os.Open(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	info, err := codec.Probe(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	return core.Asset{Width: info.Width, Height: info.Height, Size: st.Size(), Format: info.Format}, &info
}

// estimateFor is the estimate admission will charge an order on these photos, for
// sizing a budget before the engine exists. p must have the steps the engine's
// pipeline will have.
func estimateFor(t testing.TB, p *pipeline.Pipeline, opts core.Options, photos ...[]string) int64 {
	t.Helper()
	return estimateWithMask(t, p, opts, pipeline.MaskArea{}, photos...)
}

// estimateWithMask is estimateFor for a magic eraser order whose mask marks mask.
func estimateWithMask(t testing.TB, p *pipeline.Pipeline, opts core.Options, mask pipeline.MaskArea, photos ...[]string) int64 {
	t.Helper()
	res, err := catalog.Resolve(opts, false)
	if err != nil {
		t.Fatal(err)
	}
	ins := make([]pipeline.Input, len(photos))
	for i, rel := range photos {
		a, info := photoAsset(t, rel)
		ins[i] = pipeline.InputOf(a.Width, a.Height, a.Size, a.Format, info)
	}
	return p.EstimateInputs(res, ins, mask)
}

// waitBudget blocks until the budget's state satisfies ok, woken by its changes.
func waitBudget(t testing.TB, b *membudget.Budget, what string, ok func(membudget.Stats) bool) membudget.Stats {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := b.Await(ctx, ok)
	if err != nil {
		t.Fatalf("budget never %s: %+v", what, s)
	}
	return s
}

// An order whose estimate exceeds the whole budget fails at once with
// resolution_too_large and never starts; the order behind it still runs.
func TestOrderOverBudgetFailsWithoutRunning(t *testing.T) {
	g := newGate()
	probe := pipeline.New(pipeline.Config{})
	probe.Register(g.step(pipeline.StepSky, true))
	opts := core.Options{Sky: ptr(true)}
	small := estimateFor(t, probe, opts, photoSmallJPEG)
	big := estimateFor(t, probe, opts, photoBig)
	budget := 2 * small
	if big <= budget {
		t.Fatalf("the big photo's estimate %d fits a budget of %d", big, budget)
	}
	e := newEnv(t, "", withEngine(func(c *engine.Config) { c.MemoryBudget = budget }))
	e.pipe.Register(g.step(pipeline.StepSky, true))
	inBig := e.upload(e.owner, photoBig...)
	inSmall := e.upload(e.owner, photoSmallJPEG...)
	if est, err := e.eng.MemoryEstimate(context.Background(), e.owner, []string{inBig}, opts); err != nil || est != big {
		t.Fatalf("engine estimate %d, %v; the test computed %d", est, err, big)
	}
	e.serve()
	a, err := e.eng.Submit(context.Background(), e.owner, []string{inBig}, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.eng.Submit(context.Background(), e.owner, []string{inSmall}, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	if id := g.waitEntered(t); id != b.OrderUUID {
		t.Fatalf("order %s reached the pipeline; only the small one %s may", id, b.OrderUUID)
	}
	got := e.wait(e.owner, a.OrderUUID)
	if got.Status != core.OrderFailed || got.ErrorCode != core.CodeResolutionTooLarge {
		t.Fatalf("over-budget order ended %s (%s): %s", got.Status, got.ErrorCode, got.Error)
	}
	for _, want := range []string{membudget.MB(big), membudget.MB(budget), "engine.memory_mb", "4032x2268"} {
		if !strings.Contains(got.Error, want) {
			t.Errorf("reason %q does not mention %q", got.Error, want)
		}
	}
	g.open()
	if s := e.wait(e.owner, b.OrderUUID); s.Status != core.OrderCompleted {
		t.Fatalf("the order behind ended %s: %s", s.Status, s.Error)
	}
	waitBudget(t, e.eng.Memory(), "balanced", func(s membudget.Stats) bool { return s.Used == 0 && s.Waiting == 0 })
}

// An order and an export that together exceed the budget do not run at once: the
// export waits, pending, while the order holds its share, and runs after.
func TestOrderAndExportShareTheBudget(t *testing.T) {
	g := newGate()
	probe := pipeline.New(pipeline.Config{})
	probe.Register(g.step(pipeline.StepSky, true))
	opts := core.Options{Sky: ptr(true)}
	exp := core.ExportOptions{Format: "webp", Quality: 80}
	orderEst := estimateFor(t, probe, opts, photoSmallJPEG)
	src, info := photoAsset(t, photoSmallJPEG)
	exportEst := assets.ExportMemory(src, info, exp)
	budget := orderEst + exportEst - 1 // each fits alone, not both
	e := newEnv(t, "", withEngine(func(c *engine.Config) { c.MemoryBudget = budget }))
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	mem := e.eng.Memory()
	e.serve()

	o, err := e.eng.Submit(context.Background(), e.owner, []string{in}, opts, "")
	if err != nil {
		t.Fatal(err)
	}
	g.waitEntered(t) // the order runs and holds its estimate
	if s := mem.Stats(); s.Used != orderEst {
		t.Fatalf("running order holds %d bytes, estimated %d", s.Used, orderEst)
	}
	x, _, err := e.assets.Export(e.owner, in, exp)
	if err != nil {
		t.Fatal(err)
	}
	waitBudget(t, mem, "saw the export wait", func(s membudget.Stats) bool { return s.Waiting == 1 })
	if a, _ := e.assets.Get(e.owner, x.ID); a.Status != core.AssetPending {
		t.Fatalf("export is %s while the order holds the memory it needs", a.Status)
	}
	g.open()
	if s := e.wait(e.owner, o.OrderUUID); s.Status != core.OrderCompleted {
		t.Fatalf("order ended %s: %s", s.Status, s.Error)
	}
	if a := e.waitSettled(e.owner, x.ID); a.Status != core.AssetReady {
		t.Fatalf("export ended %s: %s %s", a.Status, a.Code, a.Reason)
	}
	waitBudget(t, mem, "balanced", func(s membudget.Stats) bool { return s.Used == 0 && s.Waiting == 0 })
}

// A waiting order that is cancelled, or whose engine stops, gives its place in the
// budget back: nothing stays charged and nothing deadlocks.
func TestCancelledWaitingOrderLeavesBudgetBalanced(t *testing.T) {
	g := newGate()
	probe := pipeline.New(pipeline.Config{})
	probe.Register(g.step(pipeline.StepSky, true))
	opts := core.Options{Sky: ptr(true)}
	est := estimateFor(t, probe, opts, photoSmallJPEG)
	e := newEnv(t, "", withWorkers(2), withEngine(func(c *engine.Config) { c.MemoryBudget = est }))
	e.pipe.Register(g.step(pipeline.StepSky, true))
	in := e.upload(e.owner, photoSmallJPEG...)
	mem := e.eng.Memory()
	e.serve()
	submit := func() string {
		s, err := e.eng.Submit(context.Background(), e.owner, []string{in}, opts, "")
		if err != nil {
			t.Fatal(err)
		}
		return s.OrderUUID
	}
	running := submit()
	g.waitEntered(t)
	waiting := submit()
	e.waitFor(e.owner, waiting, func(s core.OrderSummary) bool { return s.ProgressStage == engine.StageWaitingMemory }, "waiting for memory")
	waitBudget(t, mem, "saw the order wait", func(s membudget.Stats) bool { return s.Waiting == 1 })
	if _, err := e.eng.Cancel(context.Background(), e.owner, waiting); err != nil {
		t.Fatal(err)
	}
	waitBudget(t, mem, "dropped the cancelled claim", func(s membudget.Stats) bool { return s.Waiting == 0 && s.Used == est })

	// Stopping the engine while an order waits drops its claim, and the running order
	// goes back to the queue with its bytes returned.
	third := submit()
	waitBudget(t, mem, "saw the third order wait", func(s membudget.Stats) bool { return s.Waiting == 1 })
	e.stop()
	if s := mem.Stats(); s.Used != 0 || s.Waiting != 0 {
		t.Fatalf("budget after the engine stopped: %+v", s)
	}
	g.open()
	e.serve()
	for _, id := range []string{running, third} {
		if s := e.wait(e.owner, id); s.Status != core.OrderCompleted {
			t.Fatalf("order ended %s: %s", s.Status, s.Error)
		}
	}
	if s := e.wait(e.owner, waiting); s.Status != core.OrderCancelled {
		t.Fatalf("cancelled order ended %s", s.Status)
	}
	waitBudget(t, mem, "balanced", func(s membudget.Stats) bool { return s.Used == 0 && s.Waiting == 0 })
}

// With engine.memory_mb 1024, an order on an image declaring 10900x10900 pixels
// (under the 120 MP ingest limit) fails with resolution_too_large before it decodes
// anything.
func TestHugeImageOrderFailsWithinBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a 119 MP image")
	}
	const side = 10900
	e := newEnv(t, "", withEngine(func(c *engine.Config) { c.MemoryBudget = 1024 << 20 }))
	var buf bytes.Buffer
	func() {
		img := imaging.New(side, side, 1) // solid grey: cheap to encode and to store
		for i := range img.Pix {
			img.Pix[i] = 0.4
		}
		if err := codec.Encode(&buf, img, codec.EncodeOptions{Format: "jpeg", Quality: 80}); err != nil {
			t.Fatal(err)
		}
	}()
	runtime.GC()
	a, err := e.assets.Add(e.owner, "huge.jpg", "image/jpeg", &buf)
	if err != nil {
		t.Fatal(err)
	}
	in := e.waitAsset(e.owner, a.ID)
	est, err := e.eng.MemoryEstimate(context.Background(), e.owner, []string{in}, core.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.serve()
	o, err := e.eng.Submit(context.Background(), e.owner, []string{in}, core.Options{}, "")
	if err != nil {
		t.Fatal(err)
	}
	s := e.wait(e.owner, o.OrderUUID)
	if s.Status != core.OrderFailed || s.ErrorCode != core.CodeResolutionTooLarge {
		t.Fatalf("order on %dx%d with a 1024 MB budget ended %s (%s): %s", side, side, s.Status, s.ErrorCode, s.Error)
	}
	t.Logf("estimate %s; %s", membudget.MB(est), s.Error)
}

// The estimate is an upper bound of what a real order allocates: each order runs
// alone in a budget of exactly its estimate, with the runtime's memory limit set as
// the app sets it, and its peak heap growth (sampled every 0.2 ms) stays within it.
func TestOrderMemoryWithinEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 21 MP orders")
	}
	phone12MP := [][]string{{"brackets", "handheld_indoor_phone", "exp2.jpg"}} // 3024x4032
	cases := []struct {
		name   string
		opts   core.Options
		photos [][]string
		hole   image.Rectangle // the magic eraser's mask on a 3024x4032 photo
	}{
		{"21MP 3 brackets", core.Options{}, photo21MP, image.Rectangle{}},
		{"21MP single, perspective and tone", core.Options{Perspective: ptr(true), Tonecraft: ptr(true)}, photo21MP[:1], image.Rectangle{}},
		{"PNG brackets, perspective and tone", core.Options{Perspective: ptr(true), Tonecraft: ptr(true)}, [][]string{
			{"brackets", "living_room_windows", "DSC_0080.png"},
			{"brackets", "living_room_windows", "DSC_0082.png"},
			{"brackets", "living_room_windows", "DSC_0084.png"},
		}, image.Rectangle{}},
		// The eraser's memory follows its mask: a small one is charged a fraction of
		// what one over most of the photo is.
		{"12MP magic eraser, 3% mask", core.Options{GenEdit: ptr("magic_eraser")}, phone12MP, image.Rect(1200, 1800, 1800, 2400)},
		{"12MP magic eraser, 72% mask", core.Options{GenEdit: ptr("magic_eraser")}, phone12MP, image.Rect(200, 300, 2800, 3700)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var mask pipeline.MaskArea
			if !c.hole.Empty() {
				mask = pipeline.MaskArea{W: 3024, H: 4032, Bounds: c.hole}
				c.opts.Mask = ptr("00000000-0000-4000-8000-000000000000") // resolved with a mask; the real one comes below
			}
			est := estimateWithMask(t, pipeline.New(pipeline.Config{}), c.opts, mask, c.photos...)
			e := newEnv(t, "", withWorkers(1), withEngine(func(cfg *engine.Config) {
				cfg.MemoryBudget = est
				cfg.LimitHeap = true
			}))
			ins := make([]string, len(c.photos))
			for i, p := range c.photos {
				ins[i] = e.upload(e.owner, p...)
			}
			if !c.hole.Empty() {
				c.opts.Mask = ptr(e.uploadMask(3024, 4032, c.hole))
			}
			if got, err := e.eng.MemoryEstimate(context.Background(), e.owner, ins, c.opts); err != nil || got != est {
				t.Fatalf("engine estimate %d, %v; the test computed %d", got, err, est)
			}
			e.serve()
			heap, rss := peakGrowth(func() {
				o, err := e.eng.Submit(context.Background(), e.owner, ins, c.opts, "")
				if err != nil {
					t.Fatal(err)
				}
				if s := e.wait(e.owner, o.OrderUUID); s.Status != core.OrderCompleted {
					t.Fatalf("order ended %s: %s", s.Status, s.Error)
				}
			})
			t.Logf("estimate %s, peak heap growth %s (%.0f%%), resident growth %s",
				membudget.MB(est), membudget.MB(heap), 100*float64(heap)/float64(est), membudget.MB(rss))
			if heap > est {
				t.Fatalf("peak heap growth %d bytes exceeds the estimate %d", heap, est)
			}
		})
	}
}

// peakGrowth runs fn and returns the most the Go heap's objects (live and not yet
// collected) and the resident set grew over their level before it.
func peakGrowth(fn func()) (heap, rss int64) {
	defer func() { heap, rss = max(heap, 0), max(rss, 0) }()
	debug.FreeOSMemory() // what earlier tests left is not this order's
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	baseHeap, baseRSS := int64(s[0].Value.Uint64()), residentBytes()
	var peakHeap, peakRSS atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(200 * time.Microsecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			peakHeap.Store(max(peakHeap.Load(), int64(s[0].Value.Uint64())-baseHeap))
			peakRSS.Store(max(peakRSS.Load(), residentBytes()-baseRSS))
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	defer func() {
		close(stop)
		<-done
		heap, rss = peakHeap.Load(), peakRSS.Load()
	}()
	fn()
	return 0, 0
}

// residentBytes is the process's resident set (0 where /proc is missing).
func residentBytes() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.ParseInt(f[1], 10, 64)
	return n * int64(os.Getpagesize())
}
