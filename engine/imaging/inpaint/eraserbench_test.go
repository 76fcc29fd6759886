package inpaint

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/imaging"
)

// The eraser benchmark (make bench-eraser) fills synthetic blob holes, whose truth is
// known, and object removals, whose masks lie in testdata/objects, with ours and with
// the anchors of scripts/bench_inpaint.py, and prints every score. Anchor fills are
// cached in the -eraser-bench folder: they are slow (FSR_BEST takes minutes a case)
// and do not change between runs of ours.
var (
	benchDir    = flag.String("eraser-bench", "", "run the eraser benchmark, caching the anchors' fills in this folder")
	benchOurs   = flag.Bool("eraser-ours", false, "with -eraser-bench: score ours alone, without the anchors")
	benchCached = flag.Bool("eraser-cached", false, "with -eraser-bench: use only the anchor fills already cached, run none")
	benchSheet  = flag.String("eraser-sheet", "", "with -eraser-bench: write the object removals' contact sheet (JPEG) here")
)

// anchors are the methods of scripts/bench_inpaint.py, in table order.
var anchors = []string{"telea", "ns", "shiftmap", "fsr_best", "gmic"}

type benchCase struct {
	name      string
	synthetic bool
	img, mask *imaging.Image // img holds the truth (synthetic) or the object
}

// benchPhotos are the synthetic cases' photos, halved: FSR_BEST and shift-map take
// minutes on a full 15% hole.
var benchPhotos = [][2]string{
	{"interiors", "houses_109_bedroom.jpg"},
	{"interiors", "houses_218_kitchen.jpg"},
	{"interiors", "houses_111_bedroom.jpg"},
	{"exteriors", "houses_117_frontal.jpg"},
	{"exteriors", "houses_191_frontal.jpg"},
}

var benchFracs = []float64{0.03, 0.08, 0.15}

// blobMask is one smooth blob (a wobbly ellipse) of about frac of w×h, seeded.
func blobMask(w, h int, frac float64, seed uint64) *imaging.Image {
	rng := rand.New(rand.NewPCG(seed, 0x9e37))
	m := imaging.New(w, h, 1)
	area := frac * float64(w*h)
	cx := float64(w) * (0.35 + 0.3*rng.Float64())
	cy := float64(h) * (0.35 + 0.3*rng.Float64())
	a1, a2 := 0.1+0.15*rng.Float64(), 0.08*rng.Float64()
	k1, k2 := 2+rng.IntN(2), 3+rng.IntN(3)
	p1, p2 := rng.Float64()*2*math.Pi, rng.Float64()*2*math.Pi
	asp := math.Exp((rng.Float64()*2 - 1) * 0.4)
	r0 := math.Sqrt(area / math.Pi / (1 + (a1*a1+a2*a2)/2))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			dx, dy := (float64(x)-cx)/asp, (float64(y)-cy)*asp
			th := math.Atan2(dy, dx)
			rad := r0 * (1 + a1*math.Sin(float64(k1)*th+p1) + a2*math.Sin(float64(k2)*th+p2))
			if dx*dx+dy*dy <= rad*rad {
				m.Pix[y*w+x] = 1
			}
		}
	}
	return m
}

// cropTo copies the r part of m.
func cropTo(m *imaging.Image, r image.Rectangle) *imaging.Image {
	out := imaging.New(r.Dx(), r.Dy(), m.C)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		copy(out.Row(y-r.Min.Y), m.Row(y)[r.Min.X*m.C:r.Max.X*m.C])
	}
	return out
}

// aroundHole crops img and mask to the hole's box plus the margin Erase itself
// searches (40% of the box's side, at least 64 px): every method sees the same
// pixels, and the anchors' time stays bounded.
func aroundHole(img, mask *imaging.Image) (*imaging.Image, *imaging.Image) {
	w, h := mask.W(), mask.H()
	set := make([]bool, w*h)
	for i, v := range mask.Pix {
		set[i] = v > 0.5
	}
	b := bbox(set, w, h, 0)
	r := b.Inset(-max(64, max(b.Dx(), b.Dy())*2/5)).Intersect(image.Rect(0, 0, w, h))
	return cropTo(img, r), cropTo(mask, r)
}

