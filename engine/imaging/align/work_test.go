package align

import (
	"math/rand/v2"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// An 8-bit bracket reduced from its codes gives the float path's luma and clipping
// marks exactly.
func TestReduceWork8MatchesFloat(t *testing.T) {
	const w, h, f = 203, 97, 4
	m := &imaging.Image{Pix8: make([]uint8, w*h*3), Stride: w * 3, C: 3}
	m.Rect.Max.X, m.Rect.Max.Y = w, h
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range m.Pix8 {
		m.Pix8[i] = uint8(rng.IntN(256))
		if rng.IntN(50) == 0 {
			m.Pix8[i] = 255 // some clipped samples
		}
	}
	narrow, wide := reduceWork(m, f), reduceWork(m.Widen(), f)
	for i := range wide.luma.pix {
		if narrow.luma.pix[i] != wide.luma.pix[i] || narrow.valid[i] != wide.valid[i] {
			t.Fatalf("block %d: narrow %v/%v, float %v/%v", i, narrow.luma.pix[i], narrow.valid[i], wide.luma.pix[i], wide.valid[i])
		}
	}
	clipped := 0
	for _, v := range wide.valid {
		if !v {
			clipped++
		}
	}
	if clipped == 0 || clipped == len(wide.valid) {
		t.Fatalf("%d of %d blocks invalid: the case tests nothing", clipped, len(wide.valid))
	}
}
