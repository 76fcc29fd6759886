package grouping

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/cull"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// cullScene is a real bracket set read as Cull reads it, its frames as luminance
// (all cull looks at, and a third of the work for the degradations).
type cullScene struct {
	name   string
	frames []cull.Frame
}

func loadCullScenes(t *testing.T) []cullScene {
	t.Helper()
	root := testphotos.Dir(t)
	ents, err := os.ReadDir(filepath.Join(root, "brackets"))
	if err != nil {
		t.Fatal(err)
	}
	var out []cullScene
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		sc := cullScene{name: e.Name()}
		for _, n := range testphotos.Brackets(t, e.Name()) {
			f, err := ReadFrame(filepath.Join(root, "brackets", e.Name(), n))
			if err != nil {
				t.Fatal(err)
			}
			f.Image = lumOf(f.Image)
			sc.frames = append(sc.frames, f)
		}
		out = append(out, sc)
	}
	return out
}

// loadSyntheticScenes makes 3-frame brackets (-2, 0 and +2 EV: clipped, noisy,
// rounded to 8 bits) from every other single interior and exterior photo.
func loadSyntheticScenes(t *testing.T) []cullScene {
	t.Helper()
	root := testphotos.Dir(t)
	var out []cullScene
	for _, dir := range []string{"interiors", "exteriors"} {
		files, err := Expand([]string{filepath.Join(root, dir)})
		if err != nil {
			t.Fatal(err)
		}
		for k, f := range files {
			if k%2 == 1 {
				continue
			}
			fr, err := ReadFrame(f)
			if err != nil {
				t.Fatal(err)
			}
			lum := lumOf(fr.Image)
			sc := cullScene{name: dir + "/" + filepath.Base(f)}
			for i, ev := range []float32{-2, 0, 2} {
				img := scaled(lum, float32(math.Exp2(float64(ev))))
				for j, v := range img.Pix {
					img.Pix[j] = min(v, 1)
				}
				sc.frames = append(sc.frames, cull.Frame{Image: finish(img, 0.8, uint64(100+k*3+i))})
			}
			out = append(out, sc)
		}
	}
	return out
}

// syntheticCases are fewer cases for a synthetic bracket: untouched, one motion
// blur, one defocus and one grey card, on frames and lengths that vary by scene.
func syntheticCases(sc cullScene, k int) []cullCase {
	n := len(sc.frames)
	cases := []cullCase{{scene: sc.name, kind: "untouched", row: "untouched", frames: sc.frames, bad: make([]bool, n)}}
	one := func(kind string, i int, img *imaging.Image) {
		fs := append([]cull.Frame(nil), sc.frames...)
		fs[i].Image = img
		bad := make([]bool, n)
		bad[i] = true
		cases = append(cases, cullCase{scene: sc.name, kind: kind, row: rowOf(kind), frames: fs, bad: bad})
	}
	s := float64(max(sc.frames[0].Image.W(), sc.frames[0].Image.H())) * 0.75 / 1000
	px, deg := float64(5+3*(k%4)), float64(35*k%180)
	i := k % n
	one(fmt.Sprintf("motion %.0fpx@%.0f", px, deg), i, finish(motionBlur(sc.frames[i].Image, px*s, deg), 0.8, uint64(k)))
	r := float64(2 + k%3)
	i = (k + 1) % n
	one(fmt.Sprintf("defocus r%.0f", r), i, finish(defocus(sc.frames[i].Image, r*s), 0.8, uint64(k)))
	w, h := sc.frames[0].Image.W(), sc.frames[0].Image.H()
	one("grey card", (k+2)%n, finish(flat(w, h, 0.12, 0.1), 1.2, uint64(k)))
	return cases
}

// rowOf is a made bracket's confusion-table row: its degradation without the
// figures, which vary by scene.
func rowOf(kind string) string {
	if f := strings.Fields(kind); f[0] == "motion" || f[0] == "defocus" {
		return f[0]
	}
	return kind
}

// lumOf is img's linear luminance as a one-channel image.
func lumOf(img *imaging.Image) *imaging.Image {
	out := imaging.New(img.W(), img.H(), 1)
	buf := make([]float32, img.W()*img.C)
	for y := range img.H() {
		row, o := img.LinearRow(y, buf), out.Row(y)
		for x := range o {
			o[x] = 0.2126*row[3*x] + 0.7152*row[3*x+1] + 0.0722*row[3*x+2]
		}
	}
	return out
}

// cullCase is a scene as the test hands it to Judge, and which frames should be
// set aside.
type cullCase struct {
	scene, kind string
	row         string // the confusion table's row
	frames      []cull.Frame
	bad         []bool
}

