package align_test

import (
	"context"
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/align"
	"github.com/porchlight/porchlight/engine/imaging/quality"
	"github.com/porchlight/porchlight/internal/imagingtest"
)

var update = flag.Bool("update", false, "rewrite golden files")

var shrink = imagingtest.Shrink

// blur3 is a 3×3 box blur (edges repeated).
func blur3(m *imaging.Image) *imaging.Image {
	out := imaging.New(m.W(), m.H(), m.C)
	for y := 0; y < m.H(); y++ {
		for x := 0; x < m.W(); x++ {
			for c := 0; c < m.C; c++ {
				var s float32
				for dy := -1; dy <= 1; dy++ {
					for dx := -1; dx <= 1; dx++ {
						s += m.At(min(max(x+dx, 0), m.W()-1), min(max(y+dy, 0), m.H()-1), c)
					}
				}
				out.Set(x, y, c, s/9)
			}
		}
	}
	return out
}

// crop returns the inner part of m, margin pixels in from every side.
func crop(m *imaging.Image, margin int) *imaging.Image {
	out := imaging.New(m.W()-2*margin, m.H()-2*margin, m.C)
	for y := 0; y < out.H(); y++ {
		copy(out.Row(y), m.Row(y + margin)[margin*m.C:(margin+out.W())*m.C])
	}
	return out
}

