package inpaint

import (
	"context"
	"image"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// lineImage is a w×h beige wall with fine noise, crossed through (cx, cy) by a
// straight dark line width px wide at angle a from vertical; where keep(x, y) is
// false the line is left out. It returns the image and the line's signed distance.
func lineImage(w, h int, a, width float64, seed uint64, keep func(x, y int) bool) (*imaging.Image, func(x, y int) float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	cx, cy := float64(w)/2, float64(h)/2
	nx, ny := math.Cos(a), math.Sin(a)
	dist := func(x, y int) float64 { return (float64(x)-cx)*nx + (float64(y)-cy)*ny }
	m := imaging.New(w, h, 3)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			base := [3]float32{0.55, 0.45, 0.35}
			if math.Abs(dist(x, y)) < width/2 && keep(x, y) {
				base = [3]float32{0.08, 0.07, 0.06}
			}
			nz := float32(rng.NormFloat64() * 0.01)
			for c := 0; c < 3; c++ {
				m.Set(x, y, c, base[c]+nz)
			}
		}
	}
	return m, dist
}

// linesOnly builds the region Erase would for img and mask, stands fill's pixels
// in for the fill of its hole, runs the line step alone on it and returns the
// level and how many pixels the step drew on.
func linesOnly(t *testing.T, img, mask, fill *imaging.Image) (*level, int) {
	t.Helper()
	w, h := img.W(), img.H()
	hole, err := holeMask(mask, w, h)
	if err != nil {
		t.Fatal(err)
	}
	r, err := newRegion(context.Background(), img, hole, image.Rect(0, 0, w, h), growPixels(w, h))
	if err != nil {
		t.Fatal(err)
	}
	l := r.levels[0]
	for i, in := range l.hole {
		if in {
			copy(l.lin[i*3:i*3+3], fill.Pix[i*3:i*3+3])
		}
	}
	n, err := l.continueLines(context.Background(), lineHalfWidth(w, h))
	if err != nil {
		t.Fatal(err)
	}
	return l, n
}

// plain is a w×h image of one colour.
func plain(w, h int, c [3]float32) *imaging.Image {
	m := imaging.New(w, h, 3)
	for i := 0; i < w*h; i++ {
		copy(m.Pix[i*3:], c[:])
	}
	return m
}

// wall is lineImage's background colour.
var wall = [3]float32{0.55, 0.45, 0.35}

func always(int, int) bool { return true }

// TestLineDrawnAcrossHole: a thin dark line at a slant, cut by a box, is drawn
// across it at its own place and tone, and nothing beyond the strip is touched.
func TestLineDrawnAcrossHole(t *testing.T) {
	w, h := 400, 300
	img, dist := lineImage(w, h, 0.3, 4, 1, always)
	hole := [4]int{150, 90, 260, 210}
	mask := rectMask(w, h, hole)
	l, n := linesOnly(t, blank(img, mask), mask, plain(w, h, wall))
	if n == 0 {
		t.Fatal("the line was not carried across the hole")
	}
	R := float64(lineHalfWidth(w, h))
	onLine, off, far := 0, 0, 0
	for y := hole[1]; y < hole[3]; y++ {
		for x := hole[0]; x < hole[2]; x++ {
			d := math.Abs(dist(x, y))
			v := l.lin[(y*w+x)*3]
			switch {
			case d < 1:
				onLine++
				if math.Abs(float64(v-img.At(x, y, 0))) > 0.08 {
					off++
				}
			case d > R+4 && v != wall[0]: // a strip may centre on either edge of the line
				far++
			}
		}
	}
	if off > onLine/20 {
		t.Errorf("%d of %d pixels on the line's centre are off its tone by more than 0.08", off, onLine)
	}
	if far > 0 {
		t.Errorf("%d hole pixels beyond the strip were written", far)
	}
}

