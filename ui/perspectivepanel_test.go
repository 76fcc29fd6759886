package ui

import (
	"context"
	"image"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/perspective"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// tiltedRoom is a bedroom shot looking down about ten degrees: its verticals
// converge enough that every strength shows.
func tiltedRoom(t testing.TB) string {
	return testphotos.Path(t, "interiors", "houses_156_bedroom.jpg")
}

// meanAbsDiff is the mean absolute difference of two same-sized NRGBA images, 0..255.
func meanAbsDiff(a, b *image.NRGBA) float64 {
	if a.Rect != b.Rect {
		return math.Inf(1)
	}
	var sum float64
	for i := range a.Pix {
		sum += math.Abs(float64(a.Pix[i]) - float64(b.Pix[i]))
	}
	return sum / float64(len(a.Pix))
}

// tagOf is the compare view's left tag.
func tagOf(h *harness) string {
	c := h.w.detail.compare
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tagL.Text
}

// A draft's perspective section straightens its reference in the compare view as the
// strength moves, says what the correction did, shows the frame as shot when turned
// off, keeps the values as the scene's options, and Render full size carries them
// into the new version.
func TestPerspectiveSectionPreviewsAndRenders(t *testing.T) {
	sys, _ := startSystem(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	ref := tiltedRoom(t)
	id := h.drop(ref)[0]
	h.w.Select(id)
	h.w.sideTabs.SelectIndex(adjustTab)
	h.loop.pump()

	var last straightened
	shown := 0
	h.w.adjust.onStraightened = func(r straightened) { last, shown = r, shown+1 }
	before := func() image.Image {
		c := h.w.detail.compare
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.before
	}
	waitShown := func(what string, v perspectiveValues) straightened {
		t.Helper()
		h.waitFor(what, 30*time.Second, func() bool {
			return shown > 0 && last.Values == v && before() == image.Image(last.Image)
		})
		return last
	}
	p := h.w.adjust.persp
	if p.check.Checked || p.strength.Value != 100 || !p.strength.Disabled() {
		t.Fatalf("a new scene's section: checked %v, strength %v (disabled %v)", p.check.Checked, p.strength.Value, p.strength.Disabled())
	}

	p.check.SetChecked(true)
	full := waitShown("the full correction", perspectiveValues{On: true, Strength: 1})
	if !full.Result.Applied || full.Result.RotationDeg < 3 {
		t.Fatalf("full correction: %+v (%s)", full.Result, full.Note)
	}
	if !strings.Contains(full.Note, "straightened") || !strings.Contains(full.Note, "of the frame kept") {
		t.Fatalf("note %q", full.Note)
	}
	if got := p.note.Text; got != full.Note {
		t.Fatalf("panel note %q, want %q", got, full.Note)
	}
	if b := full.Image.Bounds(); max(b.Dx(), b.Dy()) != perspectiveEdge {
		t.Fatalf("preview is %v, want %d px on the long edge", b, perspectiveEdge)
	}
	if tag := tagOf(h); tag != "STRAIGHTENED" {
		t.Fatalf("the straightened frame is tagged %q", tag)
	}
	if s, _ := h.w.shoot.Get(id); !boolOpt(s.Overrides.Perspective) {
		t.Fatalf("the draft's options %+v: perspective not on", s.Overrides)
	}
	t.Logf("first preview (decode and estimate included): %v: %s", full.Took, full.Note)

	p.strength.SetValue(40)
	half := waitShown("the 40 % correction", perspectiveValues{On: true, Strength: 0.4})
	t.Logf("strength change: %v: %s", half.Took, half.Note)
	if half.Note == full.Note {
		t.Fatalf("the note did not change with the strength: %q", half.Note)
	}
	if r := half.Result.RotationDeg / full.Result.RotationDeg; math.Abs(r-0.4) > 0.02 {
		t.Fatalf("rotation at 40 %%: %.2f° of %.2f°", half.Result.RotationDeg, full.Result.RotationDeg)
	}
	if d := meanAbsDiff(full.Image, half.Image); d < 2 {
		t.Fatalf("the shown image hardly changed with the strength: mean difference %.2f", d)
	}
	if s, _ := h.w.shoot.Get(id); s.Overrides.PerspectiveStrength == nil || *s.Overrides.PerspectiveStrength != 0.4 {
		t.Fatalf("the draft's strength option %v", s.Overrides.PerspectiveStrength)
	}

	// Moves in a row: the last one is what stays shown.
	for _, x := range []float64{10, 20, 30, 60} {
		p.strength.SetValue(x)
	}
	waitShown("the last of several moves", perspectiveValues{On: true, Strength: 0.6})

	p.check.SetChecked(false)
	off := waitShown("the frame as shot", perspectiveValues{On: false, Strength: 0.6})
	small, _, err := codec.DecodeFile(ref, codec.DecodeOptions{ScaleToMaxEdge: perspectiveEdge, MaxPixels: -1})
	if err != nil {
		t.Fatal(err)
	}
	if d := meanAbsDiff(off.Image, small.ToNRGBA()); d != 0 {
		t.Fatalf("turned off, the shown frame differs from the photo as shot by %.2f", d)
	}
	if tag := tagOf(h); tag != "ORIGINAL" {
		t.Fatalf("the frame as shot is tagged %q", tag)
	}
	if !p.strength.Disabled() {
		t.Fatal("the strength still moves with the correction off")
	}
	if s, _ := h.w.shoot.Get(id); s.Overrides.Perspective == nil || *s.Overrides.Perspective {
		t.Fatalf("turned off, the scene's perspective option is %v", s.Overrides.Perspective)
	}

	// Options set elsewhere (the Scene tab) win over the section and are previewed.
	on, quarter := true, 0.25
	if err := h.w.shoot.SetOverrides(id, core.Options{Perspective: &on, PerspectiveStrength: &quarter}); err != nil {
		t.Fatal(err)
	}
	h.w.refresh()
	waitShown("the options set elsewhere", perspectiveValues{On: true, Strength: 0.25})
	if !p.check.Checked || p.strength.Value != 25 {
		t.Fatalf("the section shows %v at %v after the options changed elsewhere", p.check.Checked, p.strength.Value)
	}

	p.strength.SetValue(70)
	waitShown("the 70 % correction", perspectiveValues{On: true, Strength: 0.7})
	h.w.adjust.renderFull()
	h.waitFor("the rendered version", 2*time.Minute, func() bool {
		s, _ := h.w.shoot.Get(id)
		return len(s.Versions) == 1 && s.Summary.Status == core.OrderCompleted
	})
	s, _ := h.w.shoot.Get(id)
	o := s.Versions[0].Options
	if !boolOpt(o.Perspective) || o.PerspectiveStrength == nil || *o.PerspectiveStrength != 0.7 {
		t.Fatalf("the version's options: perspective %v, strength %v", o.Perspective, o.PerspectiveStrength)
	}
}

// The section's values become options only where they differ from what the scene
// inherits, or where the scene already set them.
func TestPerspectiveValuesApply(t *testing.T) {
	yes, half := true, 0.5
	shootOn := core.Options{Perspective: &yes}
	if o := (perspectiveValues{On: true, Strength: 1}).apply(core.Options{}, shootOn); o.Perspective != nil || o.PerspectiveStrength != nil {
		t.Fatalf("inherited values written: %v %v", o.Perspective, o.PerspectiveStrength)
	}
	o := (perspectiveValues{On: false, Strength: 1}).apply(core.Options{}, shootOn)
	if o.Perspective == nil || *o.Perspective {
		t.Fatalf("turned off under a shoot with it on: %v", o.Perspective)
	}
	o = (perspectiveValues{On: false, Strength: 1}).apply(core.Options{Perspective: &yes, PerspectiveStrength: &half}, core.Options{})
	if o.Perspective == nil || *o.Perspective || o.PerspectiveStrength == nil || *o.PerspectiveStrength != 1 {
		t.Fatalf("a scene's own values not rewritten: %v %v", o.Perspective, o.PerspectiveStrength)
	}
	if v := perspectiveValuesOf(core.Options{}); v.On || v.Strength != 1 {
		t.Fatalf("defaults %+v", v)
	}
}

// BenchmarkPerspectiveStrengthChange is what one move of the strength costs once the
// scene's model is known: the warp of the 1024 px reference within the safe limits,
// and its conversion for display.
func BenchmarkPerspectiveStrengthChange(b *testing.B) {
	small, _, err := codec.DecodeFile(tiltedRoom(b), codec.DecodeOptions{ScaleToMaxEdge: perspectiveEdge, MaxPixels: -1})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	m, err := perspective.Estimate(ctx, small)
	if err != nil || !m.Found {
		b.Fatalf("estimate: %v %+v", err, m)
	}
	b.Logf("estimate on %dx%d: %v (%.1f° to undo)", small.W(), small.H(), time.Since(start), m.RotationDeg())
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, res, err := straighten(ctx, small, m, 0.3+0.7*float64(i%8)/7)
		if err != nil || !res.Applied {
			b.Fatalf("%v %+v", err, res)
		}
		_ = out.ToNRGBA()
	}
}

// On a processed scene the straightened reference is the "before" beside the result,
// and stays so while the sliders preview; the scene's options change only when it is
// rendered again, and the new version carries them.
func TestPerspectiveSectionOnAProcessedScene(t *testing.T) {
	sys, _ := startSystem(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	id := h.drop(tiltedRoom(t))[0]
	h.shortcut(ctrlEnter)
	h.waitFor("the first version", 2*time.Minute, h.versionsSaved(id, 1))
	h.w.Select(id)
	h.w.sideTabs.SelectIndex(adjustTab)
	h.loop.pump()
	c := h.w.detail.compare
	shownImages := func() (before, after image.Image, tag string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.before, c.after, c.tagL.Text
	}
	h.waitFor("the slider preview", 30*time.Second, func() bool {
		_, a, _ := shownImages()
		return h.w.adjust.pv != nil && a != nil
	})

	var last straightened
	h.w.adjust.onStraightened = func(r straightened) { last = r }
	p := h.w.adjust.persp
	p.check.SetChecked(true)
	p.strength.SetValue(80)
	h.waitFor("the straightened before", 30*time.Second, func() bool {
		b, _, _ := shownImages()
		return last.Values == (perspectiveValues{On: true, Strength: 0.8}) && b == image.Image(last.Image)
	})
	if _, a, tag := shownImages(); a == nil || tag != "STRAIGHTENED" {
		t.Fatalf("beside the straightened reference: after %v, tag %q", a != nil, tag)
	}
	if s, _ := h.w.shoot.Get(id); s.Overrides.Perspective != nil || s.Overrides.PerspectiveStrength != nil {
		t.Fatalf("a processed scene's options changed before rendering: %+v", s.Overrides)
	}

	_, plain, _ := shownImages()
	h.w.adjust.panel.sliders["exposure"].SetValue(0.5)
	h.waitFor("the slider preview beside it", 10*time.Second, func() bool {
		_, a, _ := shownImages()
		return a != plain
	})
	if b, _, _ := shownImages(); b != image.Image(last.Image) {
		t.Fatal("a slider preview put the reference as shot back")
	}

	h.w.adjust.renderFull()
	h.waitFor("the second version", 2*time.Minute, h.versionsSaved(id, 2))
	s, _ := h.w.shoot.Get(id)
	o := s.Versions[1].Options
	if !boolOpt(o.Perspective) || o.PerspectiveStrength == nil || *o.PerspectiveStrength != 0.8 {
		t.Fatalf("the new version's options: perspective %v, strength %v", o.Perspective, o.PerspectiveStrength)
	}
	if s.Versions[0].Options.Perspective != nil {
		t.Fatalf("the first version's options changed: %v", s.Versions[0].Options.Perspective)
	}
}

// A library shot up at its gallery needs more than the safe limits allow: the note
// says how far the correction went and why not further. Of two requests in a row
// only the second is answered.
func TestStraightenerLimitedCorrectionAndLatestWins(t *testing.T) {
	ref := testphotos.Path(t, "interiors", "cwz_library3_20240401_185503.JPG")
	var wg sync.WaitGroup
	s := newStraightener(context.Background(), &wg)
	got := make(chan straightened, 2)
	show := func(r straightened) { got <- r }
	s.Request(context.Background(), 1, ref, perspectiveValues{On: true, Strength: 0.5}, show)
	s.Request(context.Background(), 1, ref, perspectiveValues{On: true, Strength: 1}, show)
	r := <-got
	wg.Wait()
	if len(got) != 0 || r.Values.Strength != 1 {
		t.Fatalf("answered %+v and %d more", r.Values, len(got))
	}
	if !r.Result.Limited || !strings.Contains(r.Note, " of ") || !strings.Contains(r.Note, "a full correction would mean") {
		t.Fatalf("note %q (limited %v)", r.Note, r.Result.Limited)
	}
	t.Logf("%v: %s", r.Took, r.Note)
}