func benchCases(tb testing.TB) []benchCase {
	var cases []benchCase
	for pi, p := range benchPhotos {
		orig := loadPhoto(tb, p[0], p[1])
		orig = imaging.Resize(orig, orig.W()/2, orig.H()/2)
		for fi, f := range benchFracs {
			mask := blobMask(orig.W(), orig.H(), f, uint64(100*pi+fi+1))
			img, m := aroundHole(orig, mask)
			name := fmt.Sprintf("%s/%.0f%%", strings.TrimSuffix(p[1], ".jpg"), 100*f)
			cases = append(cases, benchCase{name, true, img, m})
		}
	}
	files, err := filepath.Glob(filepath.Join("testdata", "objects", "*.png"))
	if err != nil || len(files) == 0 {
		tb.Fatalf("no object masks in testdata/objects: %v", err)
	}
	sort.Strings(files)
	for _, f := range files {
		// interiors_houses_111_bedroom_chair.png: folder, photo, object.
		base := strings.TrimSuffix(filepath.Base(f), ".png")
		dir, rest, _ := strings.Cut(base, "_")
		cut := strings.LastIndex(rest, "_")
		photo, object := rest[:cut], rest[cut+1:]
		orig := loadPhoto(tb, dir, photo+".jpg")
		mask := readPNG(tb, f)
		gray := imaging.New(mask.W(), mask.H(), 1)
		for y := 0; y < mask.H(); y++ {
			for x := 0; x < mask.W(); x++ {
				gray.Pix[y*gray.W()+x] = mask.At(x, y, 0)
			}
		}
		img, m := aroundHole(orig, gray)
		cases = append(cases, benchCase{photo + "/" + object, false, img, m})
	}
	return cases
}

// benchScore holds one fill's figures; ssim and seam against the truth on synthetic
// holes only (NaN otherwise).
type benchScore struct {
	ssim, seam, grad, hist float64
	secs                   float64
}

// ringOf marks the known pixels within reach of the hole.
func ringOf(hole []bool, w, h, reach int) []bool {
	d := imaging.Chamfer(hole, w, h, false)
	ring := make([]bool, w*h)
	for i, v := range d {
		ring[i] = !hole[i] && v <= int32(3*reach)
	}
	return ring
}

// histDistance is the mean of two total-variation distances (0 same, 1 disjoint)
// between the fill's pixels and the ring's: of their joint colour histograms (8
// bins a channel, encoded 8-bit RGB) and of their gradient-magnitude histograms (16
// bins of 4 levels of luma, the last open). A smear piles its gradients into the
// first bins; a wrong colour moves the first.
func histDistance(nr *image.NRGBA, lum []float64, hole, ring []bool, w, h int) float64 {
	g := gradMag(lum, w, h)
	var ch [2][512]float64
	var gh [2][16]float64
	var n [2]float64
	for i := range hole {
		k := -1
		switch {
		case hole[i]:
			k = 0
		case ring[i]:
			k = 1
		default:
			continue
		}
		p := nr.Pix[(i/w)*nr.Stride+4*(i%w):]
		ch[k][int(p[0]>>5)<<6|int(p[1]>>5)<<3|int(p[2]>>5)]++
		gh[k][min(15, int(g[i]/4))]++
		n[k]++
	}
	tv := func(a, b []float64) float64 {
		s := 0.0
		for i := range a {
			s += math.Abs(a[i]/n[0] - b[i]/n[1])
		}
		return s / 2
	}
	return (tv(ch[0][:], ch[1][:]) + tv(gh[0][:], gh[1][:])) / 2
}

