package inpaint

import (
	"context"
	"errors"
	"image"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// wallPhoto is a real interior, shrunk by 2 to keep tests quick.
func wallPhoto(tb testing.TB) *imaging.Image {
	tb.Helper()
	m := loadPhoto(tb, "interiors", "houses_109_bedroom.jpg")
	return imaging.Resize(m, m.W()/2, m.H()/2)
}

func discMask(w, h int, cx, cy, r float64) *imaging.Image {
	m := imaging.New(w, h, 1)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if math.Hypot(float64(x)-cx, float64(y)-cy) <= r {
				m.Pix[y*w+x] = 1
			}
		}
	}
	return m
}

func TestMaskErrors(t *testing.T) {
	img := stripes(120, 80, 1)
	full := imaging.New(120, 80, 1)
	for i := range full.Pix {
		full.Pix[i] = 1
	}
	ninety := imaging.New(120, 80, 1)
	for i := range ninety.Pix {
		if i%20 != 0 { // 95% marked
			ninety.Pix[i] = 1
		}
	}
	half := imaging.New(120, 80, 1)
	for i := range half.Pix {
		half.Pix[i] = 0.5 // not above the threshold
	}
	cases := []struct {
		name string
		img  *imaging.Image
		mask *imaging.Image
		want error
	}{
		{"nil image", nil, rectMask(120, 80, [4]int{10, 10, 20, 20}), ErrBadImage},
		{"two channels", imaging.New(120, 80, 2), rectMask(120, 80, [4]int{10, 10, 20, 20}), ErrBadImage},
		{"tiny image", imaging.New(6, 6, 3), rectMask(6, 6, [4]int{1, 1, 3, 3}), ErrBadImage},
		{"short buffer", &imaging.Image{Pix: make([]float32, 10), Stride: 360, C: 3, Rect: image.Rect(0, 0, 120, 80)}, rectMask(120, 80, [4]int{10, 10, 20, 20}), ErrBadImage},
		{"nil mask", img, nil, ErrBadMask},
		{"colour mask", img, imaging.New(120, 80, 3), ErrBadMask},
		{"other aspect", img, rectMask(100, 80, [4]int{10, 10, 20, 20}), ErrMaskAspect},
		{"empty", img, imaging.New(120, 80, 1), ErrEmptyMask},
		{"only 0.5", img, half, ErrEmptyMask},
		{"everything", img, full, ErrMaskTooLarge},
		{"95 percent", img, ninety, ErrMaskTooLarge},
	}
	for _, c := range cases {
		_, err := Erase(context.Background(), c.img, c.mask, Options{})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

// TestMaskResizedByNearestNeighbour: a mask of another size but the same aspect ratio
// (within 1%) acts exactly like its nearest-neighbour enlargement.
func TestMaskResizedByNearestNeighbour(t *testing.T) {
	img := stripes(240, 160, 2)
	small := rectMask(61, 40, [4]int{20, 12, 35, 25}) // 1.525 vs 1.5: 1.7% off
	if _, err := Erase(context.Background(), img, small, Options{}); !errors.Is(err, ErrMaskAspect) {
		t.Fatalf("61x40 mask on 240x160: got %v, want ErrMaskAspect", err)
	}
	small = rectMask(121, 80, [4]int{40, 25, 70, 50}) // 1.5125 vs 1.5: 0.8% off
	big := imaging.New(240, 160, 1)
	for y := 0; y < 160; y++ {
		for x := 0; x < 240; x++ {
			big.Pix[y*240+x] = small.Pix[int((float64(y)+0.5)*80/160)*121+int((float64(x)+0.5)*121/240)]
		}
	}
	a, err := Erase(context.Background(), img, small, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Erase(context.Background(), img, big, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.Pix, b.Pix) {
		t.Fatal("a resized mask gave other pixels than its nearest-neighbour enlargement")
	}
}

// TestOnlyTheGrownHoleChanges: pixels farther from the mask than the growth are
// returned bit for bit, the mask itself is entirely new, and the inputs are left
// alone.
func TestOnlyTheGrownHoleChanges(t *testing.T) {
	img := wallPhoto(t)
	w, h := img.W(), img.H()
	mask := holeShapes(w, h, 0.05, 2, 9)
	in := blank(img, mask)
	inCopy, maskCopy := slices.Clone(in.Pix), slices.Clone(mask.Pix)
	out, err := Erase(context.Background(), in, mask, Options{Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(in.Pix, inCopy) || !slices.Equal(mask.Pix, maskCopy) {
		t.Fatal("Erase modified its inputs")
	}
	if out.Rect != in.Rect || out.C != in.C {
		t.Fatalf("output %v/%d channels, input %v/%d", out.Rect, out.C, in.Rect, in.C)
	}
	hole := make([]bool, w*h)
	for i, v := range mask.Pix {
		hole[i] = v > 0.5
	}
	toHole := imaging.Chamfer(hole, w, h, false)
	grow := int32(3 * growPixels(w, h))
	changed, black := 0, 0
	for i := range hole {
		px, was := out.Pix[3*i:3*i+3], in.Pix[3*i:3*i+3]
		switch {
		case toHole[i] > grow:
			if !slices.Equal(px, was) {
				t.Fatalf("pixel %d,%d outside the grown hole changed", i%w, i/w)
			}
		case hole[i]:
			changed++
			if px[0]+px[1]+px[2] < 0.01 {
				black++
			}
		}
	}
	if black > changed/100 {
		t.Fatalf("%d of %d hole pixels are still black", black, changed)
	}
}

// TestRemovesAnObject pastes a red disc with a soft edge onto a real wall and erases
// it with a mask that stops where the disc becomes faint: no red may remain, and the
// fill must be close to the wall that was there.
func TestRemovesAnObject(t *testing.T) {
	img := wallPhoto(t)
	w, h := img.W(), img.H()
	cx, cy, r := float64(w)*0.35, float64(h)*0.3, 22.0
	withDisc := img.Clone()
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			a := math.Min(1, math.Max(0, r+0.75-math.Hypot(float64(x)-cx, float64(y)-cy)))
			if a > 0 {
				o := y*withDisc.Stride + 3*x
				withDisc.Pix[o] = float32(a)*0.8 + float32(1-a)*withDisc.Pix[o]
				withDisc.Pix[o+1] *= float32(1 - a)
				withDisc.Pix[o+2] *= float32(1 - a)
			}
		}
	}
	// Mask out to where the disc is more than half opaque; the fringe is left to the
	// growth.
	out, err := Erase(context.Background(), withDisc, discMask(w, h, cx, cy, r+0.25), Options{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var diff float64
	n := 0
	for y := int(cy - r - 3); y <= int(cy+r+3); y++ {
		for x := int(cx - r - 3); x <= int(cx+r+3); x++ {
			o := y*out.Stride + 3*x
			// Red left over from the disc: more red against green than the wall has.
			if excess := (out.Pix[o] - out.Pix[o+1]) - (img.Pix[o] - img.Pix[o+1]); excess > 0.08 {
				t.Fatalf("pixel %d,%d is still red: %v, the wall was %v", x, y, out.Pix[o:o+3], img.Pix[o:o+3])
			}
			if math.Hypot(float64(x)-cx, float64(y)-cy) <= r {
				for c := 0; c < 3; c++ {
					diff += math.Abs(float64(imaging.Encode8(out.Pix[o+c])) - float64(imaging.Encode8(img.Pix[o+c])))
				}
				n += 3
			}
		}
	}
	if mean := diff / float64(n); mean > 12 {
		t.Fatalf("the fill differs from the wall by %.1f levels on average", mean)
	}
}

// TestDeterministic: the same seed gives the same pixels whatever the number of
// workers; another seed gives other pixels.
func TestDeterministic(t *testing.T) {
	img := wallPhoto(t)
	mask := holeShapes(img.W(), img.H(), 0.08, 2, 5)
	run := func(procs int, seed int64) []float32 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		out, err := Erase(context.Background(), img, mask, Options{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return out.Pix
	}
	a := run(1, 11)
	for _, procs := range []int{2, 3, 8} {
		if !slices.Equal(a, run(procs, 11)) {
			t.Fatalf("GOMAXPROCS %d gave other pixels than GOMAXPROCS 1", procs)
		}
	}
	if slices.Equal(a, run(2, 12)) {
		t.Fatal("seeds 11 and 12 gave the same pixels")
	}
}

// TestOtherLayouts: gray and RGBA images, a non-zero origin, a hole touching the
// border, and non-finite samples in the photo all give a finite fill.
func TestOtherLayouts(t *testing.T) {
	rgb := wallPhoto(t)
	w, h := rgb.W(), rgb.H()
	gray := imaging.New(w, h, 1)
	rgba := imaging.New(w, h, 4)
	for i := 0; i < w*h; i++ {
		gray.Pix[i] = rgb.Pix[3*i+1]
		copy(rgba.Pix[4*i:], rgb.Pix[3*i:3*i+3])
		rgba.Pix[4*i+3] = 1
	}
	shifted := rgb.Clone()
	shifted.Rect = shifted.Rect.Add(image.Pt(10, 20))
	poisoned := rgb.Clone()
	for i := 0; i < len(poisoned.Pix); i += 997 {
		poisoned.Pix[i] = float32(math.NaN())
	}
	poisoned.Pix[5] = float32(math.Inf(1))
	edge := rectMask(w, h, [4]int{0, h / 3, w / 6, h/3 + 40})
	inner := holeShapes(w, h, 0.04, 1, 3)
	for _, c := range []struct {
		name string
		img  *imaging.Image
		mask *imaging.Image
	}{
		{"gray", gray, inner}, {"rgba", rgba, inner}, {"offset origin", shifted, inner},
		{"edge hole", rgb, edge}, {"non-finite", poisoned, inner},
	} {
		out, err := Erase(context.Background(), c.img, c.mask, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if out.Rect != c.img.Rect {
			t.Fatalf("%s: output rect %v, want %v", c.name, out.Rect, c.img.Rect)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				if c.mask.Pix[y*w+x] <= 0.5 {
					continue
				}
				for k := 0; k < out.C; k++ {
					if v := out.At(x, y, k); math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) || v < -0.01 || v > 1.5 {
						t.Fatalf("%s: pixel %d,%d channel %d is %v", c.name, x, y, k, v)
					}
				}
			}
		}
	}
}

// TestOddMasks: single pixels, thin lines, holes along every border and masks that
// leave little of the photo either fill or fail with one of the package's errors.
func TestOddMasks(t *testing.T) {
	img := wallPhoto(t)
	w, h := img.W(), img.H()
	line := imaging.New(w, h, 1)
	for x := 10; x < w-10; x++ {
		line.Pix[(h/2+x/40)*w+x] = 1
	}
	frame := imaging.New(w, h, 1)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			if x < 4 || y < 4 || x >= w-4 || y >= h-4 {
				frame.Pix[y*w+x] = 1
			}
		}
	}
	most := rectMask(w, h, [4]int{0, 0, w, h * 85 / 100})
	for _, c := range []struct {
		name string
		mask *imaging.Image
		ok   bool
	}{
		{"one pixel", rectMask(w, h, [4]int{w / 2, h / 2, w/2 + 1, h/2 + 1}), true},
		{"corner pixel", rectMask(w, h, [4]int{0, 0, 1, 1}), true},
		{"thin line", line, true},
		{"frame", frame, true},
		{"85 percent", most, true},
	} {
		out, err := Erase(context.Background(), img, c.mask, Options{Seed: 3})
		if err != nil {
			if c.ok || !errors.Is(err, ErrMaskTooLarge) {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		for i, v := range out.Pix {
			if math.IsNaN(float64(v)) || v < -0.01 || v > 1.5 {
				t.Fatalf("%s: sample %d is %v", c.name, i, v)
			}
		}
	}
}

// FuzzErase: any mask on a small photo gives a result or an error, never a panic.
func FuzzErase(f *testing.F) {
	f.Add([]byte{0x00, 0x10, 0xff}, int64(1))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, int64(2))
	f.Add([]byte{0x80}, int64(3))
	img := stripes(40, 30, 5)
	f.Fuzz(func(t *testing.T, bits []byte, seed int64) {
		mask := imaging.New(40, 30, 1)
		for i := range mask.Pix {
			if len(bits) > 0 && bits[(i/8)%len(bits)]>>(i%8)&1 == 1 {
				mask.Pix[i] = 1
			}
		}
		out, err := Erase(context.Background(), img, mask, Options{Seed: seed})
		if err != nil {
			if !errors.Is(err, ErrEmptyMask) && !errors.Is(err, ErrMaskTooLarge) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if out.W() != 40 || out.H() != 30 {
			t.Fatalf("output %dx%d", out.W(), out.H())
		}
	})
}

// A cancel stops the fill in whichever phase it reaches: each progress report in
// turn cancels a run, and every such run returns the context's error and no image.
func TestEraseStopsOnCancel(t *testing.T) {
	img := wallPhoto(t)
	mask := holeShapes(img.W(), img.H(), 0.05, 2, 9)
	in := blank(img, mask)
	reports := 0
	opt := Options{Seed: 1, Progress: func(float64) { reports++ }}
	if _, err := Erase(context.Background(), in, mask, opt); err != nil {
		t.Fatal(err)
	}
	if reports < 3 {
		t.Fatalf("%d progress reports", reports)
	}
	for k := 1; k <= reports; k++ {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		opt.Progress = func(float64) {
			if n++; n == k {
				cancel()
			}
		}
		out, err := Erase(ctx, in, mask, opt)
		cancel()
		if !errors.Is(err, context.Canceled) || out != nil {
			t.Fatalf("cancelled at report %d: %v, image %v", k, err, out != nil)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Erase(ctx, in, mask, Options{Seed: 1}); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

// TestInPlace: filling in place gives the pixels a copy would, in the image itself,
// and a failed or cancelled fill leaves the image as it was.
func TestInPlace(t *testing.T) {
	img := wallPhoto(t)
	mask := holeShapes(img.W(), img.H(), 0.05, 2, 7)
	in := blank(img, mask)
	want, err := Erase(context.Background(), in, mask, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	orig := slices.Clone(in.Pix)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	cancelAt := func(float64) {
		if n++; n == 2 {
			cancel()
		}
	}
	if _, err := Erase(ctx, in, mask, Options{Seed: 1, InPlace: true, Progress: cancelAt}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	if !slices.Equal(in.Pix, orig) {
		t.Fatal("a cancelled fill changed the image")
	}
	got, err := Erase(context.Background(), in, mask, Options{Seed: 1, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Fatal("InPlace returned another image")
	}
	if !slices.Equal(got.Pix, want.Pix) {
		t.Fatal("InPlace gave other pixels than a copy")
	}
}