// degradedCases builds, from one real scene, the cases the measurement judges: the
// scene untouched, and the scene with one frame (a different one each time)
// replaced by a blurred, black, dark or grey-card copy, or the whole set shot twice
// with one run slightly blurred. Blur lengths are in pixels at 1000 pixels wide
// (scaled to the frame) and every degraded frame is finished like a camera file.
func degradedCases(sc cullScene) []cullCase {
	n := len(sc.frames)
	clean := make([]bool, n)
	cases := []cullCase{{scene: sc.name, kind: "untouched", row: "untouched", frames: sc.frames, bad: clean}}
	one := func(kind string, k int, img *imaging.Image) {
		fs := append([]cull.Frame(nil), sc.frames...)
		fs[k].Image = img
		bad := make([]bool, n)
		bad[k] = true
		cases = append(cases, cullCase{scene: sc.name, kind: kind, row: kind, frames: fs, bad: bad})
	}
	scale := func(img *imaging.Image) float64 { return float64(max(img.W(), img.H())) * 0.75 / 1000 }
	type blur struct {
		motion   bool
		px, deg  float64
		defocusR float64
	}
	blurs := []blur{
		{motion: true, px: 5, deg: 0}, {motion: true, px: 8, deg: 45}, {motion: true, px: 12, deg: 90},
		{motion: true, px: 15, deg: 135},
		{defocusR: 2}, {defocusR: 4},
	}
	for i, b := range blurs {
		k := (i + 1) % n
		img := sc.frames[k].Image
		s := scale(img)
		if b.motion {
			one(fmt.Sprintf("motion %.0fpx@%.0f", b.px, b.deg), k, finish(motionBlur(img, b.px*s, b.deg), 0.8, uint64(i)))
		} else {
			one(fmt.Sprintf("defocus r%.0f", b.defocusR), k, finish(defocus(img, b.defocusR*s), 0.8, uint64(i)))
		}
	}
	w, h := sc.frames[0].Image.W(), sc.frames[0].Image.H()
	one("dark (x1/256)", n/2, finish(scaled(sc.frames[n/2].Image, 1.0/256), 1, 11))
	one("lens cap", 0, finish(flat(w, h, 0.0004, 0), 1.5, 12))
	one("grey card", n-1, finish(flat(w, h, 0.18, 0.08), 1.2, 13))

	// The set shot twice, one run slightly blurred (defocus about 1.5 px, or a
	// 4 px shake): the blurred run goes, whichever comes first.
	var fs []cull.Frame
	var bad []bool
	blurredFirst := len(sc.name)%2 == 0
	for run := range 2 {
		soft := (run == 0) == blurredFirst
		for k, f := range sc.frames {
			if soft {
				s := scale(f.Image)
				if k%2 == 0 {
					f.Image = finish(defocus(f.Image, 1.5*s), 0.8, uint64(20+k))
				} else {
					f.Image = finish(motionBlur(f.Image, 4*s, 30), 0.8, uint64(20+k))
				}
			}
			fs = append(fs, f)
			bad = append(bad, soft)
		}
	}
	cases = append(cases, cullCase{scene: sc.name, kind: "repeated set", row: "repeated set", frames: fs, bad: bad})
	return cases
}