// scoreFill measures fill against the case. ownBorder adds the grown hole's border
// to the seam (ours replaces that much).
func scoreFill(c benchCase, fill *imaging.Image, ownBorder bool) benchScore {
	w, h := c.img.W(), c.img.H()
	hole := make([]bool, w*h)
	area := 0
	for i, v := range c.mask.Pix {
		hole[i] = v > 0.5
		if hole[i] {
			area++
		}
	}
	lo, lf := lumaPlane(c.img), lumaPlane(fill)
	reach := max(8, int(math.Sqrt(float64(area))/4))
	ring := ringOf(hole, w, h, reach)
	s := benchScore{ssim: math.NaN(), seam: math.NaN()}
	s.hist = histDistance(fill.ToNRGBA(), lf, hole, ring, w, h)
	if c.synthetic {
		s.ssim = ssimIn(lo, lf, hole, w, h)
		s.seam = seamScore(lo, lf, borderBand(hole, w, h), w, h)
		if ownBorder {
			grown := ringOf(hole, w, h, growPixels(w, h))
			for i := range grown {
				grown[i] = grown[i] || hole[i]
			}
			s.seam = max(s.seam, seamScore(lo, lf, borderBand(grown, w, h), w, h))
		}
		s.grad = gradientRatio(lo, lf, hole, w, h)
		return s
	}
	// Object removals: the ring stands in for the hidden truth.
	g := gradMag(lf, w, h)
	var gin, gout, nin, nout float64
	for i := range hole {
		switch {
		case hole[i]:
			gin += g[i]
			nin++
		case ring[i]:
			gout += g[i]
			nout++
		}
	}
	s.grad = (gin / nin) / (gout / nout)
	return s
}

// anchorLimit bounds each anchor's time on one case: FSR_BEST takes over ten minutes
// on a large hole. A method that runs out is marked in the cache and shown as n/a.
const anchorLimit = 150 * time.Second

// anchorFills returns the anchors' fills of c, running scripts/bench_inpaint.py for
// those not cached in dir.
func anchorFills(t *testing.T, script, dir string, c benchCase) (map[string]*imaging.Image, map[string]float64) {
	cd := filepath.Join(dir, caseDir(c.name))
	if err := os.MkdirAll(cd, 0o755); err != nil {
		t.Fatal(err)
	}
	in := blank(c.img, c.mask)
	inPath, maskPath := filepath.Join(cd, "in.png"), filepath.Join(cd, "mask.png")
	writePNG(t, inPath, in.ToNRGBA())
	writePNG(t, maskPath, c.mask.ToNRGBA())
	secs := map[string]float64{}
	for _, a := range anchors {
		if _, err := os.Stat(filepath.Join(cd, a+".png")); err == nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(cd, a+".timeout")); err == nil || *benchCached {
			continue
		}
		// One method at a time, each with its own time limit.
		ctx, cancel := context.WithTimeout(context.Background(), anchorLimit)
		out, err := exec.CommandContext(ctx, pythonCV, script, inPath, maskPath, cd, a).CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		switch {
		case timedOut:
			os.WriteFile(filepath.Join(cd, a+".timeout"), []byte(anchorLimit.String()+"\n"), 0o644)
			continue
		case err != nil:
			t.Errorf("%s: %s: %v\n%s", c.name, a, err, out)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(cd, "times.txt")); err == nil {
			os.WriteFile(filepath.Join(cd, "times-"+a+".txt"), b, 0o644)
		}
	}
	if ts, _ := filepath.Glob(filepath.Join(cd, "times-*.txt")); len(ts) > 0 {
		for _, f := range ts {
			b, _ := os.ReadFile(f)
			for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				var m string
				var v float64
				if _, err := fmt.Sscanf(line, "%s %f", &m, &v); err == nil {
					secs[m] = v
				}
			}
		}
	}
	fills := map[string]*imaging.Image{}
	for _, a := range anchors {
		if _, err := os.Stat(filepath.Join(cd, a+".png")); err == nil {
			fills[a] = readPNG(t, filepath.Join(cd, a+".png"))
		}
	}
	return fills, secs
}

