package imaging

import "testing"

func TestChamferDistances(t *testing.T) {
	// One seed in a 5×4 grid: 3 per straight step, 4 per diagonal one.
	set := make([]bool, 5*4)
	set[1*5+1] = true
	want := []int32{
		4, 3, 4, 7, 10,
		3, 0, 3, 6, 9,
		4, 3, 4, 7, 10,
		7, 6, 7, 8, 11,
	}
	d := Chamfer(set, 5, 4, false)
	for i := range want {
		if d[i] != want[i] {
			t.Fatalf("distance to the seed: got %v, want %v", d, want)
		}
	}
	// Inverted: distance to the unset pixels, 0 on them.
	inv := Chamfer(set, 5, 4, true)
	if inv[1*5+1] != 3 || inv[0] != 0 {
		t.Fatalf("inverted: seed reads %d, an unset pixel %d; want 3 and 0", inv[1*5+1], inv[0])
	}
	// Nothing to measure to.
	none := Chamfer(make([]bool, 6), 3, 2, false)
	for _, v := range none {
		if v != ChamferFar {
			t.Fatalf("empty set: got %v, want all ChamferFar", none)
		}
	}
}
