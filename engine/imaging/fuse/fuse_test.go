package fuse_test

import (
	"context"
	"errors"
	"flag"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/fuse"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var update = flag.Bool("update", false, "rewrite golden files")

func loadHouse(t testing.TB) []*imaging.Image {
	dir := filepath.Join(testphotos.Dir(t), "brackets", "house_interior_kim")
	var seq []*imaging.Image
	for _, n := range []string{"A.jpg", "B.jpg", "C.jpg", "D.jpg"} {
		seq = append(seq, imagingtest.LoadFile(t, filepath.Join(dir, n)))
	}
	return seq
}

var shrink = imagingtest.Shrink

func TestFuseOrderDoesNotMatter(t *testing.T) {
	seq := loadHouse(t)
	a, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	rev := []*imaging.Image{seq[2], seq[0], seq[3], seq[1]}
	b, err := fuse.Fuse(context.Background(), rev, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var maxd float32
	for i := range a.Pix {
		maxd = max(maxd, float32(math.Abs(float64(a.Pix[i]-b.Pix[i]))))
	}
	if maxd > 1e-6 {
		t.Errorf("permuted input changes the result by up to %g", maxd)
	}
}

func TestFuseOutputRangeAndSize(t *testing.T) {
	if testing.Short() {
		t.Skip("several MEF-SSIM evaluations")
	}
	seq := loadHouse(t)
	out, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if out.W() != seq[0].W() || out.H() != seq[0].H() || out.C != 3 {
		t.Fatalf("output %dx%dx%d", out.W(), out.H(), out.C)
	}
	for _, v := range out.Pix {
		if !(v >= 0 && v <= 1) {
			t.Fatalf("output value %g outside 0..1", v)
		}
	}
	// The fusion must beat every single bracket on MEF-SSIM.
	r, err := quality.MEFSSIM(seq, out, quality.MEFOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{1, 2} { // the two middle brackets, the best single ones
		ri, _ := quality.MEFSSIM(seq, seq[i], quality.MEFOptions{})
		if ri.Score >= r.Score {
			t.Errorf("bracket %d alone scores %.4f, fusion %.4f", i, ri.Score, r.Score)
		}
	}
}

func TestFuseReducedPathMatchesFullPath(t *testing.T) {
	if testing.Short() {
		t.Skip("several MEF-SSIM evaluations")
	}
	// The reduced-resolution path with detail restoration must look like fusing at
	// full size.
	seq := loadHouse(t)
	full, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	o := fuse.DefaultOptions()
	o.MaxWorkPixels = seq[0].W() * seq[0].H() / 4 // forces a factor of 4
	red, err := fuse.Fuse(context.Background(), seq, o)
	if err != nil {
		t.Fatal(err)
	}
	s, err := quality.SSIM(full, red, quality.SSIMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rf, _ := quality.MEFSSIM(seq, full, quality.MEFOptions{})
	rr, _ := quality.MEFSSIM(seq, red, quality.MEFOptions{})
	t.Logf("SSIM full vs reduced %.4f; MEF-SSIM full %.4f reduced %.4f", s, rf.Score, rr.Score)
	if s < 0.93 {
		t.Errorf("reduced path SSIM %.4f against the full path, want >= 0.93", s)
	}
	if rr.Score < rf.Score-0.02 {
		t.Errorf("reduced path MEF-SSIM %.4f, full %.4f", rr.Score, rf.Score)
	}
}

func TestFuseRejectsBadInput(t *testing.T) {
	a := imaging.New(64, 64, 3)
	b := imaging.New(32, 64, 3)
	cases := map[string]struct {
		imgs []*imaging.Image
		opt  fuse.Options
	}{
		"none":      {nil, fuse.DefaultOptions()},
		"nil":       {[]*imaging.Image{a, nil}, fuse.DefaultOptions()},
		"size":      {[]*imaging.Image{a, b}, fuse.DefaultOptions()},
		"channels":  {[]*imaging.Image{a, imaging.New(64, 64, 2)}, fuse.DefaultOptions()},
		"width":     {[]*imaging.Image{a, a}, fuse.Options{ExposureWidth: 0, ClipKnee: 1}},
		"pull":      {[]*imaging.Image{a, a}, func() fuse.Options { o := fuse.DefaultOptions(); o.WindowPull = 2; return o }()},
		"short buf": {[]*imaging.Image{a, {Pix: make([]float32, 10), Stride: 192, C: 3, Rect: a.Rect}}, fuse.DefaultOptions()},
	}
	for name, c := range cases {
		if _, err := fuse.Fuse(context.Background(), c.imgs, c.opt); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	// One image comes back clamped.
	one := imaging.New(8, 8, 3)
	one.Pix[0] = 2
	out, err := fuse.Fuse(context.Background(), []*imaging.Image{one}, fuse.DefaultOptions())
	if err != nil || out.Pix[0] != 1 {
		t.Errorf("single image: %v, first value %v", err, out.Pix[0])
	}
}

// TestFuseGolden compares a reduced fusion of the house scene with the stored result.
func TestFuseGolden(t *testing.T) {
	seq := loadHouse(t)
	for i := range seq {
		seq[i] = shrink(seq[i], 4)
	}
	out, err := fuse.Fuse(context.Background(), seq, fuse.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "house_fused.png")
	if *update {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, out.ToNRGBA()); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	want := imagingtest.LoadFile(t, path)
	s, err := quality.SSIM(want, out, quality.SSIMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var diff float64
	for i := range want.Pix {
		diff += math.Abs(float64(imaging.Encode8(want.Pix[i])) - float64(imaging.Encode8(out.Pix[i])))
	}
	diff /= float64(len(want.Pix))
	if s < 0.995 || diff > 1 {
		t.Errorf("differs from golden: SSIM %.4f, mean difference %.2f codes (rerun with -update if intended)", s, diff)
	}
}

// A cancel stops the fusion in whichever phase it reaches: each progress report in
// turn cancels a run, and every such run returns the context's error and no image,
// at the working size and with the detail restored from a reduced one.
func TestFuseStopsOnCancel(t *testing.T) {
	seq := loadHouse(t)
	for _, maxWork := range []int{0, 60_000} {
		opt := fuse.DefaultOptions()
		opt.MaxWorkPixels = maxWork
		reports := 0
		opt.Progress = func(float64) { reports++ }
		if _, err := fuse.Fuse(context.Background(), seq, opt); err != nil {
			t.Fatal(err)
		}
		if reports < 2 {
			t.Fatalf("max work %d: %d progress reports", maxWork, reports)
		}
		for k := 1; k <= reports; k++ {
			ctx, cancel := context.WithCancel(context.Background())
			n := 0
			opt.Progress = func(float64) {
				if n++; n == k {
					cancel()
				}
			}
			out, err := fuse.Fuse(ctx, seq, opt)
			cancel()
			if !errors.Is(err, context.Canceled) || out != nil {
				t.Fatalf("max work %d, cancelled at report %d: %v, image %v", maxWork, k, err, out != nil)
			}
		}
	}
}