// caseDir is the folder name of a case in the cache.
func caseDir(name string) string { return strings.NewReplacer("/", "_", "%", "pc").Replace(name) }

func benchScript(t *testing.T) string {
	t.Helper()
	opencvScript(t) // skips without python3 and cv2
	if out, err := exec.Command(pythonCV, "-c", "import cv2; cv2.xphoto.inpaint").CombinedOutput(); err != nil {
		t.Skipf("no cv2.xphoto: %v %s", err, out)
	}
	if _, err := exec.LookPath("gmic"); err != nil {
		t.Skip("no gmic (apt-get install gmic)")
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "scripts", "bench_inpaint.py")
}

// TestEraserBench is the benchmark itself; it runs only with -eraser-bench.
func TestEraserBench(t *testing.T) {
	if *benchDir == "" {
		t.Skip("run with -eraser-bench DIR (make bench-eraser)")
	}
	cases := benchCases(t)
	methods := append([]string{"ours"}, anchors...)
	script := ""
	if *benchOurs {
		methods = methods[:1]
	} else {
		script = benchScript(t)
	}
	scores := make([]map[string]benchScore, len(cases))
	fills := make([]map[string]*imaging.Image, len(cases))
	// The anchors run two cases at a time; ours runs alone, so its time is its own.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	var mu sync.Mutex
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if *benchOurs {
				mu.Lock()
				scores[i], fills[i] = map[string]benchScore{}, map[string]*imaging.Image{}
				mu.Unlock()
				return
			}
			f, secs := anchorFills(t, script, *benchDir, c)
			sc := map[string]benchScore{}
			for _, a := range anchors {
				if f[a] == nil {
					continue
				}
				s := scoreFill(c, f[a], false)
				s.secs = secs[a]
				sc[a] = s
			}
			mu.Lock()
			scores[i], fills[i] = sc, f
			mu.Unlock()
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	for i, c := range cases {
		start := time.Now()
		ours, err := Erase(context.Background(), blank(c.img, c.mask), c.mask, Options{Seed: 1})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		s := scoreFill(c, ours, true)
		s.secs = time.Since(start).Seconds()
		scores[i]["ours"] = s
		fills[i]["ours"] = ours
		cd := filepath.Join(*benchDir, caseDir(c.name))
		if err := os.MkdirAll(cd, 0o755); err == nil {
			writePNG(t, filepath.Join(cd, "ours.png"), ours.ToNRGBA())
		}
	}
	printTable(t, cases, scores, methods)
	if !*benchOurs {
		// The anchors' synthetic figures, for anchorFigures in targets_test.go.
		var b strings.Builder
		for i, c := range cases {
			if !c.synthetic {
				continue
			}
			fmt.Fprintf(&b, "\t%q: {", c.name)
			for _, a := range anchors {
				s, ok := scores[i][a]
				if !ok {
					continue
				}
				fmt.Fprintf(&b, "%q: {%.4f, %.4f, %.4f, %.4f}, ", a, s.ssim, s.seam, s.grad, s.hist)
			}
			b.WriteString("},\n")
		}
		t.Logf("anchor figures:\n%s", b.String())
	}
	if *benchSheet != "" && !*benchOurs {
		var rows [][]*imaging.Image
		for i, c := range cases {
			if c.synthetic {
				continue
			}
			row := []*imaging.Image{c.img, maskOverlay(c.img, c.mask)}
			for _, m := range anchors {
				f := fills[i][m]
				if f == nil {
					f = imaging.New(c.img.W(), c.img.H(), c.img.C) // over the time limit: black
				}
				row = append(row, f)
			}
			rows = append(rows, append(row, fills[i]["ours"]))
		}
		writeJPEG(t, *benchSheet, contactSheet(rows, 200))
		t.Logf("contact sheet (before, mask, %s, ours): %s", strings.Join(anchors, ", "), *benchSheet)
	}
}

