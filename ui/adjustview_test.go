package ui

import (
	"image"
	"path/filepath"
	"testing"
	"time"
)

func meanOf(img image.Image) float64 {
	if img == nil {
		return 0
	}
	b := img.Bounds()
	var sum float64
	n := 0
	for y := b.Min.Y; y < b.Max.Y; y += 4 {
		for x := b.Min.X; x < b.Max.X; x += 4 {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum += float64(r+g+bl) / 3
			n++
		}
	}
	return sum / float64(n)
}

// A processed scene's sliders preview over its kept base at once, and Render full
// size makes a new version with them, keeping the first.
func TestSlidersPreviewThenRenderANewVersion(t *testing.T) {
	sys, _ := startSystem(t, t.TempDir())
	h, _ := windowOn(t, sys, filepath.Join(t.TempDir(), "config.yaml"), t.TempDir())
	id := h.drop(houses(t)[3])[0]
	h.shortcut(ctrlEnter)
	h.waitFor("the first version", 2*time.Minute, h.versionsSaved(id, 1))
	h.w.Select(id)
	h.w.sideTabs.SelectIndex(adjustTab)
	h.loop.pump()

	after := func() image.Image {
		h.w.detail.compare.mu.Lock()
		defer h.w.detail.compare.mu.Unlock()
		return h.w.detail.compare.after
	}
	h.waitFor("the preview base", 30*time.Second, func() bool { return h.w.adjust.pv != nil && after() != nil })
	if h.w.adjust.base != nil {
		t.Fatalf("the order kept no preview base (previewing over its output, carrying %v)", h.w.adjust.base)
	}
	h.waitFor("the first preview", 10*time.Second, func() bool {
		return after() != nil && after().Bounds().Dx() <= 2048 && after().Bounds().Dx() >= 1000
	})
	plain := meanOf(after())

	start := time.Now()
	h.w.adjust.panel.sliders["exposure"].SetValue(1)
	h.waitFor("the preview of +1 EV", 2*time.Second, func() bool { return meanOf(after()) > plain*1.15 })
	t.Logf("preview after a slider move: %v (mean %.0f -> %.0f)", time.Since(start), plain, meanOf(after()))

	h.w.adjust.renderFull()
	h.waitFor("the full-size version", 2*time.Minute, h.versionsSaved(id, 2))
	s, _ := h.w.shoot.Get(id)
	if e := s.Versions[1].Options.Exposure; e == nil || *e != 1 || s.Versions[0].Options.Exposure != nil {
		t.Fatalf("versions' exposure %v / %v", s.Versions[0].Options.Exposure, e)
	}
	first, err := decodeFile(s.Versions[0].Saved, 512)
	if err != nil {
		t.Fatal(err)
	}
	second, err := decodeFile(s.Versions[1].Saved, 512)
	if err != nil {
		t.Fatal(err)
	}
	if m1, m2 := meanOf(first), meanOf(second); m2 < m1*1.15 {
		t.Fatalf("the new version's mean %.0f, the first's %.0f: the slider did not reach the full render", m2, m1)
	}
}

// Copy and paste carry the sliders and the perspective from one scene to another;
// "apply to all" gives them to every scene not processed yet.
func TestAdjustCopyPasteAndApplyToAll(t *testing.T) {
	h := newHarness(t, 1)
	ids := h.drop(houses(t)[:3]...)
	h.w.Select(ids[0])
	h.w.sideTabs.SelectIndex(adjustTab)
	h.loop.pump()
	a := h.w.adjust
	a.panel.sliders["contrast"].SetValue(30)
	a.persp.Set(perspectiveValues{On: true, Strength: 0.5})
	a.straighten(a.persp.Values())
	a.copySettings()

	h.w.Select(ids[1]) // the Adjust tab stays open going scene to scene
	h.loop.pump()
	a.paste()
	s, _ := h.w.shoot.Get(ids[1])
	if c := s.Overrides.Contrast; c == nil || *c != 30 {
		t.Fatalf("pasted contrast %v", c)
	}
	if p, st := s.Overrides.Perspective, s.Overrides.PerspectiveStrength; p == nil || !*p || st == nil || *st != 0.5 {
		t.Fatalf("pasted perspective %v strength %v", p, st)
	}

	a.applyAll()
	s, _ = h.w.shoot.Get(ids[2])
	if c := s.Overrides.Contrast; c == nil || *c != 30 || s.Overrides.Perspective == nil {
		t.Fatalf("applied to all: contrast %v, perspective %v", c, s.Overrides.Perspective)
	}
}