// TestWarpInverseRoundTrip is the property test of the geometry: warping by a random
// near-identity homography and then by its inverse gives the image back, up to the
// softening of two bilinear resamplings, away from the borders.
func TestWarpInverseRoundTrip(t *testing.T) {
	// Band-limited first: bilinear resampling is only exact for smooth images, and the
	// property under test is the geometry, not the interpolation kernel.
	img := blur3(blur3(shrink(loadPhoto(t, "brackets", "library_phone", "20240401_185036.JPG"), 8)))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 8; i++ {
		th := (rng.Float64() - 0.5) * 4 * math.Pi / 180
		s := 1 + (rng.Float64()-0.5)*0.04
		m := align.Mat3{
			s * math.Cos(th), -s * math.Sin(th), (rng.Float64() - 0.5) * 10,
			s * math.Sin(th), s * math.Cos(th), (rng.Float64() - 0.5) * 10,
			(rng.Float64() - 0.5) * 2e-5, (rng.Float64() - 0.5) * 2e-5, 1,
		}
		if i%3 == 0 { // pure translations take the separable path
			m = align.Translation((rng.Float64()-0.5)*20, (rng.Float64()-0.5)*20)
		}
		inv, ok := m.Inverse()
		if !ok {
			t.Fatal("singular")
		}
		p := m.Mul(inv)
		for k := range p {
			p[k] /= p[8]
		}
		if math.Abs(p[0]-1) > 1e-9 || math.Abs(p[1]) > 1e-9 || math.Abs(p[2]) > 1e-6 || math.Abs(p[6]) > 1e-12 {
			t.Fatalf("m·m⁻¹ = %v", p)
		}
		back := warp(t, warp(t, img, align.Transform{M: m}), align.Transform{M: inv})
		a, b := crop(img, 40), crop(back, 40)
		ssim, err := quality.SSIM(a, b, quality.SSIMOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var diff float64
		for k := range a.Pix {
			diff += math.Abs(float64(imaging.LinearToSRGB(a.Pix[k]) - imaging.LinearToSRGB(b.Pix[k])))
		}
		diff /= float64(len(a.Pix))
		if ssim < 0.98 || diff > 0.006 {
			t.Errorf("case %d %v: round trip SSIM %.4f, mean difference %.4f", i, m, ssim, diff)
		}
	}
}

// TestAlignGolden compares the transforms found for the phone library set with the
// stored ones (where the frame corners land, within 0.3 px).
func TestAlignGolden(t *testing.T) {
	if testing.Short() {
		t.Skip("full-size phone brackets")
	}
	imgs := loadScene(t, "library_phone")
	ts, err := align.Estimate(context.Background(), imgs, align.ReferenceIndex(imgs), align.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, h := float64(imgs[0].W()-1), float64(imgs[0].H()-1)
	pts := [][2]float64{{0, 0}, {w, 0}, {0, h}, {w, h}, {w / 2, h / 2}}
	got := make([][][2]float64, len(ts))
	for i, tr := range ts {
		for _, p := range pts {
			x, y := tr.M.Apply(p[0], p[1])
			dx, dy := tr.Mesh.At(p[0], p[1])
			got[i] = append(got[i], [2]float64{x + dx, y + dy})
		}
	}
	path := filepath.Join("testdata", "library_corners.json")
	var want [][][2]float64
	imagingtest.GoldenJSON(t, path, got, &want, *update)
	for i := range want {
		for j := range want[i] {
			if d := math.Hypot(got[i][j][0]-want[i][j][0], got[i][j][1]-want[i][j][1]); d > 0.3 {
				t.Errorf("bracket %d point %d: %v, golden %v (rerun with -update if intended)", i, j, got[i][j], want[i][j])
			}
		}
	}
}

func TestAlignRejectsBadInput(t *testing.T) {
	a := imaging.New(100, 100, 3)
	if _, _, err := align.Align(context.Background(), nil, 0, align.Options{}); err == nil {
		t.Error("no images accepted")
	}
	if _, _, err := align.Align(context.Background(), []*imaging.Image{a, a}, 2, align.Options{}); err == nil {
		t.Error("reference out of range accepted")
	}
	if _, _, err := align.Align(context.Background(), []*imaging.Image{a, imaging.New(90, 100, 3)}, 0, align.Options{}); err == nil {
		t.Error("size mismatch accepted")
	}
	if _, _, err := align.Align(context.Background(), []*imaging.Image{a, imaging.New(20, 20, 3)}, 0, align.Options{}); err == nil {
		t.Error("tiny image accepted")
	}
	// Featureless brackets: identity, not an error.
	ts, err := align.Estimate(context.Background(), []*imaging.Image{a, imaging.New(100, 100, 3)}, 0, align.Options{})
	if err != nil || ts[1].Model != align.ModelIdentity {
		t.Errorf("flat images: %v %v", ts, err)
	}
	if got := align.ReferenceIndex(nil); got != -1 {
		t.Errorf("ReferenceIndex(nil) = %d", got)
	}
}

// A narrow bracket (sRGB codes) warps like its float32 original, in linear light.
func TestWarpNarrowMatchesFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	src := imaging.New(97, 61, 3)
	for i := range src.Pix {
		src.Pix[i] = imaging.Decode8(uint8(rng.IntN(256)))
	}
	narrow := src.Narrow()
	if narrow.Pix8 == nil {
		t.Fatal("8-bit source not narrowed to 8 bits")
	}
	mesh := &align.Mesh{Cols: 3, Rows: 3, W: 97, H: 61, D: make([][2]float64, 9)}
	mesh.D[4] = [2]float64{0.7, -0.4}
	for _, tr := range []align.Transform{
		{M: align.Translation(2.3, -1.6), Model: align.ModelTranslation},
		{M: align.Mat3{1.01, 0.02, 1.5, -0.01, 0.99, 0.5, 1e-5, 0, 1}, Model: align.ModelHomography},
		{M: align.Translation(0.5, 0.25), Mesh: mesh, Model: align.ModelMesh},
	} {
		want := warp(t, src, tr)
		got := warp(t, narrow, tr)
		if got.Pix16 == nil {
			t.Fatalf("%v: narrow warp not held in 16 bits", tr.Model)
		}
		gw := got.Widen()
		for i, v := range want.Pix {
			if d := math.Abs(float64(imaging.LinearToSRGB(gw.Pix[i]) - imaging.LinearToSRGB(v))); d > 2.0/65535 {
				t.Fatalf("%v: sample %d: %g, want %g", tr.Model, i, gw.Pix[i], v)
			}
		}
	}
}
