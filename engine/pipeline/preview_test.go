package pipeline

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/adjust"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// meanCodeDiff is the mean absolute difference of a and b in 8-bit sRGB codes.
func meanCodeDiff(t *testing.T, a, b *imaging.Image) float64 {
	t.Helper()
	if !imaging.SameSize(a, b) {
		t.Fatalf("sizes %dx%d and %dx%d", a.W(), a.H(), b.W(), b.H())
	}
	var s float64
	for y := range a.H() {
		ra, rb := a.Row(y), b.Row(y)
		for x := range a.W() {
			for c := range 3 {
				s += math.Abs(float64(imaging.Encode8(ra[x*a.C+c])) - float64(imaging.Encode8(rb[x*b.C+c])))
			}
		}
	}
	return s / float64(3*a.W()*a.H())
}

// With PreviewDir set every order keeps its working image from before the sliders:
// the base of an order at exposure +1 looks like the delivery at 0, and the preview
// of +1 over it like the delivery at +1.
func TestPreviewBaseKeptBeforeSliders(t *testing.T) {
	dir := t.TempDir()
	p := New(Config{Logger: quiet(), PreviewDir: dir})
	kimC := []string{"brackets", "house_interior_kim", "C.jpg"}
	plain, _ := runOrder(t, p, "plain", core.Options{}, kimC)
	lifted, _ := runOrder(t, p, "lifted", core.Options{Exposure: ptr(1.0), Shadows: ptr(30.0)}, kimC)

	for _, id := range []string{"plain", "lifted"} {
		if _, err := LoadPreviewBase(dir, id); err != nil {
			t.Fatalf("%s: %v", id, err)
		}
	}
	base, err := LoadPreviewBase(dir, "lifted")
	if err != nil {
		t.Fatal(err)
	}
	// The deliveries are JPEGs (quality 92): a code or two apart from the base at
	// the same settings, many from the other settings.
	same, other := meanCodeDiff(t, base, plain), meanCodeDiff(t, base, lifted)
	t.Logf("base vs delivery at 0: %.2f codes, at +1: %.2f", same, other)
	if same > 2.5 || other < 10 {
		t.Errorf("the base of the +1 order is %.2f codes from the delivery at 0, %.2f from +1", same, other)
	}
	pv, err := adjust.NewPreview(base)
	if err != nil {
		t.Fatal(err)
	}
	shown, err := pv.Render(adjust.Settings{Exposure: 1, Shadows: 30})
	if err != nil {
		t.Fatal(err)
	}
	if d := meanCodeDiff(t, imaging.FromImage(shown, false), lifted); d > 2.5 {
		t.Errorf("the preview of +1 is %.2f codes from the delivery at +1", d)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 2 {
		t.Errorf("preview folder holds %d files, want the two bases", len(ents))
	}
}

// A large photo's base is reduced to 2048 px and reads back as written, within a
// 16-bit code; a missing base or an id that is no file name is refused.
func TestPreviewBaseRoundTrip(t *testing.T) {
	src := decodeFile(t, testphotos.Path(t, library...))
	dir := t.TempDir()
	ctx := context.Background()
	start := time.Now()
	if err := WritePreviewBase(ctx, dir, "o1", src); err != nil {
		t.Fatal(err)
	}
	wrote := time.Since(start)
	start = time.Now()
	got, err := LoadPreviewBase(dir, "o1")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%dx%d: written in %v, read in %v", src.W(), src.H(), wrote, time.Since(start))
	want, err := adjust.PreviewBase(ctx, src, adjust.PreviewEdge)
	if err != nil {
		t.Fatal(err)
	}
	if got.W() != 2048 || got.H() != 1152 || !imaging.SameSize(got, want) {
		t.Fatalf("base is %dx%d", got.W(), got.H())
	}
	for i, v := range want.Pix {
		if d := math.Abs(float64(imaging.LinearToSRGB(v) - imaging.LinearToSRGB(got.Pix[i]))); d > 1.0/65535 {
			t.Fatalf("sample %d: wrote %v, read %v", i, v, got.Pix[i])
		}
	}
	if _, err := LoadPreviewBase(dir, "o2"); !errors.Is(err, ErrNoPreviewBase) {
		t.Errorf("missing base: %v", err)
	}
	for _, id := range []string{"", "../o1", `a\b`, ".hidden"} {
		if err := WritePreviewBase(ctx, dir, id, src); err == nil {
			t.Errorf("order id %q accepted", id)
		}
	}
	if err := RemovePreviewBase(dir, "o1"); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d files left after removing the base", len(ents))
	}
}

// BenchmarkWritePreviewBase21MP keeps the preview base of a 21 MP working image, as
// an order does before its sliders (target: under about 150 ms).
func BenchmarkWritePreviewBase21MP(b *testing.B) {
	src := decodeFile(b, testphotos.Path(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"))
	dir := b.TempDir()
	ctx := context.Background()
	b.ReportAllocs()
	cpu, n := imagingtest.ProcessCPU(), 0
	for b.Loop() {
		if err := WritePreviewBase(ctx, dir, "office", src); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(imagingtest.ProcessCPU()-cpu)/float64(n)/1e6, "cpu-ms/op")
}

// BenchmarkLoadPreviewBase reads a 2048 px base back, as the window does when a
// photo is opened for its sliders.
func BenchmarkLoadPreviewBase(b *testing.B) {
	src := decodeFile(b, testphotos.Path(b, "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG"))
	dir := b.TempDir()
	if err := WritePreviewBase(context.Background(), dir, "office", src); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu, n := imagingtest.ProcessCPU(), 0
	for b.Loop() {
		if _, err := LoadPreviewBase(dir, "office"); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(imagingtest.ProcessCPU()-cpu)/float64(n)/1e6, "cpu-ms/op")
}
