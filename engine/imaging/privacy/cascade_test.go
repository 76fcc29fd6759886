package privacy

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var writePGMPath = flag.String("write-pgm", "", "TestOpenCVHits: write the scanned grey image here (for gen_opencv_hits.py)")

func mustModel(t testing.TB, rel string, mirrored bool) *Cascade {
	t.Helper()
	c, err := loadModel(rel, mirrored)
	if err != nil {
		var miss *MissingModelError
		if errors.As(err, &miss) {
			t.Skipf("cascade models not installed: %v", err)
		}
		t.Fatal(err)
	}
	return c
}

func TestParseModels(t *testing.T) {
	cases := []struct {
		rel          string
		w, h, stages int
		kind         featureType
		tilted       bool
	}{
		{"haarcascades/haarcascade_frontalface_alt2.xml", 20, 20, 20, haarFeatures, false},           // trees
		{"haarcascades/haarcascade_frontalface_default.xml", 24, 24, 25, haarFeatures, false},        // stumps
		{"haarcascades/haarcascade_russian_plate_number.xml", 60, 20, 20, haarFeatures, true},        // tilted
		{"haarcascades/haarcascade_licence_plate_rus_16stages.xml", 64, 16, 16, haarFeatures, false}, // old format
		{"lbpcascades/lbpcascade_frontalface_improved.xml", 45, 45, 19, lbpFeatures, false},
		{"lbpcascades/lbpcascade_profileface.xml", 20, 34, 16, lbpFeatures, false},
	}
	for _, tc := range cases {
		c := mustModel(t, tc.rel, false)
		w, h := c.Window()
		if w != tc.w || h != tc.h || c.Stages() != tc.stages || c.kind != tc.kind || c.hasTilted != tc.tilted {
			t.Errorf("%s: window %dx%d stages %d kind %d tilted %v; want %dx%d %d %d %v",
				tc.rel, w, h, c.Stages(), c.kind, c.hasTilted, tc.w, tc.h, tc.stages, tc.kind, tc.tilted)
		}
	}
}

