package match

import (
	"context"
	"math"
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func load(t testing.TB, rel ...string) *imaging.Image {
	t.Helper()
	f, err := os.Open(testphotos.Path(t, rel...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	img, _, err := codec.Decode(f, st.Size(), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func measure(t testing.TB, img *imaging.Image) Stats {
	t.Helper()
	s, err := Measure(context.Background(), img)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A correction takes a real room to the look it is planned for: the neutral
// surfaces' balance to the target, then the median L* to the target.
func TestApplyReachesTheLook(t *testing.T) {
	img := load(t, "interiors", "houses_158_bedroom.jpg")
	s := measure(t, img)
	if !s.HasNeutral || !s.HasExposure {
		t.Fatalf("no measure of a bedroom with white walls: %+v", s)
	}
	if again := measure(t, img); again != s {
		t.Fatalf("two measures of one image differ: %+v, %+v", s, again)
	}
	look := Look{HasNeutral: true, RG: s.RG + 0.05, BG: s.BG - 0.05, HasExposure: true, MidL: s.MidL, Scenes: 2}
	if err := Apply(context.Background(), img, Plan(s, look)); err != nil {
		t.Fatal(err)
	}
	got := measure(t, img)
	if math.Abs(got.RG-look.RG) > 0.01 || math.Abs(got.BG-look.BG) > 0.01 {
		t.Errorf("neutral balance %.3f/%.3f, want %.3f/%.3f", got.RG, got.BG, look.RG, look.BG)
	}

	for _, dl := range []float64{8, -8} {
		s := measure(t, img)
		look := Look{HasExposure: true, MidL: s.MidL + dl, Scenes: 2}
		c := Plan(s, look)
		if c.Clamped || c.EV*dl <= 0 {
			t.Fatalf("plan %+v for %+.0f L*", c, dl)
		}
		if err := Apply(context.Background(), img, c); err != nil {
			t.Fatal(err)
		}
		if got := measure(t, img); math.Abs(got.MidL-look.MidL) > 1 {
			t.Errorf("median L* %.1f, want %.1f", got.MidL, look.MidL)
		}
	}
	// Brightening and darkening keep white at most white.
	var peak float32
	for _, v := range img.Pix {
		peak = max(peak, v)
	}
	if peak > 1 {
		t.Errorf("a pixel went to %.3f", peak)
	}
}

// The look is the median of the scenes: one odd scene (a red-brick exterior whose
// "neutrals" are warm) does not pull it, and its own correction is clamped.
func TestTargetIgnoresAnOddSceneAndPlanClamps(t *testing.T) {
	scenes := []Stats{
		{HasNeutral: true, RG: 0.01, BG: -0.02, HasExposure: true, MidL: 55},
		{HasNeutral: true, RG: 0.02, BG: -0.01, HasExposure: true, MidL: 58},
		{HasNeutral: true, RG: 0.00, BG: 0.00, HasExposure: true, MidL: 57},
		{HasNeutral: true, RG: 0.60, BG: -0.70, HasExposure: true, MidL: 20},
		{HasExposure: true, MidL: 56}, // no neutral surfaces: no say in the balance
	}
	l := Target(scenes)
	if l.Scenes != 5 || !l.HasNeutral || math.Abs(l.RG-0.015) > 1e-9 || math.Abs(l.BG+0.015) > 1e-9 || l.MidL != 56 {
		t.Fatalf("look %+v", l)
	}
	// So far from the rest, its "white" is its own colour: balance kept, exposure
	// clamped.
	if c := Plan(scenes[3], l); !c.Clamped || c.EV != MaxExposure || c.Gain != [3]float64{1, 1, 1} {
		t.Fatalf("odd scene's plan %+v", c)
	}
	// A warm room within reach is cooled in full; a green reading is moved toward
	// magenta only as far as MaxTint.
	warm := Stats{HasNeutral: true, RG: l.RG + 0.1, BG: l.BG - 0.1, HasExposure: true, MidL: 56}
	if c := Plan(warm, l); c.Clamped || math.Abs(math.Log(c.Gain[0]/c.Gain[1])+0.1) > 1e-9 || math.Abs(math.Log(c.Gain[2]/c.Gain[1])-0.1) > 1e-9 {
		t.Fatalf("warm room's plan %+v", c)
	}
	green := Stats{HasNeutral: true, RG: l.RG - 0.1, BG: l.BG - 0.1, HasExposure: true, MidL: 56}
	c := Plan(green, l)
	if m := (math.Log(c.Gain[0]/c.Gain[1]) + math.Log(c.Gain[2]/c.Gain[1])) / math.Sqrt2; !c.Clamped || math.Abs(m-MaxTint) > 1e-9 {
		t.Fatalf("green room's plan %+v (tint %.3f)", c, m)
	}
	if c := Plan(scenes[4], l); c.Gain != [3]float64{1, 1, 1} {
		t.Fatalf("a scene without neutral surfaces got a white balance: %+v", c)
	}
}

func BenchmarkApply(b *testing.B) {
	img := load(b, "interiors", "houses_158_bedroom.jpg")
	c := Correction{Gain: [3]float64{1.02, 1, 0.97}, EV: 0.3, Curve: 1.3}
	b.ReportAllocs()
	b.SetBytes(int64(len(img.Pix) * 4))
	for b.Loop() {
		Apply(context.Background(), img, c)
	}
}