// TestLinesNotDrawn: no line is drawn where nothing shows a straight line running
// through the hole: a line that ends inside it, plain texture, a line whose two
// sides differ in tone.
func TestLinesNotDrawn(t *testing.T) {
	w, h := 400, 300
	hole := [4]int{150, 90, 260, 210}
	mask := rectMask(w, h, hole)
	ends, _ := lineImage(w, h, 0.3, 4, 2, func(_, y int) bool { return y < 150 })
	noLine, _ := lineImage(w, h, 0.3, 4, 3, func(int, int) bool { return false })
	// Dark above the hole, a pale line below it.
	cx, cy := float64(w)/2, float64(h)/2
	two, _ := lineImage(w, h, 0.3, 4, 4, always)
	for y := 150; y < h; y++ {
		for x := 0; x < w; x++ {
			if d := (float64(x)-cx)*math.Cos(0.3) + (float64(y)-cy)*math.Sin(0.3); math.Abs(d) < 2 {
				for c := 0; c < 3; c++ {
					two.Set(x, y, c, 0.4)
				}
			}
		}
	}
	for name, img := range map[string]*imaging.Image{"ends inside": ends, "plain": noLine, "two tones": two} {
		if _, n := linesOnly(t, blank(img, mask), mask, plain(w, h, wall)); n != 0 {
			t.Errorf("%s: %d pixels drawn on, want none", name, n)
		}
	}
}

// TestLineLeftOutWhereFillDisagrees: where the fill put something else beside the
// line than the photo has there (here, a dark floor carried up over where a pale
// wall meets it), the edge would float over the fill, and it is not drawn.
func TestLineLeftOutWhereFillDisagrees(t *testing.T) {
	w, h := 400, 300
	img, dist := lineImage(w, h, 1.3, 0, 6, always)
	floor := [3]float32{0.1, 0.08, 0.06}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if dist(x, y) > 0 {
				copy(img.Pix[(y*w+x)*3:], floor[:])
			}
		}
	}
	hole := [4]int{140, 100, 260, 200}
	mask := rectMask(w, h, hole)
	if _, n := linesOnly(t, blank(img, mask), mask, img); n == 0 {
		t.Fatal("the edge was not drawn over a fill that agrees with both its sides")
	}
	if _, n := linesOnly(t, blank(img, mask), mask, plain(w, h, floor)); n != 0 {
		t.Errorf("%d pixels drawn on over a fill that carried the floor up past the edge", n)
	}
}

