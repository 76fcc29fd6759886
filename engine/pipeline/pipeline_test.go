package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// fileAssets serves real photo files as inputs and keeps outputs in memory, one per
// order like the asset store.
type fileAssets struct {
	paths map[string]string
	mu    sync.Mutex
	out   map[string][]byte
}

type fileBlob struct {
	*os.File
	size int64
}

func (b fileBlob) Size() int64 { return b.size }

func (f *fileAssets) OpenAsset(id string) (Blob, error) {
	p, ok := f.paths[id]
	if !ok {
		return nil, core.NotFound("asset %s not found", id)
	}
	fh, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	st, err := fh.Stat()
	if err != nil {
		fh.Close()
		return nil, err
	}
	return fileBlob{fh, st.Size()}, nil
}

func (f *fileAssets) CreateOutput(owner, orderID, format string, write func(io.Writer) error) (core.Asset, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.out[orderID]; ok {
		return core.Asset{ID: "out-" + orderID, Owner: owner, Kind: core.AssetOutput, Format: format}, nil
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return core.Asset{}, err
	}
	if f.out == nil {
		f.out = map[string][]byte{}
	}
	f.out[orderID] = buf.Bytes()
	return core.Asset{ID: "out-" + orderID, Owner: owner, Kind: core.AssetOutput, Format: format}, nil
}

func photos(t testing.TB, rel ...[]string) *fileAssets {
	t.Helper()
	fa := &fileAssets{paths: map[string]string{}}
	for i, r := range rel {
		fa.paths[fmt.Sprint("in", i)] = testphotos.Path(t, r...)
	}
	return fa
}

var (
	kimA     = []string{"brackets", "house_interior_kim", "A.jpg"}                 // 752x500
	memorial = []string{"brackets", "memorial_church_debevec", "memorial0066.png"} // 512x768
	library  = []string{"brackets", "library_phone", "20240401_185036.JPG"}        // 4032x2268
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func resolved(t testing.TB, o core.Options) core.Resolved {
	t.Helper()
	r, err := catalog.Resolve(o, false)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func ptr[T any](v T) *T { return &v }

func names(steps []Step) []string {
	var out []string
	for _, s := range steps {
		out = append(out, s.Name)
	}
	return out
}

func noop(name string) Step {
	return Step{Name: name, Run: func(ctx context.Context, j *Job) error {
		if j.Image == nil && len(j.Frames) > 0 {
			j.Image = j.Frames[0].Image
		}
		return nil
	}}
}

// A correction this build has no step for is skipped, not refused, and so not
// recorded: the order is delivered as it would be without it.
func TestOptionalStepsAbsentAreSkipped(t *testing.T) {
	p := newBase(Config{Logger: quiet()})
	for _, n := range []string{StepAlign, StepMerge} {
		p.Register(noop(n))
	}
	r := resolved(t, core.Options{ColorCorrection: ptr(true), LensCorrection: ptr(true)})
	steps, err := p.Plan(r, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(steps), " "); got != "decode align merge resolution_cap encode" {
		t.Fatalf("plan %q", got)
	}
	p.Register(noop(StepLens))
	steps, _ = p.Plan(r, 3)
	if got := strings.Join(names(steps), " "); got != "decode lens_correction align merge resolution_cap encode" {
		t.Fatalf("plan with lens %q", got)
	}
}

func TestPlanFollowsPipelineOrder(t *testing.T) {
	p := New(Config{Logger: quiet()})
	for _, s := range slots {
		if !p.Has(s.name) {
			p.Register(noop(s.name))
		}
	}
	all := resolved(t, core.Options{Perspective: ptr(true), Tonecraft: ptr(true), Sky: ptr(true),
		Privacy: ptr(true), GenEdit: ptr("indoor_staging")})
	steps, err := p.Plan(all, 3)
	if err != nil {
		t.Fatal(err)
	}
	want := "decode lens_correction align merge color_correction perspective tone sky indoor_staging privacy resolution_cap encode"
	if got := strings.Join(names(steps), " "); got != want {
		t.Fatalf("plan %q, want %q", got, want)
	}
	eraser := resolved(t, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr("0b7c6a1e-8f33-4a52-9d1e-2f6b7c8d9e0a"), Align: ptr(false)})
	steps, _ = p.Plan(eraser, 1)
	if got := strings.Join(names(steps), " "); got != "decode magic_eraser resolution_cap encode" {
		t.Fatalf("magic eraser plan %q", got)
	}
	steps, _ = p.Plan(resolved(t, core.Options{Align: ptr(false)}), 2)
	if got := strings.Join(names(steps), " "); got != "decode merge resolution_cap encode" {
		t.Fatalf("unaligned merge plan %q", got)
	}
	base, _ := p.Plan(resolved(t, core.Options{}), 1)
	if got := strings.Join(names(base), " "); got != "decode resolution_cap encode" {
		t.Fatalf("base plan %q", got)
	}
	if err := p.Register(Step{Name: "frobnicate", Run: noop("x").Run}); err == nil {
		t.Fatal("registered an unknown step")
	}
}

// The recipes of the steps an order runs are the ones the catalog records for it.
func TestStepRecipesAgreeWithCatalog(t *testing.T) {
	eraser := core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr("0b7c6a1e-8f33-4a52-9d1e-2f6b7c8d9e0a")}
	cases := []struct {
		opts   core.Options
		inputs int
	}{
		{core.Options{}, 1}, {core.Options{}, 3}, {core.Options{Sky: ptr(true), Privacy: ptr(true)}, 1},
		{core.Options{Perspective: ptr(true), Tonecraft: ptr(true)}, 2}, {eraser, 1},
		{core.Options{GenEdit: ptr("indoor_staging")}, 1}, {core.Options{GenEdit: ptr("outdoor_staging")}, 1},
		{core.Options{GenEdit: ptr("mess_cleaner"), Sky: ptr(true)}, 1}, {core.Options{GenEdit: ptr("declutter_local")}, 5},
	}
	for _, c := range cases {
		r := resolved(t, c.opts)
		got := RecipesOf(stepNames(r, c.inputs))
		want := catalog.RecipesFor(r, c.inputs)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%+v with %d inputs: steps give %v, catalog %v", c.opts, c.inputs, got, want)
		}
	}
}

