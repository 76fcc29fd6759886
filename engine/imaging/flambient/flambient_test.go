package flambient

import (
	"context"
	"flag"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var (
	lookDir    = flag.String("look", "", "write each pair (ambient | flash | blend) as JPEG into this folder, to look at")
	lookShrink = flag.Int("look-shrink", 4, "with -look: shrink the pairs by this factor first")
)

var pairs = [][2]string{
	{"kitchenB_16mm_ambient__clean-edge-0004.jpg", "kitchenB_16mm_flash__clean-edge-0006.jpg"},
	{"kitchenD_20mm_ambient__clean-edge-0014.jpg", "kitchenD_20mm_flash__clean-edge-0015.jpg"},
	{"kitchenE_14mm_ambient__clean-edge-0017.jpg", "kitchenE_14mm_flash__clean-edge-0018.jpg"},
	{"kitchenH_25mm_ambient__clean-edge-0029.jpg", "kitchenH_25mm_flash__clean-edge-0030.jpg"},
}

func writeJPEG(t *testing.T, path string, m *imaging.Image) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := jpeg.Encode(f, m.ToNRGBA(), &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
}

func TestLookAtPairs(t *testing.T) {
	if *lookDir == "" {
		t.Skip("no -look folder")
	}
	for _, p := range pairs {
		a := imagingtest.Shrink(imagingtest.LoadPhoto(t, "flambient", p[0]), *lookShrink)
		f := imagingtest.Shrink(imagingtest.LoadPhoto(t, "flambient", p[1]), *lookShrink)
		out := a.Clone()
		rep, err := Blend(context.Background(), out, []*imaging.Image{f})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %+v", p[0][:8], rep)
		writeJPEG(t, filepath.Join(*lookDir, p[0][:8]+".jpg"), row(a, f, out))
	}
}

// row puts images of one size side by side.
func row(ims ...*imaging.Image) *imaging.Image {
	w, h := ims[0].W(), ims[0].H()
	out := imaging.New(len(ims)*w, h, 3)
	for i, m := range ims {
		for y := range h {
			copy(out.Row(y)[i*w*3:(i+1)*w*3], m.Row(y))
		}
	}
	return out
}

// scene renders a synthetic flambient pair of a textured grey room: the ambient lit
// warm, brighter to the right (a window's light), with a clipped window; the flash
// neutral and even, with a hard shadow band the ambient does not have, a specular
// hot spot, and the view through the window.
func scene(w, h int) (amb, flash *imaging.Image) {
	amb, flash = imaging.New(w, h, 3), imaging.New(w, h, 3)
	for y := range h {
		ar, fr := amb.Row(y), flash.Row(y)
		for x := range w {
			refl := float32(0.5)
			if (x/6+y/6)%2 == 0 {
				refl = 0.4 // a fine texture both frames show
			}
			light := 0.15 + 0.5*float32(x)/float32(w)
			a := [3]float32{refl * light * 1.25, refl * light, refl * light * 0.7}
			f := [3]float32{refl * 0.8, refl * 0.8, refl * 0.8}
			switch {
			case x >= 300 && x < 380 && y >= 50 && y < 150: // the window
				v := float32(0.15 + 0.1*float32((x/3)%2))
				a = [3]float32{1, 1, 1}
				f = [3]float32{v * 0.7, v, v * 0.6}
			case x >= 100 && x < 112: // the flash's shadow band
				f = [3]float32{f[0] * 0.15, f[1] * 0.15, f[2] * 0.15}
			case (x-200)*(x-200)+(y-220)*(y-220) < 36: // the flash's reflection
				f = [3]float32{1, 1, 1}
			}
			copy(ar[x*3:x*3+3], a[:])
			copy(fr[x*3:x*3+3], f[:])
		}
	}
	return amb, flash
}

// meanAt is the mean RGB over a square of radius r around x, y.
func meanAt(m *imaging.Image, x, y, r int) [3]float64 {
	var s [3]float64
	n := 0.0
	for yy := y - r; yy <= y+r; yy++ {
		row := m.Row(yy)
		for xx := x - r; xx <= x+r; xx++ {
			for c := range 3 {
				s[c] += float64(row[xx*3+c])
			}
			n++
		}
	}
	for c := range 3 {
		s[c] /= n
	}
	return s
}

func lum64(p [3]float64) float64 { return 0.2126*p[0] + 0.7152*p[1] + 0.0722*p[2] }

func TestBlendSyntheticRoom(t *testing.T) {
	amb, flash := scene(400, 300)
	out := amb.Clone()
	rep, err := Blend(context.Background(), out, []*imaging.Image{flash})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", rep)
	// Colour from the flash: the room's grey is grey, not the ambient's warm.
	for _, x := range []int{40, 160, 260} {
		p := meanAt(out, x, 250, 6)
		if p[0]/p[1] > 1.05 || p[0]/p[1] < 0.95 || p[2]/p[1] < 0.93 || p[2]/p[1] > 1.07 {
			t.Errorf("x=%d: colour %.3f, not neutral", x, p)
		}
	}
	// Light from the ambient: brighter to the right, as the ambient is.
	l, r := lum64(meanAt(out, 40, 250, 6)), lum64(meanAt(out, 260, 250, 6))
	al, ar := lum64(meanAt(amb, 40, 250, 6)), lum64(meanAt(amb, 260, 250, 6))
	if r/l < math.Pow(ar/al, 0.5) {
		t.Errorf("light right/left %.2f, ambient %.2f", r/l, ar/al)
	}
	// Detail from the flash: the texture stays.
	if a, b := lum64(meanAt(out, 152, 250, 2)), lum64(meanAt(out, 158, 250, 2)); math.Abs(a-b)/(a+b) < 0.05 {
		t.Errorf("texture lost: %.3f %.3f", a, b)
	}
	// The flash's shadow band is filled from the ambient.
	in, beside := lum64(meanAt(out, 106, 250, 3)), lum64(meanAt(out, 92, 250, 3))
	if in < 0.7*beside {
		t.Errorf("flash shadow kept: %.3f beside %.3f", in, beside)
	}
	// The hot spot is gone.
	if spot, near := lum64(meanAt(out, 200, 220, 2)), lum64(meanAt(out, 215, 220, 3)); spot > 1.5*near {
		t.Errorf("hot spot kept: %.3f near %.3f", spot, near)
	}
	// The window shows the view (the flash frame's), not the ambient's white.
	p := meanAt(out, 340, 100, 10)
	if max(p[0], p[1], p[2]) > 0.9 || p[1] < p[0] {
		t.Errorf("window %.3f", p)
	}
	if a, b := lum64(meanAt(out, 340, 100, 0)), lum64(meanAt(out, 343, 100, 0)); math.Abs(a-b) < 0.02 {
		t.Errorf("the window's view is flat: %.3f %.3f", a, b)
	}
}

// Several flash frames are combined: the lightest for the room, so a shadow one
// flash casts the other lights is no shadow.
func TestBlendSeveralFlashes(t *testing.T) {
	amb, f1 := scene(400, 300)
	_, f2 := scene(400, 300)
	for y := range 300 {
		r := f2.Row(y)
		for x := 100; x < 112; x++ {
			for c := range 3 {
				r[x*3+c] = 0.4 // the second flash lights the band
			}
		}
	}
	out := amb.Clone()
	if _, err := Blend(context.Background(), out, []*imaging.Image{f1, f2.Narrow()}); err != nil {
		t.Fatal(err)
	}
	in, beside := lum64(meanAt(out, 106, 250, 3)), lum64(meanAt(out, 92, 250, 3))
	if in < 0.7*beside {
		t.Errorf("band %.3f beside %.3f", in, beside)
	}
}

func TestBlendRefusesAndCancels(t *testing.T) {
	amb, flash := scene(200, 150)
	if _, err := Blend(context.Background(), amb, nil); err == nil {
		t.Error("blended without a flash frame")
	}
	if _, err := Blend(context.Background(), amb, []*imaging.Image{imaging.New(20, 20, 3)}); err == nil {
		t.Error("blended frames of different sizes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Blend(ctx, amb, []*imaging.Image{flash}); err != context.Canceled {
		t.Errorf("cancelled blend: %v", err)
	}
}

// BenchmarkBlend12MP blends a 12 MP pair (the kitchen pairs' size), the flash frame
// held as 8-bit codes as the pipeline holds it.
func BenchmarkBlend12MP(b *testing.B) {
	amb, flash := scene(4250, 2828)
	fl := flash.Narrow()
	out := amb.Clone()
	b.ResetTimer()
	for range b.N {
		copy(out.Pix, amb.Pix)
		if _, err := Blend(context.Background(), out, []*imaging.Image{fl}); err != nil {
			b.Fatal(err)
		}
	}
}
