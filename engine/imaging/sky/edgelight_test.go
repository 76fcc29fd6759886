package sky

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// TestRelight: a pale surface at the skyline tinted by the old sky takes the new sky's
// light in proportion to the weight; shade darker than the ground is left alone.
func TestRelight(t *testing.T) {
	sOld := [3]float32{0.15, 0.40, 0.75} // clear blue
	sNew := [3]float32{0.60, 0.20, 0.60} // a very different sky, to see the swap
	ground := [3]float32{0.03, 0.025, 0.02}
	flashing := [3]float32{0.45, 0.55, 0.65} // pale, bluish, brighter than the ground

	full := flashing
	relight(&full, flashing[:], 1, &sOld, &ground, &sNew)
	// It moves along sNew - sOld, by a positive amount of at most lightMax.
	k := (full[0] - flashing[0]) / (sNew[0] - sOld[0])
	if !(k > 0.3 && k <= lightMax+1e-6) {
		t.Fatalf("swapped share %.3f, want in (0.3, %.1f]", k, lightMax)
	}
	for c := 0; c < 3; c++ {
		if d := full[c] - flashing[c] - k*(sNew[c]-sOld[c]); math.Abs(float64(d)) > 1e-5 {
			t.Errorf("channel %d moved %.4f off the old-to-new sky direction", c, d)
		}
	}
	half := flashing
	relight(&half, flashing[:], 0.5, &sOld, &ground, &sNew)
	if d := (half[0] - flashing[0]) - 0.5*(full[0]-flashing[0]); math.Abs(float64(d)) > 1e-5 {
		t.Errorf("half weight moved red by %.4f, want half of %.4f", half[0]-flashing[0], full[0]-flashing[0])
	}

	// A white wall beside the skyline with a sky darker than it: its shadowed coping is
	// "towards the sky" but darker than the wall, shade and not sky light.
	wall := [3]float32{0.8, 0.8, 0.82}
	coping := [3]float32{0.30, 0.32, 0.45}
	got := coping
	relight(&got, coping[:], 1, &sOld, &wall, &sNew)
	if got != coping {
		t.Errorf("shade relit: %v -> %v", coping, got)
	}
	// A surface redder than the ground carries none of the blue sky's light.
	brick := [3]float32{0.25, 0.06, 0.03}
	got = brick
	relight(&got, brick[:], 1, &sOld, &ground, &sNew)
	if got != brick {
		t.Errorf("surface with no sky colour relit: %v -> %v", brick, got)
	}
}

// TestEdgeLightFades: the weight is 1 next to the matte and falls to 0 within
// lightReach of the long edge, so a pale object further from the skyline keeps its
// colour.
func TestEdgeLightFades(t *testing.T) {
	const w, h = 768, 512
	a := &analysis{guide: imaging.New(w, h, 3), mask: make([]float32, w*h)}
	const skyRows = 200
	for p := 0; p < skyRows*w; p++ {
		a.mask[p] = 1
	}
	e, rows := a.edgeLight()
	reach := float64(w) * lightReach
	x := w / 2
	prev := float32(2)
	for y := skyRows - 1; y < h; y++ {
		v := e[y*w+x]
		d := float64(y - skyRows + 1)
		switch {
		case d <= 1 && v != 1:
			t.Errorf("weight %.2f at %v px from the matte, want 1", v, d)
		case d >= reach && v != 0:
			t.Errorf("weight %.2f at %v px, beyond the reach %.1f", v, d, reach)
		case v > prev:
			t.Errorf("weight rises from %.2f to %.2f at %v px", prev, v, d)
		}
		if rows[y] != (v > 0) {
			t.Errorf("row %d flagged %v with weight %.2f", y, rows[y], v)
		}
		prev = v
	}
}
