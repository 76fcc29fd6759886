package fuse_test

import (
	"context"
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
	const ref = 2
	// Place the copies where the reference is well exposed, so it knows what the
	// background looks like.
	var pos [][2]int
	for y := 0; y+size <= clean[ref].H() && len(pos) < len(clean); y += size {
		for x := 0; x+size <= clean[ref].W() && len(pos) < len(clean); x += size {
			if x+size > src[0] && x < src[0]+size && y+size > src[1] && y < src[1]+size {
				continue
			}
			if wellExposed(clean[ref], x, y, size) {
				pos = append(pos, [2]int{x, y})
			}
		}
	}
	if len(pos) < len(clean) {
		t.Fatalf("found %d well-exposed squares", len(pos))
	}
	moved := make([]*imaging.Image, len(clean))
	for k, m := range clean {
		moved[k] = m.Clone()
		paste(moved[k], src[0], src[1], pos[k][0], pos[k][1], size)
	}
	fuseWith := func(seq []*imaging.Image, deghost float64) *imaging.Image {
		o := fuse.DefaultOptions()
		o.Deghost = deghost
		out, err := fuse.Fuse(context.Background(), seq, o)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := fuseWith(clean, 1)
	with := fuseWith(moved, 1)
	without := fuseWith(moved, 0)
	m := 4 // ignore the patch border, where the weights ramp
	strongest := 0.0
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
		strongest = max(strongest, raw)
		if dg > max(0.02, 0.35*raw) {
			t.Errorf("ghost of bracket %d remains: difference %.4f (without deghosting %.4f)", k, dg, raw)
		}
	}
	if strongest < 0.03 {
		t.Errorf("no visible ghost even without deghosting (%.4f): the test proves nothing", strongest)
	}
}

// wellExposed reports whether 95% of the square has encoded luma within 0.2..0.8.
func wellExposed(im *imaging.Image, x0, y0, size int) bool {
	bad := 0
	for y := y0; y < y0+size; y++ {
		r := im.Row(y)
		for x := x0; x < x0+size; x++ {
			l := imaging.LinearToSRGB(0.2126*r[3*x] + 0.7152*r[3*x+1] + 0.0722*r[3*x+2])
			if l < 0.2 || l > 0.8 {
				bad++
			}
		}
	}
	return bad*20 <= size*size
}
