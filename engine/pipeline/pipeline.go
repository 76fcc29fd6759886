package pipeline

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Blob is an opened asset.
type Blob interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Assets is what the pipeline needs of the asset store: reading inputs and writing
// the one output of an order.
type Assets interface {
	// OpenAsset opens a ready asset's bytes.
	OpenAsset(id string) (Blob, error)
	// CreateOutput stores the output of orderID, written by write; it is idempotent
	// per order, so a restarted order never creates a second output.
	CreateOutput(owner, orderID, format string, write func(io.Writer) error) (core.Asset, error)
}

// Defaults of Config.
const (
	DefaultMaxEdge = 8192
)

// Config tunes the pipeline. The zero value means every default.
type Config struct {
	MaxEdge   int   // resolution cap: longest edge of the output in pixels (never enlarges)
	MaxPixels int64 // decode refuses inputs with more pixels (0: codec's default)
	KeepGPS   bool  // outputs keep the source's GPS position (dropped by default)
	Logger    *slog.Logger
	// Timings is the cost model; nil starts an empty one.
	Timings *Timings
	// ReportEvery is the least gap between two progress reports within a step
	// (default 100ms); step boundaries are always reported.
	ReportEvery time.Duration
	// PreviewDir, when set, keeps every order's working image as it stands before the
	// sliders, reduced to 2048 px, as PreviewDir/<order id>.pbase for the window's
	// slider preview (see LoadPreviewBase).
	PreviewDir string
}

// Pipeline holds the registered steps and the cost model. It is safe for concurrent
// use by many orders.
type Pipeline struct {
	cfg     Config
	timings *Timings
	mu      sync.RWMutex
	steps   map[string]Step
	shoots  *shootMemo // batches' looks for shoot consistency
}

// New returns a pipeline with the base steps and every feature step this build
// implements in-process. Feature steps that need configuration (model backends) are
// added with Register.
func New(cfg Config) *Pipeline {
	p := newBase(cfg)
	for _, s := range builtinFeatureSteps() {
		p.mustRegister(s)
	}
	return p
}