func TestUnavailableFeatureNamesIt(t *testing.T) {
	p := newBase(Config{Logger: quiet()}) // no feature steps registered
	cases := []struct {
		opts   core.Options
		inputs int
		msg    string
	}{
		{core.Options{Sky: ptr(true)}, 1, "sky replacement is not available in this build"},
		{core.Options{Privacy: ptr(true)}, 1, "privacy blur is not available in this build"},
		{core.Options{}, 3, "auto HDR (bracket alignment) is not available in this build"},
		{core.Options{Align: ptr(false)}, 2, "auto HDR (bracket merge) is not available in this build"},
		{core.Options{GenEdit: ptr("indoor_staging")}, 1, "indoor staging is not available: no model backend is configured for it. " + backends.ConfigureHint("indoor_staging")},
		{core.Options{GenEdit: ptr("declutter_local")}, 1, "declutter is not available: no model backend is configured for it. " + backends.ConfigureHint("declutter")},
	}
	for _, c := range cases {
		_, err := p.Plan(resolved(t, c.opts), c.inputs)
		if err == nil || err.Error() != c.msg || CodeOf(err) != CodeFeatureUnavailable || !errors.Is(err, ErrUnavailable) {
			t.Errorf("%+v: %v (code %s), want %q", c.opts, err, CodeOf(err), c.msg)
		}
		// Run fails the same way before touching any input.
		ins := []string{"in0", "in1", "in2"}[:c.inputs]
		_, err = p.Run(context.Background(), Request{OrderID: "o", Inputs: ins, Options: resolved(t, c.opts), Assets: &fileAssets{}}, nil)
		if err == nil || err.Error() != c.msg {
			t.Errorf("Run: %v", err)
		}
	}
	if p.FeatureAvailable(catalog.FeatureIndoorStaging) || p.FeatureAvailable("nope") {
		t.Error("a feature without steps reported available")
	}
	p.Register(noop(StepSky))
	if !p.FeatureAvailable(catalog.FeatureSkyReplacement) {
		t.Error("sky registered but not available")
	}
}

