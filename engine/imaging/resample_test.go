package imaging

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"testing"

	"github.com/porchlight/porchlight/internal/testphotos"
)

func TestFitWithin(t *testing.T) {
	for _, c := range []struct{ w, h, edge, ww, wh int }{
		{5616, 3744, 2048, 2048, 1365},
		{3024, 4032, 2048, 1536, 2048},
		{800, 600, 2048, 800, 600}, // never enlarges
		{2048, 2048, 2048, 2048, 2048},
		{10000, 3, 100, 100, 1}, // never zero
		{100, 50, 0, 100, 50},
	} {
		if w, h := FitWithin(c.w, c.h, c.edge); w != c.ww || h != c.wh {
			t.Errorf("FitWithin(%d, %d, %d) = %d, %d, want %d, %d", c.w, c.h, c.edge, w, h, c.ww, c.wh)
		}
	}
}

func TestResizeKeepsFlatFields(t *testing.T) {
	for _, c := range []struct{ sw, sh, dw, dh, ch int }{
		{97, 61, 31, 20, 3}, {40, 30, 121, 77, 3}, {64, 64, 1, 1, 1}, {50, 7, 9, 50, 4}, {3, 3, 2, 2, 3},
	} {
		src := New(c.sw, c.sh, c.ch)
		for i := range src.Pix {
			src.Pix[i] = []float32{0.25, 0.5, 0.75, 1}[i%c.ch]
		}
		out := Resize(src, c.dw, c.dh)
		if out.W() != c.dw || out.H() != c.dh || out.C != c.ch {
			t.Fatalf("%+v: got %dx%dx%d", c, out.W(), out.H(), out.C)
		}
		for i, v := range out.Pix {
			if want := []float32{0.25, 0.5, 0.75, 1}[i%c.ch]; math.Abs(float64(v-want)) > 1e-5 {
				t.Fatalf("%+v: sample %d = %v, want %v", c, i, v, want)
			}
		}
	}
}

// Premultiplied filtering: transparent pixels, whatever colour they hold, must not tint
// their opaque neighbours.
func TestResizeAlphaDoesNotBleed(t *testing.T) {
	src := New(64, 8, 4)
	for y := 0; y < 8; y++ {
		for x := 0; x < 64; x++ {
			if x < 32 {
				src.Set(x, y, 0, 1) // opaque red
				src.Set(x, y, 3, 1)
			} else {
				src.Set(x, y, 1, 1) // transparent green
			}
		}
	}
	out := Resize(src, 16, 2)
	for x := 0; x < 16; x++ {
		if a := out.At(x, 0, 3); a > 0.01 && out.At(x, 0, 1) > 0.01 {
			t.Fatalf("pixel %d (alpha %.2f) picked up green %.3f", x, a, out.At(x, 0, 1))
		}
	}
}

func TestResizeIndependentOfWorkers(t *testing.T) {
	src := New(301, 203, 3)
	for i := range src.Pix {
		src.Pix[i] = float32((i*7919)%1000) / 1000
	}
	prev := runtime.GOMAXPROCS(1)
	one := Resize(src, 120, 80)
	runtime.GOMAXPROCS(4)
	four := Resize(src, 120, 80)
	runtime.GOMAXPROCS(prev)
	for i := range one.Pix {
		if one.Pix[i] != four.Pix[i] {
			t.Fatalf("sample %d differs between 1 and 4 workers", i)
		}
	}
}

// Allocation does not grow with the image: only the output, one intermediate and the
// filter tables are allocated, never inside the pixel loops.
func TestResizeAllocations(t *testing.T) {
	small, big := New(200, 150, 3), New(1600, 1200, 3)
	a := testing.AllocsPerRun(3, func() { Resize(small, 90, 60) })
	b := testing.AllocsPerRun(3, func() { Resize(big, 720, 480) })
	if b > a+2 || b > 40 {
		t.Errorf("allocations: %v for a small image, %v for a large one", a, b)
	}
}

// A real photo downscaled in linear light matches ImageMagick's Lanczos resize done in
// linear RGB.
func TestResizeMatchesImageMagickLinearLanczos(t *testing.T) {
	if _, err := exec.LookPath("convert"); err != nil {
		t.Skip("ImageMagick not installed")
	}
	p := testphotos.Path(t, "brackets", "memorial_church_debevec", "memorial0066.png")
	f, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := png.Decode(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	src := FromImage(m, false)
	for _, size := range [][2]int{{200, 300}, {371, 557}, {900, 1350}} {
		out := filepath.Join(t.TempDir(), "ref.png")
		geom := strconv.Itoa(size[0]) + "x" + strconv.Itoa(size[1]) + "!"
		cmd := exec.Command("convert", p, "-colorspace", "RGB", "-filter", "Lanczos", "-resize", geom,
			"-colorspace", "sRGB", "-depth", "16", "PNG48:"+out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("convert: %v %s", err, b)
		}
		rb, _ := os.ReadFile(out)
		rm, err := png.Decode(bytes.NewReader(rb))
		if err != nil {
			t.Fatal(err)
		}
		ref := FromImage(rm, false)
		got := Resize(src, size[0], size[1])
		var sum float64
		for i := range got.Pix {
			sum += math.Abs(float64(Encode8(got.Pix[i])) - float64(Encode8(ref.Pix[i])))
		}
		d := sum / float64(len(got.Pix))
		t.Logf("%v: mean difference from ImageMagick %.3f codes", size, d)
		if d > 0.2 {
			t.Errorf("%v: mean difference from ImageMagick %.3f codes", size, d)
		}
	}
}

func BenchmarkResize21MPTo2048(b *testing.B) {
	src := New(5616, 3744, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i%251) / 251
	}
	w, h := FitWithin(5616, 3744, 2048)
	b.ReportAllocs()
	for b.Loop() {
		Resize(src, w, h)
	}
}

// The export path's resize: a half-scale DCT decode of a 21 MP photo fitted to 2048.
func BenchmarkResizeHalf21MPTo2048(b *testing.B) {
	src := New(2808, 1872, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i%251) / 251
	}
	b.ReportAllocs()
	for b.Loop() {
		Resize(src, 2048, 1365)
	}
}

func TestResizeFuncMatchesResize(t *testing.T) {
	for _, c := range []int{1, 3, 4} {
		src := New(173, 91, c)
		for i := range src.Pix {
			src.Pix[i] = float32((i*7919)%1000) / 1000
		}
		want := Resize(src, 64, 40)
		got := ResizeFunc(173, 91, c, 64, 40, func(y int, buf []float32) { copy(buf, src.Row(y)) })
		for i := range want.Pix {
			if math.Abs(float64(got.Pix[i]-want.Pix[i])) > 1e-6 {
				t.Fatalf("%d channels: sample %d = %v, Resize gives %v", c, i, got.Pix[i], want.Pix[i])
			}
		}
	}
}

// ResizeCtx gives Resize's pixels, and the context's error once it is done.
func TestResizeCtx(t *testing.T) {
	src := New(300, 200, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i%97) / 97
	}
	got, err := ResizeCtx(context.Background(), src, 120, 80)
	if err != nil {
		t.Fatal(err)
	}
	if want := Resize(src, 120, 80); !slices.Equal(got.Pix, want.Pix) {
		t.Fatal("ResizeCtx differs from Resize")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if out, err := ResizeCtx(ctx, src, 120, 80); !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("a cancelled context: %v", err)
	}
}
