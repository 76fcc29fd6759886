package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/color/colortest"
	"github.com/porchlight/porchlight/internal/imagingtest"
	"github.com/porchlight/porchlight/internal/testphotos"
)

var flambientSheet = flag.String("flambient-sheet", "", "write the flambient contact sheet (ambient | flash | ours, one pair a row) as flambient-contact-sheet.jpg in this folder")

// flambientPairs are the four tripod pairs of one kitchen: an ambient frame (warm,
// windows blown) and a flash frame (neutral) of each view.
var flambientPairs = [][2]string{
	{"kitchenB_16mm_ambient__clean-edge-0004.jpg", "kitchenB_16mm_flash__clean-edge-0006.jpg"},
	{"kitchenD_20mm_ambient__clean-edge-0014.jpg", "kitchenD_20mm_flash__clean-edge-0015.jpg"},
	{"kitchenE_14mm_ambient__clean-edge-0017.jpg", "kitchenE_14mm_flash__clean-edge-0018.jpg"},
	{"kitchenH_25mm_ambient__clean-edge-0029.jpg", "kitchenH_25mm_flash__clean-edge-0030.jpg"},
}

// developPair runs one pair through the develop path with the options a scene of
// two dropped files gets, and returns the decoded output.
func developPair(t *testing.T, p *Pipeline, order string, o core.Options, paths ...string) (*imaging.Image, Result) {
	t.Helper()
	fa := &fileAssets{paths: map[string]string{}}
	var ids []string
	for i, path := range paths {
		id := fmt.Sprint("in", i)
		fa.paths[id] = path
		ids = append(ids, id)
	}
	r, err := catalog.ResolveScene(o, false, len(paths))
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Run(context.Background(), Request{OrderID: order, Inputs: ids, Options: r, Assets: fa}, nil)
	if err != nil {
		t.Fatalf("%s: %v", order, err)
	}
	out, _, err := codec.Decode(bytes.NewReader(fa.out[order]), int64(len(fa.out[order])), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out, res
}

func flambientDecode(t *testing.T, path string) *imaging.Image {
	t.Helper()
	m, _, err := codec.DecodeFile(path, codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// flambientFigures are the measures of one image of a pair, all at a quarter size.
type flambientFigures struct {
	// neutral is the neutral-surface chroma (colortest.NeutralChroma) of the
	// surfaces the flash frame shows as the brightest near-neutral ones: the white
	// cabinets, the ceiling, the trims.
	neutral float64
	// winClip is the share of the window region (pixels blown in the ambient
	// frame, with their 8 neighbours) that is blown here; winContrast the mean local contrast there: the
	// mean absolute difference of sRGB-encoded luminance between pixels 1 apart.
	winClip, winContrast float64
	winShare             float64 // the window region's share of the frame
	// shadowEdges is the share of the frame in hard dark edges the ambient does not
	// have: local detail (log luminance minus its 9×9 mean) more than 0.35 below
	// the ambient's at the same pixel, and darker than its own local mean; pixels
	// within 6 of one clipped in the ambient (a window) are left out.
	shadowEdges float64
	// hotSpots is the share of the frame in specular flash reflections: brighter
	// than 0.6 and over twice its 9×9 neighbourhood's mean while the ambient there is
	// under 1.3 times its own (windows left out as above).
	hotSpots float64
}

// lumPlane is the luminance of m; logPlane its log.
func lumPlane(m *imaging.Image) []float64 {
	w, h := m.W(), m.H()
	out := make([]float64, w*h)
	for y := range h {
		r := m.Row(y)
		for x := range w {
			o := x * m.C
			out[y*w+x] = 0.2126*float64(r[o]) + 0.7152*float64(r[o+1]) + 0.0722*float64(r[o+2])
		}
	}
	return out
}

func boxMean(v []float64, w, h, r int) []float64 {
	tmp, out := make([]float64, len(v)), make([]float64, len(v))
	for y := range h {
		for x := range w {
			var s float64
			lo, hi := max(0, x-r), min(w-1, x+r)
			for k := lo; k <= hi; k++ {
				s += v[y*w+k]
			}
			tmp[y*w+x] = s / float64(hi-lo+1)
		}
	}
	for y := range h {
		lo, hi := max(0, y-r), min(h-1, y+r)
		for x := range w {
			var s float64
			for k := lo; k <= hi; k++ {
				s += tmp[k*w+x]
			}
			out[y*w+x] = s / float64(hi-lo+1)
		}
	}
	return out
}

func logs(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Log(x + 1e-3)
	}
	return out
}

// blownLevel is where the test counts an ambient pixel as blown: linear 0.9 is
// sRGB 0.955, where a window's view has lost its colour and most of its detail.
const blownLevel = 0.9

// clipped reports whether the pixel at x, y of m and its 8 neighbours are blown.
func clipped(m *imaging.Image, x, y int) bool {
	for dy := -1; dy <= 1; dy++ {
		r := m.Row(y + dy)
		for dx := -1; dx <= 1; dx++ {
			o := (x + dx) * 3
			if max(r[o], r[o+1], r[o+2]) < blownLevel {
				return false
			}
		}
	}
	return true
}

// measureFlambient measures img (a quarter size, like amb and flash).
func measureFlambient(amb, flash, img *imaging.Image) flambientFigures {
	w, h := img.W(), img.H()
	var f flambientFigures
	f.neutral = colortest.NeutralChroma(flash, img, 2)

	ya, yi := lumPlane(amb), lumPlane(img)
	la, li := logs(ya), logs(yi)
	ma, mi := boxMean(la, w, h, 4), boxMean(li, w, h, 4)
	lma, lmi := boxMean(ya, w, h, 4), boxMean(yi, w, h, 4)
	// Near a window the ambient has no detail (clipped): no proxy is measured there.
	nearWin := make([]float64, w*h)
	for y := range h {
		r := amb.Row(y)
		for x := range w {
			if max(r[x*3], r[x*3+1], r[x*3+2]) >= blownLevel {
				nearWin[y*w+x] = 1
			}
		}
	}
	nearWin = boxMean(nearWin, w, h, 6)
	var win, clip, shadow, hot int
	var contrast float64
	for y := 1; y < h-1; y++ {
		ri := img.Row(y)
		for x := 1; x < w-1; x++ {
			i := y*w + x
			if clipped(amb, x, y) {
				win++
				if max(ri[x*3], ri[x*3+1], ri[x*3+2]) >= blownLevel {
					clip++
				}
				e := float64(imaging.LinearToSRGB(float32(yi[i])))
				contrast += (math.Abs(e-float64(imaging.LinearToSRGB(float32(yi[i+1])))) +
					math.Abs(e-float64(imaging.LinearToSRGB(float32(yi[i+w]))))) / 2
				continue
			}
			if nearWin[i] > 0 {
				continue
			}
			if (li[i]-mi[i])-(la[i]-ma[i]) < -0.35 && li[i] < mi[i] {
				shadow++
			}
			if yi[i] > 0.6 && yi[i] > 2*lmi[i] && ya[i] < 1.3*lma[i] {
				hot++
			}
		}
	}
	if win > 0 {
		f.winClip = float64(clip) / float64(win)
		f.winContrast = contrast / float64(win)
	}
	f.winShare = float64(win) / float64(w*h)
	f.shadowEdges = float64(shadow) / float64(w*h)
	f.hotSpots = float64(hot) / float64(w*h)
	return f
}

// TestFlambientPairs develops each real pair (ambient + flash) as a user would drop
// it, and checks the blend against what a flambient edit must give: whites as
// neutral as the flash frame's, the windows' view (not clipped where the ambient
// is, with local contrast), and no flash shadows or hot spots beyond the ambient's.
func TestFlambientPairs(t *testing.T) {
	if testing.Short() {
		t.Skip("develops four 12 MP pairs")
	}
	dir := filepath.Join(testphotos.Dir(t), "flambient")
	p := New(Config{Logger: quiet()})
	var sheet [][3]*imaging.Image
	t.Logf("%-9s | %-22s | %-9s | %-6s | %-27s | %-27s | %-23s | %s", "pair", "neutral C* amb/fl/ours", "blend only", "window",
		"window clip amb/fl/ours", "window contrast amb/fl/ours", "shadow edges fl/ours", "hot spots fl/ours")
	for _, pair := range flambientPairs {
		name := pair[0][:8]
		ap, fp := filepath.Join(dir, pair[0]), filepath.Join(dir, pair[1])
		out, res := developPair(t, p, name, core.Options{Quality: ptr(95)}, ap, fp)
		if !strings.Contains(strings.Join(res.Steps, " "), StepFlambient) || strings.Contains(strings.Join(res.Steps, " "), StepMerge) {
			t.Errorf("%s: steps %v", name, res.Steps)
		}
		if !strings.Contains(strings.Join(res.Notes, "\n"), "flambient: flash frame inputs[1] blended with the ambient frame") {
			t.Errorf("%s: notes %q", name, res.Notes)
		}
		amb := imagingtest.Shrink(flambientDecode(t, ap), 4)
		flash := imagingtest.Shrink(flambientDecode(t, fp), 4)
		ours := imagingtest.Shrink(out, 4)
		fa, ff, fo := measureFlambient(amb, flash, amb), measureFlambient(amb, flash, flash), measureFlambient(amb, flash, ours)
		// The blend alone, without the colour correction that follows it.
		plain, _ := developPair(t, p, name+"-plain", core.Options{Quality: ptr(95), ColorCorrection: ptr(false)}, ap, fp)
		np := colortest.NeutralChroma(flash, imagingtest.Shrink(plain, 4), 2)
		t.Logf("%-9s | %6.2f %6.2f %6.2f   | %9.2f | %5.1f%% | %7.3f %7.3f %7.3f     | %7.4f %7.4f %7.4f     | %8.4f %8.4f     | %8.5f %8.5f",
			name, fa.neutral, ff.neutral, fo.neutral, np, 100*fo.winShare, fa.winClip, ff.winClip, fo.winClip,
			fa.winContrast, ff.winContrast, fo.winContrast, ff.shadowEdges, fo.shadowEdges, ff.hotSpots, fo.hotSpots)
		if fo.neutral > ff.neutral+1 || fo.neutral > 0.6*fa.neutral || np > ff.neutral+1 {
			t.Errorf("%s: neutral surfaces C* %.2f, %.2f without colour correction (flash %.2f, ambient %.2f)", name, fo.neutral, np, ff.neutral, fa.neutral)
		}
		// The windows are as open as the darkest frame's, and show the view.
		if fo.winShare > 0.005 && (fo.winClip > ff.winClip+0.1 || fo.winContrast < 0.5*ff.winContrast || fo.winContrast < 2*fa.winContrast) {
			t.Errorf("%s: windows clipped %.3f, contrast %.4f (flash %.4f, ambient %.4f)", name, fo.winClip, fo.winContrast, ff.winContrast, fa.winContrast)
		}
		if fo.shadowEdges > 0.6*ff.shadowEdges {
			t.Errorf("%s: flash shadow edges %.4f, flash frame %.4f", name, fo.shadowEdges, ff.shadowEdges)
		}
		if fo.hotSpots > 0.5*ff.hotSpots+1e-4 {
			t.Errorf("%s: hot spots %.5f, flash frame %.5f", name, fo.hotSpots, ff.hotSpots)
		}
		if *flambientSheet != "" {
			sheet = append(sheet, [3]*imaging.Image{amb, flash, ours})
		}
	}
	if *flambientSheet != "" {
		writeFlambientSheet(t, filepath.Join(*flambientSheet, "flambient-contact-sheet.jpg"), sheet)
	}
}

// writeFlambientSheet lays the rows out at 700 px a cell.
func writeFlambientSheet(t *testing.T, path string, rows [][3]*imaging.Image) {
	const cellW, gap = 700, 8
	cellH := rows[0][0].H() * cellW / rows[0][0].W()
	sheet := image.NewNRGBA(image.Rect(0, 0, 3*cellW+2*gap, len(rows)*cellH+(len(rows)-1)*gap))
	draw.Draw(sheet, sheet.Bounds(), image.White, image.Point{}, draw.Src)
	for r, row := range rows {
		for c, m := range row {
			cell := imaging.Resize(m, cellW, cellH).ToNRGBA()
			at := image.Pt(c*(cellW+gap), r*(cellH+gap))
			draw.Draw(sheet, image.Rectangle{Min: at, Max: at.Add(cell.Bounds().Size())}, cell, image.Point{}, draw.Src)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, sheet, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d KB)", path, buf.Len()/1024)
}

// flambientJob is a job over frames decoded as the decode step leaves brackets: the
// kitchenB pair at an eighth of its size, the ambient frame also one stop under and
// over as two more brackets, so a scene of three ambient brackets and a flash frame.
func flambientJob(t *testing.T, o core.Options, brackets bool) *Job {
	t.Helper()
	dir := filepath.Join(testphotos.Dir(t), "flambient")
	amb := imagingtest.Shrink(flambientDecode(t, filepath.Join(dir, flambientPairs[0][0])), 8)
	fl := imagingtest.Shrink(flambientDecode(t, filepath.Join(dir, flambientPairs[0][1])), 8)
	r, err := catalog.ResolveScene(o, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	j := &Job{Options: r}
	j.Frames = append(j.Frames, Frame{AssetID: "amb", Image: amb.Narrow(), Meta: codec.Meta{ExposureTime: 1.0 / 25}})
	if brackets {
		for _, k := range []float32{0.5, 2} {
			m := amb.Clone()
			for i := range m.Pix {
				m.Pix[i] = min(m.Pix[i]*k, 1)
			}
			j.Frames = append(j.Frames, Frame{AssetID: "amb", Image: m.Narrow(), Meta: codec.Meta{ExposureTime: float64(k) / 25}})
		}
	}
	j.Frames = append(j.Frames, Frame{AssetID: "flash", Image: fl.Narrow(), Meta: codec.Meta{ExposureTime: 1.0 / 1000, FlashFired: true}})
	j.Inputs = make([]string, len(j.Frames))
	return j
}

// The merge's place goes to flambient only with the option on and both a flash
// frame and an ambient frame among the inputs.
func TestPlanFlash(t *testing.T) {
	p := New(Config{Logger: quiet()})
	plan := func(j *Job) string {
		steps, err := p.Plan(j.Options, len(j.Frames))
		if err != nil {
			t.Fatal(err)
		}
		p.planFlash(steps, j)
		return strings.Join(names(steps), " ")
	}
	if got := plan(flambientJob(t, core.Options{}, false)); !strings.Contains(got, "align flambient color_correction") || strings.Contains(got, "merge") {
		t.Errorf("flash pair: %s", got)
	}
	if got := plan(flambientJob(t, core.Options{Flambient: ptr(false)}, false)); !strings.Contains(got, "align merge") || strings.Contains(got, "flambient") {
		t.Errorf("flambient off: %s", got)
	}
	j := flambientJob(t, core.Options{}, false)
	j.Frames[0].Meta.FlashFired = false
	j.Frames[1].Meta.FlashFired = false
	if got := plan(j); strings.Contains(got, "flambient") {
		t.Errorf("no flash frame: %s", got)
	}
	j.Frames[0].Meta.FlashFired = true
	j.Frames[1].Meta.FlashFired = true
	if got := plan(j); strings.Contains(got, "flambient") || !strings.Contains(strings.Join(j.Notes(), " "), "every input is a flash frame") {
		t.Errorf("only flash frames: %s, notes %q", got, j.Notes())
	}
}

// With several ambient brackets, they are fused without the flash frame, and the
// flash frame is blended into their merge: whites as neutral as the flash's, and
// not the fusion of all four.
func TestFlambientStepMergesAmbientBracketsOnly(t *testing.T) {
	j := flambientJob(t, core.Options{}, true)
	flash := j.Frames[3].Image.Widen()
	amb := j.Frames[0].Image.Widen()
	if err := flambientStep(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	if j.Frames != nil || j.Image == nil || j.Image.IsNarrow() || !imaging.SameSize(j.Image, flash) {
		t.Fatalf("frames %d, image %v", len(j.Frames), j.Image != nil)
	}
	if n := strings.Join(j.Notes(), " "); !strings.Contains(n, "flash frame inputs[3] blended with the merge of 3 ambient brackets") {
		t.Errorf("notes %q", n)
	}
	if j.Meta.FlashFired {
		t.Error("the output carries the flash frame's metadata")
	}
	ca, cf, co := colortest.NeutralChroma(flash, amb, 1), colortest.NeutralChroma(flash, flash, 1), colortest.NeutralChroma(flash, j.Image, 1)
	t.Logf("neutral chroma: ambient %.2f, flash %.2f, ours %.2f", ca, cf, co)
	if co > cf+1 || co > 0.6*ca {
		t.Errorf("neutral chroma %.2f (flash %.2f, ambient %.2f)", co, cf, ca)
	}
}
