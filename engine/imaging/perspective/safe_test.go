package perspective

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// keystone warps a straight photo as if the camera had been tilted up by deg degrees
// (verticals converging upward), with the package's own warp: the correction of a
// camera tilted down by deg is the motion of one tilted up, cropped to the largest
// frame without empty corners. That crop sits off the principal point (a frame
// centred on it would keep next to nothing at 25 degrees), so an estimate that
// assumes the principal point at the centre reads a 25 degree warp as about 19.
func keystone(t *testing.T, img *imaging.Image, deg float64) *imaging.Image {
	t.Helper()
	W, H := img.W(), img.H()
	a := -deg * math.Pi / 180
	m := Model{Width: W, Height: H, Focal: focalPerDiagonal * math.Hypot(float64(W), float64(H)),
		Vertical: [3]float64{0, math.Cos(a), -math.Sin(a)}, Found: true}
	out, res, err := Apply(context.Background(), img, m, 1)
	if err != nil || !res.Applied {
		t.Fatalf("keystone warp: %v %q", err, res.Reason)
	}
	return out
}

// TestSafeCorrectionKeepsTheFrame corrects every test photo within SafeLimits, the
// way the product does: a straight exterior warped to a 25 degree keystone, the
// exteriors, the interiors and the bracket frames (in -short runs the middle frame of
// each set). Every output keeps at least 75 % of the frame; a correction that fits
// the limits is made in full; one that does not is made part of the way and says
// which limits it met. The table logs, per photo, the rotation a full correction
// needs, what was applied, the share of the frame kept, the stretch and the median
// tilt of verticals before and after.
func TestSafeCorrectionKeepsTheFrame(t *testing.T) {
	type photo struct {
		name string
		img  func() *imaging.Image
	}
	var photos []photo
	root := testphotos.Dir(t)
	add := func(rel ...string) {
		photos = append(photos, photo{filepath.Join(rel...), func() *imaging.Image { return loadPhoto(t, rel...) }})
	}
	photos = append(photos, photo{"houses_184_frontal.jpg warped to a 25° keystone", func() *imaging.Image {
		return keystone(t, loadPhoto(t, "exteriors", "houses_184_frontal.jpg"), 25)
	}})
	for _, dir := range []string{"exteriors", "interiors"} {
		for _, n := range photoNames(t, filepath.Join(root, dir)) {
			add(dir, n)
		}
	}
	sets, err := os.ReadDir(filepath.Join(root, "brackets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sets {
		if !s.IsDir() {
			continue
		}
		names := photoNames(t, filepath.Join(root, "brackets", s.Name()))
		if testing.Short() {
			names = names[len(names)/2 : len(names)/2+1]
		}
		for _, n := range names {
			add("brackets", s.Name(), n)
		}
	}

	// Photos whose full correction the limits must leave alone: the ones the tilt
	// targets are held on.
	modest := map[string]bool{
		"interiors/houses_162_bedroom.jpg": true, "interiors/houses_156_bedroom.jpg": true,
		"interiors/houses_158_bedroom.jpg": true, "interiors/houses_109_bedroom.jpg": true,
	}
	table := []string{fmt.Sprintf("%-58s %7s %5s %7s %8s %5s %7s %6s %6s  %s",
		"photo", "needed", "str", "applied", "residual", "kept", "stretch", "tilt", "after", "limits met")}
	limited := 0
	for _, p := range photos {
		img := p.img()
		m, err := Estimate(context.Background(), img)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		out, res, err := ApplyWith(context.Background(), img, m, 1, SafeLimits)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		before, _ := medianTilt(img)
		after := before
		if res.Applied {
			after, _ = medianTilt(out)
		}
		full := m.RotationDeg()
		if !m.Found {
			full = 0
		}
		table = append(table, fmt.Sprintf("%-58s %6.2f° %5.2f %6.2f° %7.2f° %4.0f%% %7.3f %6.3f %6.3f  %s",
			p.name, full, res.Strength, res.RotationDeg, full-res.RotationDeg, 100*res.Frame.KeptArea, res.Frame.Stretch, before, after, res.Limit))
		if !m.Found {
			continue
		}
		if res.Frame.KeptArea < minKeptFloor || res.Frame.KeptArea < SafeLimits.MinKeptArea-1e-6 {
			t.Errorf("%s: keeps %.1f%% of the frame", p.name, 100*res.Frame.KeptArea)
		}
		if res.Frame.Stretch > SafeLimits.MaxStretch+1e-6 || res.RotationDeg > SafeLimits.MaxRotationDeg+1e-6 {
			t.Errorf("%s: stretch %.3f, rotation %.2f° past the limits", p.name, res.Frame.Stretch, res.RotationDeg)
		}
		if res.Applied {
			if got := coveredShare(res.H, img.W(), img.H()); math.Abs(got-res.Frame.KeptArea) > 0.01 {
				t.Errorf("%s: %.1f%% of the source's pixels land in the output, the frame says %.1f%%", p.name, 100*got, 100*res.Frame.KeptArea)
			}
		}
		if modest[filepath.ToSlash(p.name)] && (res.Limited || !res.Applied || res.Strength != 1) {
			t.Errorf("%s: a modest correction was limited: strength %.2f, %s", p.name, res.Strength, res.Limit)
		}
		if res.Limited {
			limited++
			if res.Limit == "" || !(res.Strength < 1) || !(res.FullRotationDeg > res.RotationDeg) {
				t.Errorf("%s: limited without saying why: %+v", p.name, res)
			}
			// The partial correction stops at a limit, not short of it.
			if !(res.Frame.KeptArea < SafeLimits.MinKeptArea+0.005 || res.Frame.Stretch > SafeLimits.MaxStretch-0.005 ||
				res.RotationDeg > SafeLimits.MaxRotationDeg-0.05) {
				t.Errorf("%s: partial correction stops short of every limit: %.2f°, kept %.3f, stretch %.3f", p.name, res.RotationDeg, res.Frame.KeptArea, res.Frame.Stretch)
			}
		}
		if strings.Contains(p.name, "keystone") || strings.Contains(p.name, "OldHouse") {
			if !res.Limited {
				t.Errorf("%s: an extreme correction (%.1f°) was made in full", p.name, full)
			}
			if full < 18 {
				t.Errorf("%s: estimated %.1f° of rotation, want an extreme one", p.name, full)
			}
		}
	}
	t.Logf("within SafeLimits (%.0f° rotation, %.0f%% kept, stretch %.2f); %d of %d photos corrected part of the way; tilt is the median of verticals in degrees:\n%s",
		SafeLimits.MaxRotationDeg, 100*SafeLimits.MinKeptArea, SafeLimits.MaxStretch, limited, len(photos), strings.Join(table, "\n"))
}

// photoNames lists the JPEG and PNG files of dir, sorted.
func photoNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		switch strings.ToLower(filepath.Ext(e.Name())) {
		case ".jpg", ".jpeg", ".png":
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// coveredShare is the share of a W x H source's pixel centers that h carries into the
// W x H output frame, counted on a lattice: an independent check of Frame.KeptArea.
func coveredShare(h Homography, W, H int) float64 {
	in, n := 0, 0
	step := max(1, min(W, H)/200)
	for y := 0; y < H; y += step {
		for x := 0; x < W; x += step {
			n++
			px, py, ok := h.Apply(float64(x)+0.5, float64(y)+0.5)
			if ok && px >= 0 && py >= 0 && px <= float64(W) && py <= float64(H) {
				in++
			}
		}
	}
	return float64(in) / float64(n)
}

// TestFrameOfKnownTransforms: a crop enlarged to the full frame keeps the square of
// its width and stretches nothing; a keystone stretches.
func TestFrameOfKnownTransforms(t *testing.T) {
	const W, H = 300, 200
	f, ok := frameOf(Identity, W, H)
	if !ok || math.Abs(f.KeptArea-1) > 1e-9 || math.Abs(f.Stretch-1) > 1e-9 {
		t.Errorf("identity: %+v", f)
	}
	// The centre 80 % of the width and height, enlarged to the frame.
	s := 1 / 0.8
	f, ok = frameOf(Homography{s, 0, -0.1 * W * s, 0, s, -0.1 * H * s, 0, 0, 1}, W, H)
	if !ok || math.Abs(f.KeptArea-0.64) > 1e-9 || math.Abs(f.Stretch-1) > 1e-9 {
		t.Errorf("centre crop: %+v, want kept 0.64, stretch 1", f)
	}
	m := Model{Width: W, Height: H, Focal: 200, Vertical: unit([3]float64{0, 1, -0.2}), Found: true}
	total, _, err := m.plan(1)
	if err != nil {
		t.Fatal(err)
	}
	f, ok = frameOf(total, W, H)
	if !ok || !(f.Stretch > 1.2) || !(f.KeptArea < 0.95) {
		t.Errorf("an 11 degree keystone: %+v", f)
	}
	// Within limits that it passes, the correction stops at one of them.
	lim := Limits{MaxRotationDeg: 5}
	st, why := m.limit(1, lim)
	if why == "" || math.Abs(m.RotationDeg()*st-5) > 1e-3 {
		t.Errorf("limited to 5 degrees: strength %.4f (%.3f degrees), %q", st, m.RotationDeg()*st, why)
	}
	if st, why := m.limit(1, Limits{MaxRotationDeg: 30}); st != 1 || why != "" {
		t.Errorf("within the limits: strength %v, %q", st, why)
	}
}