func TestParseCascadeRejectsBadModels(t *testing.T) {
	const head = `<?xml version="1.0"?><opencv_storage><cascade><stageType>BOOST</stageType>` +
		`<featureType>HAAR</featureType><height>20</height><width>20</width>` +
		`<featureParams><maxCatCount>0</maxCatCount></featureParams>`
	stage := func(nodes, leaves string) string {
		return `<stages><_><maxWeakCount>1</maxWeakCount><stageThreshold>0.1</stageThreshold><weakClassifiers><_>` +
			`<internalNodes>` + nodes + `</internalNodes><leafValues>` + leaves + `</leafValues></_></weakClassifiers></_></stages>`
	}
	feature := func(rects string) string { return `<features><_><rects>` + rects + `</rects></_></features>` }
	good := head + stage("0 -1 0 0.5", "-1 1") + feature(`<_>0 0 4 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`
	if _, err := ParseCascade(strings.NewReader(good)); err != nil {
		t.Fatalf("minimal valid cascade refused: %v", err)
	}
	bad := map[string]string{
		"not xml":             "this is not xml",
		"empty storage":       `<opencv_storage></opencv_storage>`,
		"no stages":           head + `<stages></stages>` + feature(`<_>0 0 4 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`,
		"feature index":       head + stage("0 -1 7 0.5", "-1 1") + feature(`<_>0 0 4 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`,
		"leaf count":          head + stage("0 -1 0 0.5", "-1") + feature(`<_>0 0 4 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`,
		"rect outside window": head + stage("0 -1 0 0.5", "-1 1") + feature(`<_>10 10 14 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`,
		"one rect":            head + stage("0 -1 0 0.5", "-1 1") + feature(`<_>0 0 4 4 -1.</_>`) + `</cascade></opencv_storage>`,
		"tree cycle":          head + stage("1 -1 0 0.5 1 -2 0 0.5", "-1 1 2") + feature(`<_>0 0 4 4 -1.</_><_>0 0 2 4 2.</_>`) + `</cascade></opencv_storage>`,
		"unknown features":    strings.Replace(good, "HAAR", "HOG", 1),
		"truncated":           good[:len(good)/2],
	}
	for name, doc := range bad {
		if _, err := ParseCascade(strings.NewReader(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParseCascade(f *testing.F) {
	for _, rel := range []string{"haarcascades/haarcascade_licence_plate_rus_16stages.xml", "lbpcascades/lbpcascade_profileface.xml"} {
		if p, err := FindModel(rel); err == nil {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b[:min(len(b), 6000)])
			}
		}
	}
	f.Add([]byte(`<opencv_storage><cascade><featureType>LBP</featureType></cascade></opencv_storage>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := ParseCascade(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		// Whatever parses must evaluate without reading outside its tables.
		g := &gray{w: c.winW + 3, h: c.winH + 3, pix: make([]uint8, (c.winW+3)*(c.winH+3))}
		for i := range g.pix {
			g.pix[i] = uint8(i * 37)
		}
		scan(context.Background(), g, []cascadeRun{{c: c}})
	})
}

func TestMissingModel(t *testing.T) {
	t.Setenv(ModelsEnv, t.TempDir())
	_, err := FindModel("haarcascades/no_such_model.xml")
	var miss *MissingModelError
	if !errors.As(err, &miss) || !strings.Contains(err.Error(), "no_such_model.xml") || !strings.Contains(err.Error(), ModelsEnv) {
		t.Fatalf("want a MissingModelError naming the model and %s, got %v", ModelsEnv, err)
	}
	if _, err := loadModel("haarcascades/no_such_model.xml", false); !errors.As(err, &miss) {
		t.Fatalf("loadModel: %v", err)
	}
}

func TestModelsEnvComesFirst(t *testing.T) {
	src, err := FindModel("haarcascades/haarcascade_frontalface_alt2.xml")
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "haarcascade_frontalface_alt2.xml"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(ModelsEnv, dir)
	got, err := FindModel("haarcascades/haarcascade_frontalface_alt2.xml")
	if err != nil || got != filepath.Join(dir, "haarcascade_frontalface_alt2.xml") {
		t.Fatalf("FindModel = %q, %v; want the copy in %s", got, err, dir)
	}
}

// truncatedTo returns a copy of c keeping its first n stages.
func truncatedTo(c *Cascade, n int) *Cascade {
	t := *c
	t.stages = c.stages[:n]
	return &t
}

// hitsAtScale1 slides c over g at its own window size the way OpenCV does at scale 1:
// every second position, skipping the next one after a stage-0 rejection.
func hitsAtScale1(c *Cascade, g *gray) []string {
	var it integrals
	it.compute(g, c.hasTilted)
	var p prepared
	p.bind(c, it.stride)
	eval := p.evalHaar
	if c.kind == lbpFeatures {
		eval = p.evalLBP
	}
	var out []string
	for y := 0; y+c.winH <= g.h; y += 2 {
		for x := 0; x+c.winW <= g.w; x += 2 {
			switch eval(&it, int32(y*it.stride+x)) {
			case passed:
				out = append(out, fmt.Sprintf("%d,%d", x, y))
			case rejectFirst:
				x += 2
			}
		}
	}
	sort.Strings(out)
	return out
}

// TestOpenCVHits checks the evaluator window for window against OpenCV 4.6 itself:
// testdata/opencv_hits.txt holds the windows OpenCV's detectMultiScale accepted on the
// same grey image with the first six stages of each model (gen_opencv_hits.py). The
// models cover Haar stumps and trees, tilted features, the old XML format and LBP.
func TestOpenCVHits(t *testing.T) {
	img := loadPhoto(t, "privacy", "faces", "2008_004176.jpg")
	g0, err := grayOf(img, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := halve(g0)
	if *writePGMPath != "" {
		f, err := os.Create(*writePGMPath)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "P5\n%d %d\n255\n", g.w, g.h)
		f.Write(g.pix)
		f.Close()
	}
	f, err := os.Open(filepath.Join("testdata", "opencv_hits.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	checked := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		fields := strings.Fields(line)
		name, want := fields[0], fields[1:]
		dir := "haarcascades/"
		if strings.HasPrefix(name, "lbp") {
			dir = "lbpcascades/"
		}
		c := truncatedTo(mustModel(t, dir+name+".xml", false), 6)
		got := hitsAtScale1(c, g)
		sort.Strings(want)
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: %d windows, OpenCV %d", name, len(got), len(want))
		}
		if len(want) < 20 {
			t.Errorf("%s: only %d reference windows; the check is too weak", name, len(want))
		}
		checked++
	}
	if checked < 8 {
		t.Fatalf("checked %d models", checked)
	}
}

// TestMirroredCascade: the mirrored model on the photo finds exactly the mirror images
// of what the model finds on the mirrored photo.
func TestMirroredCascade(t *testing.T) {
	img := loadPhoto(t, "privacy", "faces", "2007_007763.jpg")
	g0, err := grayOf(img, 1)
	if err != nil {
		t.Fatal(err)
	}
	g := halve(g0)
	flipped := &gray{w: g.w, h: g.h, pix: make([]uint8, len(g.pix))}
	for y := 0; y < g.h; y++ {
		for x := 0; x < g.w; x++ {
			flipped.pix[y*g.w+g.w-1-x] = g.pix[y*g.w+x]
		}
	}
	for _, rel := range []string{"haarcascades/haarcascade_profileface.xml", "lbpcascades/lbpcascade_profileface.xml"} {
		c := truncatedTo(mustModel(t, rel, false), 5)
		m, err := c.Mirrored()
		if err != nil {
			t.Fatal(err)
		}
		all := func(c *Cascade, g *gray, flip bool) map[[2]int]bool {
			var it integrals
			it.compute(g, false)
			var p prepared
			p.bind(c, it.stride)
			eval := p.evalHaar
			if c.kind == lbpFeatures {
				eval = p.evalLBP
			}
			out := map[[2]int]bool{}
			for y := 0; y+c.winH <= g.h; y++ {
				for x := 0; x+c.winW <= g.w; x++ {
					if eval(&it, int32(y*it.stride+x)) == passed {
						if flip {
							out[[2]int{g.w - c.winW - x, y}] = true
						} else {
							out[[2]int{x, y}] = true
						}
					}
				}
			}
			return out
		}
		a, b := all(m, g, false), all(c, flipped, true)
		if len(a) < 20 || len(a) != len(b) {
			t.Fatalf("%s: mirrored model %d windows, model on mirrored image %d", rel, len(a), len(b))
		}
		for k := range a {
			if !b[k] {
				t.Fatalf("%s: window %v only from the mirrored model", rel, k)
			}
		}
	}
	if _, err := mustModel(t, "haarcascades/haarcascade_russian_plate_number.xml", false).Mirrored(); err == nil {
		t.Error("a cascade with tilted features was mirrored")
	}
}

// TestTiltedIntegral compares the tables with sums taken pixel by pixel.
func TestTiltedIntegral(t *testing.T) {
	img := loadPhoto(t, "privacy", "plates", "car20.jpg")
	g0, err := grayOf(img, 8)
	if err != nil {
		t.Fatal(err)
	}
	g := &gray{w: 61, h: 47, pix: make([]uint8, 61*47)}
	for y := 0; y < g.h; y++ {
		copy(g.row(y), g0.row(y + 20)[30:30+g.w])
	}
	var it integrals
	it.compute(g, true)
	for Y := 0; Y <= g.h; Y++ {
		for X := 0; X <= g.w; X++ {
			var s, tl uint32
			for y := 0; y < Y; y++ {
				for x := 0; x < g.w; x++ {
					v := uint32(g.pix[y*g.w+x])
					if x < X {
						s += v
					}
					if d := x - X + 1; d <= Y-1-y && -d <= Y-1-y {
						tl += v
					}
				}
			}
			if it.sum[Y*it.stride+X] != s || it.tilted[Y*it.stride+X] != tl {
				t.Fatalf("(%d,%d): sum %d tilted %d, want %d %d", X, Y, it.sum[Y*it.stride+X], it.tilted[Y*it.stride+X], s, tl)
			}
		}
	}
}

func TestGroupHits(t *testing.T) {
	var hits []rawHit
	add := func(x, y, w float32, n int) {
		for i := 0; i < n; i++ {
			hits = append(hits, rawHit{x: x + float32(i%3), y: y + float32(i%2), w: w, h: w})
		}
	}
	add(100, 100, 40, 6) // a face
	add(300, 80, 30, 2)  // a weak cluster
	add(108, 108, 12, 5) // something small inside the face
	gs := groupHits(hits, 3, 0.2)
	if len(gs) != 1 || gs[0].n != 6 || gs[0].x < 100 || gs[0].x > 103 {
		t.Fatalf("groups %+v", gs)
	}
	if gs := groupHits(hits, 0, 0.2); len(gs) != 2 {
		// The small cluster lies inside the face and has fewer members: dropped.
		t.Fatalf("minNeighbors 0: %d groups, want 2", len(gs))
	}
}