// TestCullPrecisionRecall judges degraded copies of the real bracket sets (and
// of brackets made from single interior and exterior photos) and measures "set
// aside" over every frame: precision at least 0.9, recall at least 0.8, and no
// frame of an untouched set set aside.
func TestCullPrecisionRecall(t *testing.T) {
	scenes := loadCullScenes(t)
	synthetic := loadSyntheticScenes(t)
	var cases []cullCase
	for _, sc := range scenes {
		cases = append(cases, degradedCases(sc)...)
	}
	for k, sc := range synthetic {
		for _, c := range syntheticCases(sc, k) {
			c.row = "made: " + c.row
			cases = append(cases, c)
		}
	}
	type row struct{ tp, fn, fp, tn, exact int }
	rows := map[string]*row{}
	var order []string
	var total row
	for _, c := range cases {
		v := cull.Judge(c.frames)
		r := rows[c.row]
		if r == nil {
			r = &row{}
			rows[c.row] = r
			order = append(order, c.row)
		}
		kept := 0
		for i, bad := range c.bad {
			if v[i].Keep {
				kept++
			}
			switch {
			case bad && !v[i].Keep:
				r.tp++
				if exactReason(c.kind, v[i].Code) {
					r.exact++
				} else if !reasonFits(c.kind, v[i].Code) {
					t.Errorf("%s %s frame %d set aside for another reason: %s", c.scene, c.kind, i, v[i].Reason)
				}
			case bad:
				r.fn++
				t.Logf("missed: %s %s frame %d", c.scene, c.kind, i)
			case !v[i].Keep:
				r.fp++
				t.Logf("false set-aside: %s %s frame %d (%s)", c.scene, c.kind, i, v[i].Reason)
				if c.kind == "untouched" {
					t.Errorf("real frame set aside: %s frame %d (%s)", c.scene, i, v[i].Reason)
				}
			default:
				r.tn++
			}
		}
		if kept == 0 {
			t.Errorf("%s %s: every frame set aside", c.scene, c.kind)
		}
	}
	var tab strings.Builder
	fmt.Fprintf(&tab, "\n%-22s %5s %5s %5s %5s %6s\n", "case", "TP", "FN", "FP", "TN", "reason")
	for _, k := range order {
		r := rows[k]
		fmt.Fprintf(&tab, "%-22s %5d %5d %5d %5d %6d\n", k, r.tp, r.fn, r.fp, r.tn, r.exact)
		total.tp, total.fn, total.fp, total.tn, total.exact = total.tp+r.tp, total.fn+r.fn, total.fp+r.fp, total.tn+r.tn, total.exact+r.exact
	}
	fmt.Fprintf(&tab, "%-22s %5d %5d %5d %5d %6d", "all", total.tp, total.fn, total.fp, total.tn, total.exact)
	precision := float64(total.tp) / math.Max(1, float64(total.tp+total.fp))
	recall := float64(total.tp) / math.Max(1, float64(total.tp+total.fn))
	t.Logf("confusion of \"set aside\" over %d frames of %d real and %d made brackets (reason: set aside for the exact reason; blur may read as the other kind):%s",
		total.tp+total.fp+total.fn+total.tn, len(scenes), len(synthetic), tab.String())
	t.Logf("precision %.3f, recall %.3f", precision, recall)
	if precision < 0.9 || recall < 0.8 {
		t.Errorf("precision %.3f (want >= 0.9), recall %.3f (want >= 0.8)", precision, recall)
	}
}

// reasonFits reports whether a set-aside frame's code fits its degradation (blur
// may be read as either kind).
func reasonFits(kind string, c cull.Code) bool {
	if strings.HasPrefix(kind, "motion") || strings.HasPrefix(kind, "defocus") {
		return c == cull.CodeMotion || c == cull.CodeFocus
	}
	return exactReason(kind, c)
}

// exactReason reports whether a set-aside frame's code is its degradation's own.
func exactReason(kind string, c cull.Code) bool {
	switch {
	case strings.HasPrefix(kind, "motion"):
		return c == cull.CodeMotion
	case strings.HasPrefix(kind, "defocus"):
		return c == cull.CodeFocus
	case kind == "dark (x1/256)", kind == "lens cap":
		return c == cull.CodeBlack
	case kind == "grey card":
		return c == cull.CodeTest
	case kind == "repeated set":
		return c == cull.CodeRepeat
	}
	return false
}

// Cull on the real bracket folders keeps every frame, and reads and judges a scene
// quickly.
func TestCullRealScenesKeepAll(t *testing.T) {
	root := testphotos.Dir(t)
	ents, err := os.ReadDir(filepath.Join(root, "brackets"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		var files []string
		for _, n := range testphotos.Brackets(t, e.Name()) {
			files = append(files, filepath.Join(root, "brackets", e.Name(), n))
		}
		t0 := time.Now()
		kept, aside := Cull(files)
		dt := time.Since(t0)
		t.Logf("%-24s %d frames: kept %d in %v", e.Name(), len(files), len(kept), dt.Round(time.Millisecond))
		if len(aside) > 0 || len(kept) != len(files) {
			t.Errorf("%s: set aside %+v", e.Name(), aside)
		}
	}
}

func BenchmarkCullScene(b *testing.B) {
	b.ReportAllocs()
	root := testphotos.Dir(b)
	var files []string
	for _, n := range testphotos.Brackets(b, "building_exterior_phone") {
		files = append(files, filepath.Join(root, "brackets", "building_exterior_phone", n))
	}
	var frames []cull.Frame
	for _, f := range files {
		fr, err := ReadFrame(f)
		if err != nil {
			b.Fatal(err)
		}
		frames = append(frames, fr)
	}
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for _, f := range files {
				if _, err := ReadFrame(f); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("judge", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			cull.Judge(frames)
		}
	})
	b.Run("cull", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Cull(files)
		}
	})
}