// newBase returns a pipeline with the base steps only.
func newBase(cfg Config) *Pipeline {
	if cfg.MaxEdge <= 0 {
		cfg.MaxEdge = DefaultMaxEdge
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.ReportEvery <= 0 {
		cfg.ReportEvery = 100 * time.Millisecond
	}
	t := cfg.Timings
	if t == nil {
		t = NewTimings(0)
	}
	p := &Pipeline{cfg: cfg, timings: t, steps: map[string]Step{}, shoots: newShootMemo()}
	for _, s := range baseSteps(cfg) {
		p.mustRegister(s)
	}
	return p
}

func (p *Pipeline) mustRegister(s Step) {
	if err := p.Register(s); err != nil {
		panic(err)
	}
}

// Register adds or replaces the step for s.Name, which must be one of the Step
// constants.
func (p *Pipeline) Register(s Step) error {
	sl, _, ok := slotOf(s.Name)
	if !ok {
		return fmt.Errorf("pipeline: unknown step %q", s.Name)
	}
	if s.Run == nil {
		return fmt.Errorf("pipeline: step %q has no Run", s.Name)
	}
	if s.Stage == "" {
		s.Stage = sl.stage
	}
	if s.Cost <= 0 {
		s.Cost = defaultCost
	}
	if s.Memory < 0 {
		s.Memory = 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps[s.Name] = s
	return nil
}

// Has reports whether a step is registered.
func (p *Pipeline) Has(name string) bool {
	p.mu.RLock()
	defer p.mu.RUnlock()
	_, ok := p.steps[name]
	return ok
}

// Step returns the registered step name, so a caller can wrap it.
func (p *Pipeline) Step(name string) (Step, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	s, ok := p.steps[name]
	return s, ok
}

// Timings returns the cost model.
func (p *Pipeline) Timings() *Timings { return p.timings }

// FeatureAvailable reports whether every step of a catalog feature is registered,
// for the catalog's `available` field.
func (p *Pipeline) FeatureAvailable(featureKey string) bool {
	need := map[string][]string{
		catalog.FeatureEnhancer:       {StepPerspective, StepTone},
		catalog.FeatureAutoHDR:        {StepAlign, StepMerge},
		catalog.FeatureSkyReplacement: {StepSky},
		catalog.FeaturePrivacyBlur:    {StepPrivacy},
		catalog.FeatureIndoorStaging:  {StepIndoorStaging},
		catalog.FeatureOutdoorStaging: {StepOutdoorStaging},
		catalog.FeatureMessCleaner:    {StepMessCleaner},
		catalog.FeatureDeclutter:      {StepDeclutter},
		catalog.FeatureMagicEraser:    {StepMagicEraser},
	}[featureKey]
	if need == nil {
		return false
	}
	for _, n := range need {
		if !p.Has(n) {
			return false
		}
	}
	return true
}

// stepNames lists the steps an order with these settings runs, in pipeline order.
func stepNames(r core.Resolved, inputs int) []string { return stepNamesIn(r, inputs, false) }

// stepNamesIn is stepNames for an order that is a scene of a batch (inBatch) or not:
// only a batch's scenes have a shoot to match.
func stepNamesIn(r core.Resolved, inputs int, inBatch bool) []string {
	names := []string{StepDecode}
	if r.LensCorrection {
		names = append(names, StepLens)
	}
	if inputs > 1 {
		if r.Align {
			names = append(names, StepAlign)
		}
		names = append(names, StepMerge)
	}
	if r.ColorCorrection {
		names = append(names, StepColor)
	}
	if r.GenEdit == catalog.GenMagicEraser {
		names = append(names, StepMagicEraser)
	}
	if r.Perspective {
		names = append(names, StepPerspective)
	}
	if r.Tonecraft {
		names = append(names, StepTone)
	}
	if inBatch && r.ShootConsistency {
		names = append(names, StepMatch)
	}
	if Adjusts(r) {
		names = append(names, StepAdjust)
	}
	if r.Sky {
		names = append(names, StepSky)
	}
	switch r.GenEdit {
	case catalog.GenIndoorStaging:
		names = append(names, StepIndoorStaging)
	case catalog.GenOutdoorStaging:
		names = append(names, StepOutdoorStaging)
	case catalog.GenMessCleaner:
		names = append(names, StepMessCleaner)
	case catalog.GenDeclutterLocal:
		names = append(names, StepDeclutter)
	}
	if r.Privacy {
		names = append(names, StepPrivacy)
	}
	return append(names, StepResolutionCap, StepEncode)
}

// Plan returns the steps an order runs, in order, or an *UnavailableError naming the
// first feature it needs that is not registered.
func (p *Pipeline) Plan(r core.Resolved, inputs int) ([]Step, error) {
	return p.plan(r, inputs, false)
}

// PlanScene is Plan for a scene of a batch, which may match its shoot.
func (p *Pipeline) PlanScene(r core.Resolved, inputs int) ([]Step, error) {
	return p.plan(r, inputs, true)
}

func (p *Pipeline) plan(r core.Resolved, inputs int, inBatch bool) ([]Step, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	var out []Step
	for _, n := range stepNamesIn(r, inputs, inBatch) {
		s, ok := p.steps[n]
		if !ok {
			sl, _, _ := slotOf(n)
			if sl.optional {
				continue
			}
			return nil, &UnavailableError{Step: n, Feature: sl.feature, Backend: sl.needsBackend, configKey: backendFeatureOf(n)}
		}
		out = append(out, s)
	}
	return out, nil
}

// defaultCost is the seconds per megapixel assumed for a step never measured.
const defaultCost = 0.05

// Request is one order to run.
type Request struct {
	OrderID string
	Owner   string
	Inputs  []string
	Options core.Resolved
	// Sizes are the inputs' dimensions from their asset records, for the estimates
	// made before the inputs are decoded.
	Sizes []image.Point
	// Assets reads the inputs and stores the output.
	Assets Assets
	// Shoot is the batch the order is a scene of, nil for a single order; with it
	// and shoot_consistency on, the scene is matched to its shoot (see match.go).
	Shoot *Shoot
}

// Progress is a progress report for the whole order.
type Progress struct {
	Step    string
	Stage   string
	Percent float64       // 0..100
	ETA     time.Duration // expected time left
}

// Result is what a successful run produced.
type Result struct {
	Output  core.Asset
	Notes   []string
	Steps   []string          // names of the steps that ran, in order
	Recipes map[string]string // recipe name -> version of the steps that ran
}

// RecipesOf returns recipe name -> version for steps.
func RecipesOf(steps []string) map[string]string {
	out := map[string]string{}
	for _, n := range steps {
		if sl, _, ok := slotOf(n); ok {
			if v, ok := catalog.RecipeVersion(sl.recipe); ok {
				out[sl.recipe] = v
			}
		}
	}
	return out
}

// Run runs the order's steps. report (may be nil) receives progress from the calling
// goroutine. A step that panics fails the order with CodeInternal instead of taking
// the process down. When ctx is done Run returns ctx's error as soon as the running
// step returns, except after the final step stored the output: then it reports
// success and the caller decides whether the output still counts.
func (p *Pipeline) Run(ctx context.Context, req Request, report func(Progress)) (Result, error) {
	steps, err := p.plan(req.Options, len(req.Inputs), req.Shoot != nil)
	if err != nil {
		return Result{}, err
	}
	if req.Assets == nil {
		return Result{}, fmt.Errorf("pipeline: request has no asset store")
	}
	if len(req.Inputs) == 0 {
		return Result{}, Errorf(CodeInputUnavailable, "the order has no inputs")
	}
	j := &Job{OrderID: req.OrderID, Owner: req.Owner, Options: req.Options,
		Inputs: append([]string(nil), req.Inputs...), Assets: req.Assets, shoot: req.Shoot, pipe: p}

	var framePx int64
	for _, s := range req.Sizes {
		framePx = max(framePx, int64(s.X)*int64(s.Y))
	}
	n := len(req.Inputs)
	est := make([]time.Duration, len(steps))
	estimate := func() {
		for i, s := range steps {
			est[i], _ = p.timings.Estimate(s.Name, stepMegapixels(s.Name, framePx, n), s.Cost)
		}
	}
	estimate()

	var names []string
	base := 0.0     // percentage reached when the running step started
	reported := 0.0 // highest percentage reported so far
	for i, s := range steps {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		mp := stepMegapixels(s.Name, framePx, n)
		p.keepPreviewBase(ctx, j, steps, i)
		start := time.Now()
		var last time.Time
		emit := func(frac float64, force bool) {
			if report == nil {
				return
			}
			now := time.Now()
			if !force && now.Sub(last) < p.cfg.ReportEvery {
				return
			}
			last = now
			pr := progressAt(steps, est, i, base, frac, now.Sub(start))
			pr.Percent = max(pr.Percent, reported) // never backwards, e.g. when a step beats its estimate
			reported = pr.Percent
			report(pr)
		}
		j.progress = func(frac float64) { emit(min(max(frac, 0), 1), false) }
		emit(0, true)

		if err := p.runStep(ctx, s, j); err != nil {
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, err
		}
		p.timings.Observe(s.Name, mp, time.Since(start))
		names = append(names, s.Name)
		if s.Name == StepDecode && len(j.Frames) > 0 {
			// Actual sizes can differ from the records' (RAW develops); re-estimate.
			framePx = int64(j.Frames[0].Image.W()) * int64(j.Frames[0].Image.H())
			p.planFlash(steps, j) // flambient's default needs the decoded inputs
			estimate()
		}
		if err := ctx.Err(); err != nil && i < len(steps)-1 {
			return Result{}, err
		}
		emit(1, true)
		base = max(progressAt(steps, est, i, base, 1, time.Since(start)).Percent, reported)
	}
	if j.Output.ID == "" {
		return Result{}, Errorf(CodeInternal, "the pipeline finished without an output")
	}
	return Result{Output: j.Output, Notes: j.Notes(), Steps: names, Recipes: RecipesOf(names)}, nil
}

// stepMegapixels is the size a step works on: every frame until the merge, one
// working image after it.
func stepMegapixels(step string, framePx int64, frames int) float64 {
	mp := float64(framePx) / 1e6
	switch step {
	case StepDecode, StepLens, StepAlign, StepMerge, StepFlambient:
		return mp * float64(frames)
	}
	return mp
}

// progressAt places the running step at frac between base (the percentage reached
// when it started) and 100, weighing it against the steps still to come by their
// expected durations. While the step overruns its estimate, the time it has taken so
// far stands in for its estimate. Anchoring at base keeps the percentage from going
// back when a finished step turns out faster than expected.
func progressAt(steps []Step, est []time.Duration, cur int, base, frac float64, elapsed time.Duration) Progress {
	curEst := max(est[cur], elapsed)
	var rest time.Duration
	for _, d := range est[cur+1:] {
		rest += d
	}
	pct := 100.0
	if span := curEst + rest; span > 0 {
		pct = base + (100-base)*frac*float64(curEst)/float64(span)
	}
	left := time.Duration((1-frac)*float64(curEst)) + rest
	if frac > 0.1 && elapsed > 0 {
		// The running step's own pace beats the model once it has one.
		left = time.Duration(float64(elapsed)*(1-frac)/frac) + rest
	}
	return Progress{Step: steps[cur].Name, Stage: steps[cur].Stage, Percent: min(max(pct, base), 100), ETA: max(left, 0)}
}

// runStep runs one step, turning a panic into an internal error and bare errors into
// errors that name the feature.
func (p *Pipeline) runStep(ctx context.Context, s Step, j *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			sl, _, _ := slotOf(s.Name)
			p.cfg.Logger.Error("pipeline step panicked", "step", s.Name, "order", j.OrderID,
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			err = Errorf(CodeInternal, "%s failed unexpectedly (an internal error): %v", sl.feature, r)
		}
	}()
	err = s.Run(ctx, j)
	if err == nil {
		return nil
	}
	var pe *Error
	if errors.As(err, &pe) || ctx.Err() != nil {
		return err
	}
	sl, _, _ := slotOf(s.Name)
	return Wrap(CodeStepFailed, err, sl.feature)
}
