package pipeline

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/engine/imaging/color/colortest"
	"github.com/porchlight/porchlight/engine/imaging/tone"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// Every built-in tonecraft preset maps onto a valid tone look, and the switches come
// from the resolved options, not the preset.
func TestToneLookFromEveryPreset(t *testing.T) {
	presets, err := catalog.Presets("tonecraft")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range presets {
		l, ok := catalog.TonecraftLook(p.Key)
		if !ok {
			t.Fatalf("%s: no look", p.Key)
		}
		tl := ToneLook(l, false, true)
		if err := tl.Validate(); err != nil {
			t.Errorf("%s: %v", p.Key, err)
		}
		if tl.AutoLevels || !tl.Sharpen {
			t.Errorf("%s: switches not taken from the resolved options", p.Key)
		}
		if len(tl.Curve) != len(l.Curve) {
			t.Errorf("%s: curve lost", p.Key)
		}
	}
}

// developScene runs the develop path on a scene's photos (one photo, or a bracket
// set) with the default options of such an order, and returns the delivered image.
// profile "" leaves tonecraft off; defaultLook turns it on with the default profile;
// any other profile turns it on with that one.
func developScene(t testing.TB, rel [][]string, profile string, steps ...Step) *imaging.Image {
	t.Helper()
	fa := photos(t, rel...)
	ids := make([]string, len(rel))
	for i := range ids {
		ids[i] = fmt.Sprint("in", i)
	}
	o := core.Options{Format: ptr("png")}
	switch profile {
	case "":
	case defaultLook:
		o.Tonecraft = ptr(true)
	default:
		o.Tonecraft, o.TonecraftProfile = ptr(true), ptr(profile)
	}
	p := New(Config{Logger: quiet()})
	for _, s := range steps {
		if err := p.Register(s); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Run(context.Background(), Request{OrderID: "look", Inputs: ids, Options: resolved(t, o), Assets: fa}, nil); err != nil {
		t.Fatal(err)
	}
	data := fa.out["look"]
	img, _, err := codec.Decode(bytes.NewReader(data), int64(len(data)), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return toRGB(img)
}

// defaultLook asks developScene for tonecraft with the default profile.
const defaultLook = "(default)"

// livingRoom is the dim bracket set with a wall of bright windows; its middle frame
// is the reference the merge keeps and the window regions are measured on.
var livingRoom = bracketSet("living_room_windows", "DSC_0080.png", "DSC_0082.png", "DSC_0084.png", "DSC_0086.png", "DSC_0088.png")

const livingRoomRef = 2

func bracketSet(scene string, names ...string) [][]string {
	var rel [][]string
	for _, n := range names {
		rel = append(rel, []string{"brackets", scene, n})
	}
	return rel
}

// labPlane converts every pixel of a linear RGB image to CIELAB.
func labPlane(img *imaging.Image) []colortest.Lab {
	out := make([]colortest.Lab, 0, img.W()*img.H())
	for y := 0; y < img.H(); y++ {
		row := img.Row(y)
		for x := 0; x < img.W(); x++ {
			p := row[x*img.C : x*img.C+3]
			out = append(out, colortest.LabOf(float64(p[0]), float64(p[1]), float64(p[2])))
		}
	}
	return out
}

// windowMask marks the window regions of a bracket set: the brightest 5 % of its
// reference frame by luminance.
func windowMask(ref *imaging.Image) []bool {
	lab := labPlane(ref)
	ls := make([]float64, len(lab))
	for i, p := range lab {
		ls[i] = p.L
	}
	s := append([]float64(nil), ls...)
	sort.Float64s(s)
	cut := s[int(0.95*float64(len(s)-1))]
	m := make([]bool, len(ls))
	for i, l := range ls {
		m[i] = l >= cut
	}
	return m
}

// lookFigures are what a photographer judges first in a dim room's result.
type lookFigures struct {
	MeanL float64 // mean L* of the whole photo
	// ShadowChroma is the mean C*ab of the shadows: the pixels below L* 30.
	ShadowChroma float64
	ShadowShare  float64 // share of the photo in those shadows
	// ShadowA and ShadowB are the shadows' mean a* and b*: their cast (negative a*
	// is green).
	ShadowA, ShadowB float64
	// WindowSD is the standard deviation of L* in the window regions: the view
	// through them, which a hazy veil flattens.
	WindowSD float64
}

func measureLook(img *imaging.Image, window []bool) lookFigures {
	lab := labPlane(img)
	var f lookFigures
	var ns, nw int
	var sw, sw2 float64
	for i, p := range lab {
		f.MeanL += p.L
		if p.L < 30 {
			f.ShadowChroma += p.Chroma()
			f.ShadowA += p.A
			f.ShadowB += p.B
			ns++
		}
		if window[i] {
			sw += p.L
			sw2 += p.L * p.L
			nw++
		}
	}
	f.MeanL /= float64(len(lab))
	if ns > 0 {
		f.ShadowChroma /= float64(ns)
		f.ShadowA /= float64(ns)
		f.ShadowB /= float64(ns)
	}
	f.ShadowShare = float64(ns) / float64(len(lab))
	m := sw / float64(nw)
	f.WindowSD = math.Sqrt(math.Max(0, sw2/float64(nw)-m*m))
	return f
}

// lookScenes are the three scenes the looks are compared on: a dim bracketed
// interior, a single interior and an exterior.
var lookScenes = []struct {
	name string
	rel  [][]string
}{
	{"living_room_windows", livingRoom},
	{"kitchen", [][]string{{"interiors", "houses_185_kitchen.jpg"}}},
	{"exterior", [][]string{{"exteriors", "houses_112_frontal.jpg"}}},
}

// presetRenders develops each look scene once without tone, then renders every
// tonecraft preset on it as the tone step does (the preset's own levels and
// sharpening), returning renders[scene][preset] and the preset keys.
func presetRenders(t testing.TB) ([][]*imaging.Image, []string) {
	t.Helper()
	keys := catalog.PresetKeys(catalog.PresetsTonecraft)
	var out [][]*imaging.Image
	for _, sc := range lookScenes {
		base := developScene(t, sc.rel, "")
		var row []*imaging.Image
		for _, k := range keys {
			l, _ := catalog.TonecraftLook(k)
			img, err := tone.Apply(context.Background(), base, ToneLook(l, l.AutoLevels, l.Sharpen))
			if err != nil {
				t.Fatal(err)
			}
			row = append(row, img)
		}
		out = append(out, row)
	}
	return out, keys
}

// meanDeltaE00 is the mean CIEDE2000 between two renders of one photo, over every
// other pixel in each direction.
func meanDeltaE00(a, b *imaging.Image) float64 {
	var s float64
	n := 0
	for y := 0; y < a.H(); y += 2 {
		ra, rb := a.Row(y), b.Row(y)
		for x := 0; x < a.W(); x += 2 {
			p, q := ra[x*a.C:x*a.C+3], rb[x*b.C:x*b.C+3]
			s += colortest.DeltaE00(colortest.LabOf(float64(p[0]), float64(p[1]), float64(p[2])),
				colortest.LabOf(float64(q[0]), float64(q[1]), float64(q[2])))
			n++
		}
	}
	return s / float64(n)
}

// Any two tonecraft presets are distinct looks: on average over the three look
// scenes they differ by at least minPresetDeltaE CIEDE2000.
func TestPresetsLookDifferent(t *testing.T) {
	if testing.Short() {
		t.Skip("develops three scenes and renders every look on each (about 15 s)")
	}
	const minPresetDeltaE = 3
	renders, keys := presetRenders(t)
	var b strings.Builder
	fmt.Fprintf(&b, "mean CIEDE2000 between presets (%s):\n%-14s", strings.Join(sceneNames(), ", "), "")
	for _, k := range keys {
		fmt.Fprintf(&b, "%14s", k)
	}
	for i, ki := range keys {
		fmt.Fprintf(&b, "\n%-14s", ki)
		for j, kj := range keys {
			var d float64
			for s := range renders {
				d += meanDeltaE00(renders[s][i], renders[s][j]) / float64(len(renders))
			}
			if i == j {
				fmt.Fprintf(&b, "%14s", "-")
				continue
			}
			fmt.Fprintf(&b, "%14.2f", d)
			if j > i && d < minPresetDeltaE {
				t.Errorf("%s and %s differ by %.2f CIEDE2000 on average, want at least %d", ki, kj, d, minPresetDeltaE)
			}
		}
	}
	t.Log(b.String())
}

func sceneNames() []string {
	var n []string
	for _, s := range lookScenes {
		n = append(n, s.name)
	}
	return n
}

// Today's default look (signature) on living_room_windows, through the develop path,
// before the looks were reworked: the figures the default must beat.
const (
	baselineMeanL        = 40.42 // mean L*
	baselineShadowChroma = 3.74  // mean C*ab below L* 30 (for the record)
	baselineShadowShare  = 0.406 // share of the photo below L* 30 (for the record)
	baselineWindowSD     = 3.72  // std-dev of L* in the windows
)

// The default look makes the dim living room bright, clean and neutral without
// flattening it: through the real develop path (a bracket scene's default options,
// tonecraft on with the default profile), mean L* up by at least 8 from the old
// default, shadow chroma under 4, and the view through the windows keeping at least
// the old default's contrast.
func TestDefaultLookBrightensDimRoom(t *testing.T) {
	ref := decodeFile(t, testphotos.Path(t, livingRoom[livingRoomRef]...))
	win := windowMask(ref)
	profile := resolved(t, core.Options{Tonecraft: ptr(true)}).TonecraftProfile
	plain := measureLook(developScene(t, livingRoom, ""), win)
	got := measureLook(developScene(t, livingRoom, defaultLook), win)
	t.Logf("living_room_windows, develop path (%s):\n%-22s %8s %14s %10s %10s %10s\n%-22s %8.2f %14s %10s %10s %10.2f\n%-22s %8.2f %14.2f %10.3f %10.2f %10.2f\n%-22s %8.2f %14.2f %10.3f %10.2f %10.2f",
		profile, "", "mean L*", "shadow C*ab", "share", "shadow a*", "window sd",
		"old default", baselineMeanL, fmt.Sprintf("%.2f", baselineShadowChroma), fmt.Sprintf("%.3f", baselineShadowShare), "", baselineWindowSD,
		"no tone", plain.MeanL, plain.ShadowChroma, plain.ShadowShare, plain.ShadowA, plain.WindowSD,
		profile, got.MeanL, got.ShadowChroma, got.ShadowShare, got.ShadowA, got.WindowSD)
	if got.MeanL < baselineMeanL+8 {
		t.Errorf("mean L* %.2f, want at least %.2f (old default + 8)", got.MeanL, baselineMeanL+8)
	}
	if got.ShadowChroma >= 4 {
		t.Errorf("shadow chroma %.2f, want under 4", got.ShadowChroma)
	}
	if got.WindowSD < baselineWindowSD {
		t.Errorf("window L* std-dev %.2f, below the old default's %.2f: the view is flattened", got.WindowSD, baselineWindowSD)
	}
}

var looksSheet = flag.String("looksheet", "", "write the contact sheet of every tonecraft preset on the look scenes as looks-contact-sheet.jpg in this folder")

// TestLooksContactSheet writes, with -looksheet DIR, a sheet with one row per look
// scene and one column per tonecraft preset (the first column the photo without a
// look). Nothing is written without the flag.
func TestLooksContactSheet(t *testing.T) {
	if *looksSheet == "" {
		t.Skip("no -looksheet folder")
	}
	const cellW, gap, label = 400, 8, 18
	renders, keys := presetRenders(t)
	var rows [][]*image.NRGBA
	cellH := 0
	for s, sc := range lookScenes {
		row := []*image.NRGBA{fitWidth(developScene(t, sc.rel, ""), cellW)}
		for _, img := range renders[s] {
			row = append(row, fitWidth(img, cellW))
		}
		cellH = max(cellH, row[0].Bounds().Dy())
		rows = append(rows, row)
	}
	cols := len(keys) + 1
	sheet := image.NewNRGBA(image.Rect(0, 0, cols*cellW+(cols+1)*gap, len(rows)*(cellH+gap)+gap+label))
	draw.Draw(sheet, sheet.Bounds(), image.NewUniform(color.NRGBA{40, 40, 40, 255}), image.Point{}, draw.Src)
	names := append([]string{"no look"}, keys...)
	for j, n := range names {
		drawLabel(sheet, gap+j*(cellW+gap)+4, 4, n)
	}
	for i, row := range rows {
		for j, m := range row {
			at := image.Pt(gap+j*(cellW+gap), label+gap+i*(cellH+gap))
			draw.Draw(sheet, m.Bounds().Add(at), m, m.Bounds().Min, draw.Src)
		}
	}
	path := filepath.Join(*looksSheet, "looks-contact-sheet.jpg")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(f, sheet, &jpeg.Options{Quality: 85}); err != nil {
		f.Close()
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (columns: %s; rows: %s)", path, strings.Join(names, ", "), strings.Join(sceneNames(), ", "))
}

// fitWidth resizes img to w pixels wide, keeping its aspect ratio.
func fitWidth(img *imaging.Image, w int) *image.NRGBA {
	return imaging.Resize(img, w, max(1, (img.H()*w+img.W()/2)/img.W())).ToNRGBA()
}

// drawLabel writes s in white at (x, y), the top left of the text.
func drawLabel(m draw.Image, x, y int, s string) {
	d := font.Drawer{Dst: m, Src: image.White, Face: basicfont.Face7x13, Dot: fixed.P(x, y+11)}
	d.DrawString(s)
}