// Cull on files: a lens-cap frame and a grey card written beside a real scene's
// paths are set aside with their reasons, the real frames kept in order, and an
// unreadable file is kept for the merge to report.
func TestCullFiles(t *testing.T) {
	root := testphotos.Dir(t)
	var files []string
	for _, n := range testphotos.Brackets(t, "oldhouse_exterior") {
		files = append(files, filepath.Join(root, "brackets", "oldhouse_exterior", n))
	}
	dir := t.TempDir()
	capFile := filepath.Join(dir, "cap.jpg")
	cardFile := filepath.Join(dir, "card.jpg")
	broken := filepath.Join(dir, "broken.jpg")
	if err := codec.WriteFile(capFile, finish(flat(1080, 720, 0.0004, 0), 1.5, 1), codec.EncodeOptions{Format: "jpeg"}); err != nil {
		t.Fatal(err)
	}
	if err := codec.WriteFile(cardFile, finish(flat(1080, 720, 0.18, 0.08), 1.2, 2), codec.EncodeOptions{Format: "jpeg"}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("not a photo"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := append([]string{capFile}, files[:2]...)
	in = append(in, cardFile)
	in = append(in, files[2:]...)
	in = append(in, broken)
	kept, aside := Cull(in)
	want := append(append([]string(nil), files...), broken)
	if strings.Join(kept, "\n") != strings.Join(want, "\n") {
		t.Errorf("kept:\n%s\nwant:\n%s", strings.Join(kept, "\n"), strings.Join(want, "\n"))
	}
	if len(aside) != 2 || aside[0].Path != capFile || aside[0].Code != cull.CodeBlack || aside[0].Reason != "black frame" ||
		aside[1].Path != cardFile || aside[1].Code != cull.CodeTest || aside[1].Reason != cull.Reason(cull.CodeTest) {
		t.Errorf("set aside: %+v", aside)
	}
}

// A bracket set shot twice, the second time a little shaken: grouping splits it
// at the repeated exposures, and CullScenes judges the two scenes together and
// sets the shaken run aside, leaving one scene. A scene of another view beside it
// is left alone.
func TestCullScenesSetShotTwice(t *testing.T) {
	root := testphotos.Dir(t)
	dir := t.TempDir()
	var originals, shaken []string
	for i, n := range testphotos.Brackets(t, "building_exterior_phone") {
		src := filepath.Join(root, "brackets", "building_exterior_phone", n)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, n)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		originals = append(originals, dst)
		f, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		meta, err := codec.ReadMeta(f, st.Size())
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		fr, err := ReadFrame(src)
		if err != nil {
			t.Fatal(err)
		}
		meta.DateTimeOriginal = meta.DateTimeOriginal.Add(2 * time.Minute)
		meta.Thumbnail = nil
		p := filepath.Join(dir, fmt.Sprintf("z_again_%d.jpg", i))
		img := finish(motionBlur(fr.Image, 6, 30), 0.8, uint64(i))
		if err := codec.WriteFile(p, img, codec.EncodeOptions{Format: "jpeg", Quality: 95, Meta: &meta}); err != nil {
			t.Fatal(err)
		}
		shaken = append(shaken, p)
	}
	res, err := Group([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 2 {
		t.Fatalf("grouping gave %d scenes, want the two runs: %+v", len(res.Scenes), res.Scenes)
	}
	scenes, aside := CullScenes(res.Scenes)
	if len(scenes) != 1 || strings.Join(scenes[0].Files, ",") != strings.Join(originals, ",") {
		t.Fatalf("scenes after culling: %+v", scenes)
	}
	var got []string
	for _, a := range aside {
		if a.Code != cull.CodeRepeat || a.Reason != "repeated set: kept the sharper one" {
			t.Errorf("set aside: %+v", a)
		}
		got = append(got, a.Path)
	}
	if strings.Join(got, ",") != strings.Join(shaken, ",") {
		t.Fatalf("set aside %v, want %v", got, shaken)
	}

	// The library beside the set in the folder: neither scene repeats the other.
	var lib []string
	for _, n := range testphotos.Brackets(t, "library_phone")[:3] {
		b, err := os.ReadFile(filepath.Join(root, "brackets", "library_phone", n))
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, "lib_"+n)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		lib = append(lib, p)
	}
	both := []Scene{{Files: originals}, {Files: lib}}
	scenes, aside = CullScenes(both)
	if len(scenes) != 2 || len(aside) != 0 {
		t.Fatalf("two views: scenes %+v, set aside %+v", scenes, aside)
	}
}
