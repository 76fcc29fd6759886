package fuse_test

import (
	"math"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
)

// paste copies the size×size square at (sx, sy) of m over the square at (dx, dy).
func paste(m *imaging.Image, sx, sy, dx, dy, size int) {
	for y := 0; y < size; y++ {
		copy(m.Row(dy + y)[dx*m.C:(dx+size)*m.C], m.Row(sy + y)[sx*m.C:(sx+size)*m.C])
	}
}

// meanDiff is the mean absolute difference of encoded values of a and b in the square.
func meanDiff(a, b *imaging.Image, x0, y0, size int) float64 {
	var s float64
	var n int
	for y := y0; y < y0+size; y++ {
		ra, rb := a.Row(y), b.Row(y)
		for i := x0 * 3; i < (x0+size)*3; i++ {
			s += math.Abs(float64(imaging.LinearToSRGB(ra[i]) - imaging.LinearToSRGB(rb[i])))
			n++
		}
	}
	return s / float64(n)
}

// TestDeghostMovingPatch pastes one piece of the scene at a different place in every
// bracket of a real set (something that moved between exposures, lit consistently
// with each bracket) and checks that the fusion shows it only where the reference
// bracket has it: elsewhere the result matches the fusion of the untouched brackets,
// with no second, faint copy.
func TestDeghostMovingPatch(t *testing.T) {
	clean := loadHouse(t) // sorted dark to bright already; the reference is index 2
	const size = 56
	src := [2]int{330, 380} // chair and radiator
	pos := [][2]int{{30, 90}, {100, 90}, {170, 90}, {30, 200}} // over the bookshelf
	moved := make([]*imaging.Image, len(clean))
	for k, m := range clean {
		moved[k] = m.Clone()
		paste(moved[k], src[0], src[1], pos[k][0], pos[k][1], size)
	}
	fuseWith := func(seq []*imaging.Image, deghost float64) *imaging.Image {
		o := fuse.DefaultOptions()
		o.Deghost = deghost
		out, err := fuse.Fuse(seq, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := fuseWith(clean, 1)
	with := fuseWith(moved, 1)
	without := fuseWith(moved, 0)
	const ref = 2
	m := 4 // ignore the patch border, where the weights ramp
	for k, p := range pos {
		dg := meanDiff(base, with, p[0]+m, p[1]+m, size-2*m)
		raw := meanDiff(base, without, p[0]+m, p[1]+m, size-2*m)
		t.Logf("bracket %d position %v: difference from clean fusion %.4f with deghosting, %.4f without", k, p, dg, raw)
		if k == ref {
			if dg < 0.05 {
				t.Errorf("the reference's copy is missing from the fusion (difference %.4f)", dg)
			}
			continue
		}
		if dg > max(0.02, 0.35*raw) {
			t.Errorf("ghost of bracket %d remains: difference %.4f (without deghosting %.4f)", k, dg, raw)
		}
	}
}