func TestRunBasePipelineOnRealPhotos(t *testing.T) {
	p := New(Config{Logger: quiet()})
	fa := photos(t, memorial)
	res, err := p.Run(context.Background(), Request{OrderID: "o1", Owner: "k", Inputs: []string{"in0"},
		Options: resolved(t, core.Options{Format: ptr("png")}), Sizes: []image.Point{{512, 768}}, Assets: fa}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Steps, " ") != "decode resolution_cap encode" || res.Output.ID != "out-o1" {
		t.Fatalf("result %+v", res)
	}
	data := fa.out["o1"]
	img, _, err := codec.Decode(bytes.NewReader(data), int64(len(data)), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if img.W() != 512 || img.H() != 768 {
		t.Fatalf("output %dx%d", img.W(), img.H())
	}
	// Round trip through PNG keeps the picture (8-bit quantisation only).
	src, _ := os.Open(testphotos.Path(t, memorial...))
	defer src.Close()
	st, _ := src.Stat()
	orig, _, err := codec.Decode(src, st.Size(), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var maxd float32
	for i, v := range orig.Pix {
		d := imaging.LinearToSRGB(v) - imaging.LinearToSRGB(img.Pix[i])
		maxd = max(maxd, d, -d)
	}
	if maxd > 1.0/255+1e-4 {
		t.Fatalf("PNG delivery changed pixels by up to %.4f", maxd)
	}
}

func TestDecodeRejectsUnreadableAndMismatchedInputs(t *testing.T) {
	p := New(Config{Logger: quiet()})
	p.Register(noop(StepAlign))
	p.Register(noop(StepMerge))
	broken := t.TempDir() + "/broken.jpg"
	good, _ := os.ReadFile(testphotos.Path(t, kimA...))
	os.WriteFile(broken, good[:len(good)/10], 0o600)
	fa := photos(t, kimA, memorial)
	fa.paths["broken"] = broken

	_, err := p.Run(context.Background(), Request{OrderID: "o", Inputs: []string{"in0", "broken"},
		Options: resolved(t, core.Options{}), Assets: fa}, nil)
	if CodeOf(err) != CodeUnreadableInput || !strings.Contains(err.Error(), "inputs[1]") {
		t.Fatalf("truncated JPEG: %v (code %s)", err, CodeOf(err))
	}
	_, err = p.Run(context.Background(), Request{OrderID: "o", Inputs: []string{"in0", "in1"},
		Options: resolved(t, core.Options{}), Assets: fa}, nil)
	if CodeOf(err) != CodeMismatchedInputs || !strings.Contains(err.Error(), "752x500") {
		t.Fatalf("brackets of two sizes: %v (code %s)", err, CodeOf(err))
	}
	_, err = p.Run(context.Background(), Request{OrderID: "o", Inputs: []string{"gone"},
		Options: resolved(t, core.Options{}), Assets: fa}, nil)
	if CodeOf(err) != CodeInputUnavailable {
		t.Fatalf("missing input: %v (code %s)", err, CodeOf(err))
	}
}

func TestPanicsBecomeInternalErrors(t *testing.T) {
	p := New(Config{Logger: quiet()})
	p.Register(Step{Name: StepSky, Run: func(ctx context.Context, j *Job) error {
		imaging.Bands(j.Image.H(), func(_, y0, _ int) {
			if y0 > 0 {
				panic("index out of range in a band")
			}
		})
		return nil
	}})
	p.Register(Step{Name: StepTone, Run: func(ctx context.Context, j *Job) error { return errors.New("curve has no points") }})
	req := Request{OrderID: "o", Inputs: []string{"in0"}, Options: resolved(t, core.Options{Sky: ptr(true)}), Assets: photos(t, kimA)}
	_, err := p.Run(context.Background(), req, nil)
	if CodeOf(err) != CodeInternal || !strings.Contains(err.Error(), "sky replacement") {
		t.Fatalf("panic in a band: %v (code %s)", err, CodeOf(err))
	}
	req.Options = resolved(t, core.Options{Tonecraft: ptr(true)})
	_, err = p.Run(context.Background(), req, nil)
	if CodeOf(err) != CodeStepFailed || err.Error() != "tonecraft: curve has no points" {
		t.Fatalf("plain step error: %v (code %s)", err, CodeOf(err))
	}
}

func TestCancelledContextStopsBetweenSteps(t *testing.T) {
	p := New(Config{Logger: quiet()})
	ctx, cancel := context.WithCancel(context.Background())
	p.Register(Step{Name: StepSky, Run: func(_ context.Context, j *Job) error {
		cancel() // the order is cancelled while this step runs
		return nil
	}})
	fa := photos(t, kimA)
	_, err := p.Run(ctx, Request{OrderID: "o", Inputs: []string{"in0"}, Options: resolved(t, core.Options{Sky: ptr(true)}), Assets: fa}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if len(fa.out) != 0 {
		t.Fatal("a cancelled order reached the encode step")
	}
}

// Progress weights come from measured step times: after one run the slow step
// dominates the percentage, and the ETA matches what the run took.
func TestProgressFollowsMeasuredStepTimes(t *testing.T) {
	p := New(Config{Logger: quiet(), ReportEvery: time.Millisecond})
	const slow = 300 * time.Millisecond
	p.Register(Step{Name: StepSky, Cost: 0.001, Run: func(ctx context.Context, j *Job) error {
		for i := 1; i <= 10; i++ {
			time.Sleep(slow / 10)
			j.Progress(float64(i) / 10)
		}
		return nil
	}})
	req := Request{OrderID: "o", Inputs: []string{"in0"}, Options: resolved(t, core.Options{Sky: ptr(true)}),
		Sizes: []image.Point{{752, 500}}, Assets: photos(t, kimA)}
	type rep struct {
		Progress
		at time.Time
	}
	run := func() ([]rep, time.Duration) {
		var reps []rep
		start := time.Now()
		req.OrderID = fmt.Sprint("o", time.Now().UnixNano())
		if _, err := p.Run(context.Background(), req, func(pr Progress) { reps = append(reps, rep{pr, time.Now()}) }); err != nil {
			t.Fatal(err)
		}
		return reps, time.Since(start)
	}
	first, _ := run()
	for i := 1; i < len(first); i++ {
		if first[i].Percent < first[i-1].Percent-1e-9 && first[i].Step == first[i-1].Step {
			t.Fatalf("progress went back within %s: %.1f -> %.1f", first[i].Step, first[i-1].Percent, first[i].Percent)
		}
	}
	if last := first[len(first)-1]; last.Percent != 100 || last.ETA != 0 {
		t.Fatalf("final report %+v", last.Progress)
	}
	snap := p.Timings().Snapshot()
	for _, s := range []string{StepDecode, StepSky, StepResolutionCap, StepEncode} {
		if snap[s] <= 0 {
			t.Fatalf("no measurement for %s: %v", s, snap)
		}
	}

	second, took := run()
	atStart := func(step string) rep {
		for _, r := range second {
			if r.Step == step {
				return r
			}
		}
		t.Fatalf("no report for %s", step)
		return rep{}
	}
	sky, capStart := atStart(StepSky), atStart(StepResolutionCap)
	skyShare := capStart.Percent - sky.Percent
	if skyShare < 50 {
		t.Fatalf("the measured slow step got %.1f%% of the progress, want most of it (sky starts at %.1f, cap at %.1f)",
			skyShare, sky.Percent, capStart.Percent)
	}
	eta0 := second[0].ETA
	if eta0 < took/3 || eta0 > took*3 {
		t.Fatalf("initial ETA %v for a run that took %v", eta0, took)
	}
}

func TestToRGBFlattensAlphaOverWhite(t *testing.T) {
	m := imaging.New(2, 1, 4)
	copy(m.Pix, []float32{0.2, 0.4, 0.6, 1, 0, 0, 0, 0})
	out := toRGB(m)
	want := []float32{0.2, 0.4, 0.6, 1, 1, 1}
	for i, v := range want {
		if d := out.Pix[i] - v; d > 1e-6 || d < -1e-6 {
			t.Fatalf("toRGB = %v, want %v", out.Pix, want)
		}
	}
	g := imaging.New(1, 1, 1)
	g.Pix[0] = 0.3
	if out := toRGB(g); out.C != 3 || out.Pix[2] != 0.3 {
		t.Fatalf("gray toRGB = %+v", out)
	}
}

func TestEstimateMemoryGrowsWithInputsAndSteps(t *testing.T) {
	p := New(Config{Logger: quiet()})
	one := p.EstimateMemory(resolved(t, core.Options{}), []image.Point{{4000, 3000}})
	if one < 4000*3000*12 || one > 4000*3000*48 {
		t.Fatalf("one 12MP input: %d bytes", one)
	}
	five := p.EstimateMemory(resolved(t, core.Options{}), []image.Point{{4000, 3000}, {4000, 3000}, {4000, 3000}, {4000, 3000}, {4000, 3000}})
	if five < 5*4000*3000*12 {
		t.Fatalf("five 12MP brackets: %d bytes, below the decoded frames alone", five)
	}
	p.Register(Step{Name: StepSky, Memory: 100, Run: noop(StepSky).Run})
	sky := p.EstimateMemory(resolved(t, core.Options{Sky: ptr(true)}), []image.Point{{4000, 3000}})
	if sky < one+4000*3000*80 {
		t.Fatalf("a step needing 100 B/px raised the estimate only to %d (base %d)", sky, one)
	}
}

// BenchmarkBasePipeline9MP runs decode, resolution cap and JPEG delivery on a 9 MP
// phone photo.
func BenchmarkBasePipeline9MP(b *testing.B) {
	p := New(Config{Logger: quiet()})
	fa := photos(b, library)
	r := resolved(b, core.Options{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fa.out = nil
		if _, err := p.Run(context.Background(), Request{OrderID: "o", Inputs: []string{"in0"}, Options: r, Assets: fa}, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func writeMask(t *testing.T, w, h int) string {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := h / 4; y < h/2; y++ {
		for x := w / 4; x < w/2; x++ {
			m.Pix[y*m.Stride+x*4+0], m.Pix[y*m.Stride+x*4+1], m.Pix[y*m.Stride+x*4+2], m.Pix[y*m.Stride+x*4+3] = 255, 255, 255, 255
		}
	}
	p := fmt.Sprintf("%s/mask_%dx%d.png", t.TempDir(), w, h)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, m); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadMask(t *testing.T) {
	fa := photos(t, kimA)
	fa.paths["mask"] = writeMask(t, 752, 500)
	fa.paths["small-mask"] = writeMask(t, 100, 50)
	fa.paths["photo"] = fa.paths["in0"]
	p := New(Config{Logger: quiet()})
	var got *imaging.Image
	var errs []error
	p.Register(Step{Name: StepMagicEraser, Run: func(ctx context.Context, j *Job) error {
		m, err := j.LoadMask()
		got = m
		errs = append(errs, err)
		return err
	}})
	run := func(mask string) error {
		r := resolved(t, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr("0b7c6a1e-8f33-4a52-9d1e-2f6b7c8d9e0a")})
		r.Mask = mask
		_, err := p.Run(context.Background(), Request{OrderID: "o" + mask, Inputs: []string{"in0"}, Options: r, Assets: fa}, nil)
		return err
	}
	if err := run("mask"); err != nil {
		t.Fatal(err)
	}
	if got.C != 1 || got.W() != 752 || got.At(752*3/8, 500*3/8, 0) < 0.99 || got.At(10, 10, 0) != 0 {
		t.Fatalf("mask decoded as %dx%d/%d, inside %.2f outside %.2f", got.W(), got.H(), got.C, got.At(282, 187, 0), got.At(10, 10, 0))
	}
	for mask, code := range map[string]string{"small-mask": CodeInvalidMask, "photo": CodeInvalidMask, "gone": CodeInputUnavailable} {
		if err := run(mask); CodeOf(err) != code {
			t.Errorf("mask %s: %v (code %s), want %s", mask, err, CodeOf(err), code)
		}
	}
}