// TestLinesInErase: through Erase the line step brings the cut line back (the fill
// alone ends it within a few pixels on a photo this size, where the coarse levels
// lose it) and leaves the rest of the fill as it was.
func TestLinesInErase(t *testing.T) {
	w, h := 1600, 1200
	img, dist := lineImage(w, h, 0.15, 5, 5, always)
	hole := [4]int{700, 420, 900, 780}
	mask := rectMask(w, h, hole)
	fill := func(lines bool) *imaging.Image {
		carryLines = lines
		defer func() { carryLines = true }()
		out, err := Erase(context.Background(), blank(img, mask), mask, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	with, without := fill(true), fill(false)
	R := float64(lineHalfWidth(w, h))
	var errWith, errWithout float64
	n, changed := 0, 0
	for y := hole[1]; y < hole[3]; y++ {
		for x := hole[0]; x < hole[2]; x++ {
			d := math.Abs(dist(x, y))
			a, b, truth := with.At(x, y, 0), without.At(x, y, 0), img.At(x, y, 0)
			if d < 3 {
				errWith += math.Abs(float64(a - truth))
				errWithout += math.Abs(float64(b - truth))
				n++
			}
			if d > R+4 && a != b { // a strip may centre on either edge of the line
				changed++
			}
		}
	}
	errWith /= float64(n)
	errWithout /= float64(n)
	t.Logf("mean error along the line: %.3f with the line step, %.3f without", errWith, errWithout)
	if errWith > 0.12 || errWith > errWithout/2 {
		t.Errorf("mean error along the line %.3f with the line step (%.3f without)", errWith, errWithout)
	}
	if changed > 0 {
		t.Errorf("%d fill pixels beyond the strip differ", changed)
	}
}

// TestLinesOnPhotos erases random boxes from full-size photos (four 12 MP kitchens,
// five 1 MP rooms and fronts) with and without the line step and compares the hole's
// SSIM against the photo where the step drew something: it must help on average and
// never cost more than a little.
func TestLinesOnPhotos(t *testing.T) {
	if testing.Short() {
		t.Skip("fills 42 boxes on full-size photos twice; run without -short")
	}
	photos := []struct {
		dir, name string
		boxes     int
	}{
		{"flambient", "kitchenB_16mm_flash__clean-edge-0006.jpg", 3},
		{"flambient", "kitchenD_20mm_flash__clean-edge-0015.jpg", 3},
		{"flambient", "kitchenE_14mm_flash__clean-edge-0018.jpg", 3},
		{"flambient", "kitchenH_25mm_flash__clean-edge-0030.jpg", 3},
		{"interiors", "houses_111_bedroom.jpg", 6},
		{"interiors", "houses_162_kitchen.jpg", 6},
		{"interiors", "houses_218_kitchen.jpg", 6},
		{"exteriors", "houses_117_frontal.jpg", 6},
		{"exteriors", "houses_184_frontal.jpg", 6},
	}
	r := streamSeed(11, 0)
	var sumWith, sumWithout float64
	fired, better, worse := 0, 0, 0
	for _, p := range photos {
		img := loadPhoto(t, p.dir, p.name)
		w, h := img.W(), img.H()
		long := max(w, h)
		truth := lumaPlane(img)
		for k := 0; k < p.boxes; k++ {
			bw, bh := long*(35+r.intn(85))/1000, long*(35+r.intn(85))/1000
			x0, y0 := long/50+r.intn(w-bw-long/25), long/50+r.intn(h-bh-long/25)
			box := [4]int{x0, y0, x0 + bw, y0 + bh}
			mask := rectMask(w, h, box)
			hole, _ := holeMask(mask, w, h)
			fill := func(lines bool) []float64 {
				carryLines = lines
				defer func() { carryLines = true }()
				out, err := Erase(context.Background(), img, mask, Options{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				return lumaPlane(out)
			}
			with, without := fill(true), fill(false)
			same := true
			for i := range with {
				if with[i] != without[i] {
					same = false
					break
				}
			}
			if same {
				continue
			}
			fired++
			a, b := ssimIn(truth, with, hole, w, h), ssimIn(truth, without, hole, w, h)
			sumWith += a
			sumWithout += b
			switch {
			case a > b+0.005:
				better++
			case a < b-0.005:
				worse++
			}
			t.Logf("%s box %v: hole SSIM %.3f without the line step, %.3f with it", p.name, box, b, a)
			if a < b-0.01 {
				t.Errorf("%s box %v: the line step lowered the hole's SSIM from %.3f to %.3f", p.name, box, b, a)
			}
		}
	}
	if fired < 5 {
		t.Fatalf("the line step drew on only %d boxes", fired)
	}
	n := float64(fired)
	t.Logf("drew on %d boxes: hole SSIM %.4f -> %.4f (better on %d, worse on %d)", fired, sumWithout/n, sumWith/n, better, worse)
	if sumWith/n < sumWithout/n+0.005 {
		t.Errorf("mean hole SSIM %.4f with the line step, %.4f without", sumWith/n, sumWithout/n)
	}
}

// TestLinesGrayAndAlpha: the step draws on one-channel and four-channel photos too,
// and keeps an alpha channel as the photo has it beside the line.
func TestLinesGrayAndAlpha(t *testing.T) {
	w, h := 1600, 1200
	rgb, dist := lineImage(w, h, 0.15, 5, 7, always)
	hole := [4]int{700, 420, 900, 780}
	mask := rectMask(w, h, hole)
	for _, nc := range []int{1, 4} {
		img := imaging.New(w, h, nc)
		for i := 0; i < w*h; i++ {
			if nc == 1 {
				img.Pix[i] = rgb.Pix[i*3+1]
				continue
			}
			copy(img.Pix[i*4:], rgb.Pix[i*3:i*3+3])
			img.Pix[i*4+3] = 1
		}
		out, err := Erase(context.Background(), blank(img, mask), mask, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%d channels: %v", nc, err)
		}
		var e float64
		n := 0
		for y := hole[1]; y < hole[3]; y++ {
			for x := hole[0]; x < hole[2]; x++ {
				if nc == 4 && math.Abs(float64(out.At(x, y, 3))-1) > 1e-3 {
					t.Fatalf("4 channels: alpha %.3f at (%d,%d)", out.At(x, y, 3), x, y)
				}
				if math.Abs(dist(x, y)) < 3 {
					e += math.Abs(float64(out.At(x, y, 0) - img.At(x, y, 0)))
					n++
				}
			}
		}
		if e /= float64(n); e > 0.12 {
			t.Errorf("%d channels: mean error along the line %.3f", nc, e)
		}
	}
}
