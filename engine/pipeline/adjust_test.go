package pipeline

import (
	"context"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
)

// runOrder runs one order on a real photo and returns the decoded output.
func runOrder(t *testing.T, p *Pipeline, order string, o core.Options, rel []string) (*imaging.Image, Result) {
	t.Helper()
	fa := photos(t, rel)
	res, err := p.Run(context.Background(), Request{OrderID: order, Inputs: []string{"in0"}, Options: resolved(t, o), Assets: fa}, nil)
	if err != nil {
		t.Fatalf("%s: %v", order, err)
	}
	return decodeOutput(t, fa.out[order]), res
}

// meanLevel is the mean sRGB-encoded luminance of m.
func meanLevel(m *imaging.Image) float64 {
	var s float64
	for y := range m.H() {
		row := m.Row(y)
		for x := range m.W() {
			o := x * m.C
			s += float64(imaging.LinearToSRGB(0.2126*row[o] + 0.7152*row[o+1] + 0.0722*row[o+2]))
		}
	}
	return s / float64(m.W()*m.H())
}

// Orders whose sliders are all zero run no adjust step; any slider plans one, after
// tone and before the sky.
func TestSlidersPlanTheAdjustStep(t *testing.T) {
	p := New(Config{Logger: quiet()})
	steps, err := p.Plan(resolved(t, core.Options{}), 1)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(names(steps), StepAdjust) {
		t.Fatalf("zero sliders planned %v", names(steps))
	}
	for _, o := range []core.Options{{Exposure: ptr(0.5)}, {Saturation: ptr(-100.0)}, {Blacks: ptr(3.0)},
		{Exposure: ptr(-1.0), Sky: ptr(true)}} {
		r := resolved(t, o)
		steps, err := p.Plan(r, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := names(steps)
		i := slices.Index(n, StepAdjust)
		if i < 0 {
			t.Fatalf("%+v: no adjust step in %v", AdjustSettings(r), n)
		}
		if j := slices.Index(n, StepTone); j >= 0 && j > i {
			t.Errorf("adjust before tone: %v", n)
		}
		if j := slices.Index(n, StepSky); j >= 0 && j < i {
			t.Errorf("adjust after sky: %v", n)
		}
	}
}

// Exposure +1 delivers a brighter photo than the same order at 0, saturation -100 a
// gray one; the step records its recipe like the rest of develop.
func TestSlidersChangeTheDelivery(t *testing.T) {
	p := New(Config{Logger: quiet()})
	kimC := []string{"brackets", "house_interior_kim", "C.jpg"}
	plain, _ := runOrder(t, p, "plain", core.Options{}, kimC)
	bright, res := runOrder(t, p, "bright", core.Options{Exposure: ptr(1.0)}, kimC)
	if !slices.Contains(res.Steps, StepAdjust) {
		t.Fatalf("exposure +1 ran %v", res.Steps)
	}
	if a, b := meanLevel(plain), meanLevel(bright); !(b > a+0.05) {
		t.Errorf("exposure +1: mean level %.3f, at 0 %.3f", b, a)
	}
	gray, _ := runOrder(t, p, "gray", core.Options{Saturation: ptr(-100.0)}, kimC)
	worst := 0
	for y := range gray.H() {
		row := gray.Row(y)
		for x := range gray.W() {
			o := x * gray.C
			r, g, b := int(imaging.Encode8(row[o])), int(imaging.Encode8(row[o+1])), int(imaging.Encode8(row[o+2]))
			worst = max(worst, max(r, g, b)-min(r, g, b))
		}
	}
	// The delivery is a JPEG: a gray image keeps within a code or two of gray.
	if worst > 3 {
		t.Errorf("saturation -100 left a pixel %d codes from gray", worst)
	}
}