func printTable(t *testing.T, cases []benchCase, scores []map[string]benchScore, methods []string) {
	var b strings.Builder
	for _, syn := range []bool{true, false} {
		if syn {
			fmt.Fprintf(&b, "\nSynthetic blob holes (3, 8, 15%%; truth known): SSIM in the hole (higher better) / seam (lower) / gradient ratio to the truth (1 ideal) / histogram distance to the ring (lower)\n")
		} else {
			fmt.Fprintf(&b, "\nObject removals: gradient ratio to the ring (1 ideal) / histogram distance to the ring (lower)\n")
		}
		fmt.Fprintf(&b, "%-34s", "case")
		for _, m := range methods {
			fmt.Fprintf(&b, " | %-26s", m)
		}
		b.WriteString("\n")
		// Means over the cases every method filled (an anchor may run out of time),
		// then each method's over all the cases it filled.
		sum, all := map[string]benchScore{}, map[string]benchScore{}
		cnt, allCnt := 0, map[string]int{}
		add := func(m map[string]benchScore, k string, s benchScore) {
			a := m[k]
			a.ssim += s.ssim
			a.seam += s.seam
			a.grad += s.grad
			a.hist += s.hist
			a.secs += s.secs
			m[k] = a
		}
		for i, c := range cases {
			if c.synthetic != syn {
				continue
			}
			fmt.Fprintf(&b, "%-34s", c.name)
			common := true
			for _, m := range methods {
				s, ok := scores[i][m]
				if !ok {
					fmt.Fprintf(&b, " | %-26s", "n/a (over time limit)")
					common = false
					continue
				}
				allCnt[m]++
				add(all, m, s)
				fmt.Fprintf(&b, " | %s", s.cell(syn))
			}
			b.WriteString("\n")
			if common {
				cnt++
				for _, m := range methods {
					add(sum, m, scores[i][m])
				}
			}
		}
		div := func(a benchScore, n int) benchScore {
			k := float64(n)
			return benchScore{a.ssim / k, a.seam / k, a.grad / k, a.hist / k, a.secs / k}
		}
		fmt.Fprintf(&b, "%-34s", fmt.Sprintf("MEAN, %d cases all filled", cnt))
		for _, m := range methods {
			fmt.Fprintf(&b, " | %s", div(sum[m], cnt).cell(syn))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "%-34s", "MEAN, each over its cases")
		for _, m := range methods {
			fmt.Fprintf(&b, " | %s", div(all[m], allCnt[m]).cell(syn))
		}
		b.WriteString("\n")
		fmt.Fprintf(&b, "%-34s", "mean seconds a case")
		for _, m := range methods {
			fmt.Fprintf(&b, " | %-26s", fmt.Sprintf("%.2f (%d cases)", all[m].secs/float64(allCnt[m]), allCnt[m]))
		}
		b.WriteString("\n")
	}
	t.Log(b.String())
}

func (s benchScore) cell(synthetic bool) string {
	if synthetic {
		return fmt.Sprintf("%.3f %.3f %.2f %.3f     ", s.ssim, s.seam, s.grad, s.hist)
	}
	return fmt.Sprintf("%-26s", fmt.Sprintf("%.2f %.3f", s.grad, s.hist))
}

// maskOverlay tints the masked pixels red.
func maskOverlay(img, mask *imaging.Image) *imaging.Image {
	out := img.Clone()
	for y := 0; y < img.H(); y++ {
		for x := 0; x < img.W(); x++ {
			if mask.At(x, y, 0) > 0.5 && img.C >= 3 {
				out.Set(x, y, 0, 0.5+0.5*out.At(x, y, 0))
				out.Set(x, y, 1, 0.3*out.At(x, y, 1))
				out.Set(x, y, 2, 0.3*out.At(x, y, 2))
			}
		}
	}
	return out
}

func writeJPEG(tb testing.TB, path string, m image.Image) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := jpeg.Encode(f, m, &jpeg.Options{Quality: 85}); err != nil {
		f.Close()
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}
