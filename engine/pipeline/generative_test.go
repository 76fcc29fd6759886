package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/a1111"
	"github.com/porchlight/porchlight/engine/backends/backendtest"
	"github.com/porchlight/porchlight/engine/backends/comfyui"
	"github.com/porchlight/porchlight/engine/backends/iopaint"
	"github.com/porchlight/porchlight/engine/backends/openai"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

const eraserMaskID = "6a0f3c1e-5b7d-4e2a-9c8b-1d2e3f4a5b6c"

// eraseMaskFile writes a white-on-transparent mask marking [x0,x1)×[y0,y1).
func eraseMaskFile(t testing.TB, w, h, x0, y0, x1, y1 int) string {
	t.Helper()
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			copy(m.Pix[y*m.Stride+4*x:], []byte{255, 255, 255, 255})
		}
	}
	p := fmt.Sprintf("%s/erase_%dx%d.png", t.TempDir(), w, h)
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func spec(t testing.TB, typ, url string, extra map[string]any) backends.Spec {
	raw := map[string]any{"type": typ, "url": url, "retries": 1, "backoff": "1ms"}
	for k, v := range extra {
		raw[k] = v
	}
	return backendtest.Spec(t, typ, raw)
}

// fakeBackends starts a protocol-strict fake for each generative feature, a
// different protocol for each, and registers the steps.
func fakeBackends(t *testing.T, p *Pipeline) map[string]interface{ Set(backendtest.Script) } {
	t.Helper()
	comfy := backendtest.NewComfyUI(t)
	sd := backendtest.NewA1111(t)
	iop := backendtest.NewIOPaint(t)
	oai := backendtest.NewOpenAI(t, "sk-fake")
	mk := func(b backends.Backend, err error) backends.Backend {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cb := mk(comfyui.New(spec(t, "comfyui", comfy.URL, map[string]any{"model": "realisticVision_v51.safetensors", "poll_interval": "10ms",
		"workflows": map[string]any{"indoor_staging": "../backends/comfyui/workflows/img2img.json"}})))
	ab := mk(a1111.New(spec(t, "a1111", sd.URL, map[string]any{"progress_interval": "10ms"})))
	ib := mk(iopaint.New(spec(t, "iopaint", iop.URL, nil)))
	ob := mk(openai.New(spec(t, "openai", oai.URL, map[string]any{"api_key": "sk-fake", "model": "dall-e-2", "sizes": "512x512"})))
	reg, err := backends.Static(map[string]backends.Backend{
		backends.FeatureIndoorStaging:  cb,
		backends.FeatureOutdoorStaging: ab,
		backends.FeatureMessCleaner:    ib,
		backends.FeatureDeclutter:      ob,
		backends.FeatureMagicEraser:    ib,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := RegisterBackends(p, reg); err != nil {
		t.Fatal(err)
	}
	return map[string]interface{ Set(backendtest.Script) }{
		backends.FeatureIndoorStaging: comfy, backends.FeatureOutdoorStaging: sd,
		backends.FeatureMessCleaner: iop, backends.FeatureDeclutter: oai, backends.FeatureMagicEraser: iop,
	}
}

func decodeOutput(t testing.TB, data []byte) *imaging.Image {
	t.Helper()
	img, _, err := codec.Decode(bytes.NewReader(data), int64(len(data)), codec.DecodeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// Every gen_edit value completes through its configured backend, records its recipe
// version, and delivers the photo's size.
func TestEveryGenEditRunsOnItsBackend(t *testing.T) {
	p := New(Config{Logger: quiet()})
	fakeBackends(t, p)
	kimB := []string{"brackets", "house_interior_kim", "B.jpg"}
	kimC := []string{"brackets", "house_interior_kim", "C.jpg"}
	fa := photos(t, kimA, kimB, kimC)
	fa.paths[eraserMaskID] = eraseMaskFile(t, 752, 500, 300, 200, 420, 330)
	cases := []struct {
		opts   core.Options
		inputs []string
		recipe string
	}{
		{core.Options{GenEdit: ptr("indoor_staging"), StagingPreset: ptr("scandi_minimal"), RoomType: ptr("bedroom")}, []string{"in0"}, "indoor_staging"},
		{core.Options{GenEdit: ptr("outdoor_staging"), GenQuality: ptr("fast")}, []string{"in0"}, "outdoor_staging"},
		{core.Options{GenEdit: ptr("mess_cleaner"), GenQuality: ptr("best")}, []string{"in0"}, "mess_cleaner"},
		{core.Options{GenEdit: ptr("declutter_local")}, []string{"in0"}, "declutter_local"},
		{core.Options{GenEdit: ptr("declutter_local")}, []string{"in0", "in1", "in2"}, "declutter_local"},
		{core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID)}, []string{"in0"}, "magic_eraser"},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s/%d", *c.opts.GenEdit, len(c.inputs)), func(t *testing.T) {
			order := fmt.Sprint("order-", i)
			var last Progress
			res, err := p.Run(context.Background(), Request{OrderID: order, Owner: "k", Inputs: c.inputs,
				Options: resolved(t, c.opts), Assets: fa}, func(pr Progress) { last = pr })
			if err != nil {
				t.Fatal(err)
			}
			want, _ := catalog.RecipeVersion(c.recipe)
			if res.Recipes[c.recipe] != want || res.Recipes[catalog.RecipeDevelop] == "" {
				t.Errorf("recipes %v", res.Recipes)
			}
			if last.Percent != 100 {
				t.Errorf("last progress %+v", last)
			}
			out := decodeOutput(t, fa.out[order])
			if out.W() != 752 || out.H() != 500 {
				t.Errorf("output %dx%d, want the photo's 752x500", out.W(), out.H())
			}
		})
	}
}

// Without a backend, the order fails with feature_unavailable naming the feature.
func TestGenEditWithoutBackendFails(t *testing.T) {
	p := New(Config{Logger: quiet()})
	if err := RegisterBackends(p, nil); err != nil {
		t.Fatal(err)
	}
	fa := photos(t, kimA)
	_, err := p.Run(context.Background(), Request{OrderID: "o", Inputs: []string{"in0"},
		Options: resolved(t, core.Options{GenEdit: ptr("mess_cleaner")}), Assets: fa}, nil)
	if CodeOf(err) != CodeFeatureUnavailable || !strings.Contains(err.Error(), "mess cleaner") {
		t.Fatalf("err = %v", err)
	}
	if p.FeatureAvailable(catalog.FeatureMessCleaner) {
		t.Error("mess cleaner available without a backend")
	}
}

// decodePhoto decodes a test photo as the pipeline does.
func decodePhoto(t testing.TB, rel []string) *imaging.Image {
	t.Helper()
	return toRGB(decodeFile(t, photos(t, rel).paths["in0"]))
}

// The magic eraser on a backend changes the masked region and leaves every pixel
// outside the mask exactly as it was, though the model nudged them.
func TestBackendEraserKeepsUnmaskedPixels(t *testing.T) {
	iop := backendtest.NewIOPaint(t)
	b, err := iopaint.New(spec(t, "iopaint", iop.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	src := decodePhoto(t, kimA)
	fa := photos(t, kimA)
	fa.paths[eraserMaskID] = eraseMaskFile(t, 752, 500, 100, 120, 260, 300)
	j := &Job{Image: src.Clone(), Options: resolved(t, core.Options{GenEdit: ptr("magic_eraser"), Mask: ptr(eraserMaskID)}), Assets: fa}
	if err := GenerativeStep(backends.FeatureMagicEraser, b, nil).Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	changedInside, changedOutside := 0, 0
	for y := 0; y < 500; y++ {
		for x := 0; x < 752; x++ {
			inside := x >= 100 && x < 260 && y >= 120 && y < 300
			for c := 0; c < 3; c++ {
				if j.Image.At(x, y, c) != src.At(x, y, c) {
					if inside {
						changedInside++
					} else {
						changedOutside++
					}
					break
				}
			}
		}
	}
	if changedOutside != 0 {
		t.Errorf("%d pixels outside the mask changed", changedOutside)
	}
	if changedInside < 160*180*9/10 {
		t.Errorf("only %d pixels inside the mask changed", changedInside)
	}
	jobs := iop.Jobs()
	if len(jobs) != 1 || !jobs[0].Masked || jobs[0].Strength != 1 {
		t.Errorf("jobs %+v", jobs)
	}
}

// Declutter without a user mask keeps the photo's own pixels wherever the model
// changed nothing (the fake changes a block and nudges the rest by 2 levels).
func TestDeclutterKeepsUnchangedPixels(t *testing.T) {
	iop := backendtest.NewIOPaint(t)
	b, err := iopaint.New(spec(t, "iopaint", iop.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	library := decodePhoto(t, []string{"interiors", "houses_109_bedroom.jpg"})
	src := imaging.Resize(library, 1600, library.H()*1600/library.W()) // above the tier's edge
	j := &Job{Image: src.Clone(), Options: resolved(t, core.Options{GenEdit: ptr("declutter_local")})}
	if err := GenerativeStep(backends.FeatureDeclutter, b, nil).Run(context.Background(), j); err != nil {
		t.Fatal(err)
	}
	w, h := src.W(), src.H()
	job := iop.Jobs()[0]
	if max(job.Width, job.Height) != 1536 || job.Masked {
		t.Errorf("sent %dx%d masked=%v, want the balanced tier's 1536 edge without a mask", job.Width, job.Height, job.Masked)
	}
	same, total := 0, 0
	blockChanged, block := 0, 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			inBlock := x >= w/4+12 && x < 3*w/4-12 && y >= h/2+12 && y < 5*h/6-12
			farOff := x < w/4-24 || x >= 3*w/4+24 || y < h/2-24 || y >= 5*h/6+24
			eq := j.Image.At(x, y, 0) == src.At(x, y, 0) && j.Image.At(x, y, 1) == src.At(x, y, 1) && j.Image.At(x, y, 2) == src.At(x, y, 2)
			if farOff {
				total++
				if eq {
					same++
				}
			}
			if inBlock {
				block++
				if !eq {
					blockChanged++
				}
			}
		}
	}
	if same < total*99/100 {
		t.Errorf("%d of %d pixels away from the removed block kept the photo's values", same, total)
	}
	if blockChanged < block*99/100 {
		t.Errorf("%d of %d pixels of the removed block changed", blockChanged, block)
	}
}

// Answers that cannot be results fail the order with backend_error and store no
// output: a blank frame, the photo unchanged, bytes that are no image, a tiny image.
func TestBadAnswersFailTheOrder(t *testing.T) {
	p := New(Config{Logger: quiet()})
	fakes := fakeBackends(t, p)
	fa := photos(t, kimA)
	fa.paths[eraserMaskID] = eraseMaskFile(t, 752, 500, 300, 200, 420, 330)
	cases := []struct {
		mode backendtest.Mode
		want string
	}{
		{backendtest.ModeBlank, "blank image"},
		{backendtest.ModeEcho, "unchanged"},
		{backendtest.ModeGarbage, "not an image"},
		{backendtest.ModeTiny, "too small"},
		{backendtest.ModeFail, "CUDA out of memory"},
	}
	for _, gen := range []string{"indoor_staging", "magic_eraser", "declutter_local"} {
		feature, _ := catalog.GenEditFeature(gen)
		for _, c := range cases {
			fakes[feature].Set(backendtest.Script{Mode: c.mode})
			opts := core.Options{GenEdit: ptr(gen)}
			if gen == "magic_eraser" {
				opts.Mask = ptr(eraserMaskID)
			}
			order := fmt.Sprintf("%s-%d", gen, c.mode)
			_, err := p.Run(context.Background(), Request{OrderID: order, Inputs: []string{"in0"}, Options: resolved(t, opts), Assets: fa}, nil)
			if CodeOf(err) != CodeBackendError || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s, mode %d: %v (code %s), want backend_error mentioning %q", gen, c.mode, err, CodeOf(err), c.want)
			}
			if _, ok := fa.out[order]; ok {
				t.Errorf("%s, mode %d: an output was stored", gen, c.mode)
			}
		}
		fakes[feature].Set(backendtest.Script{})
	}
}

// The same photo and options give the same seed and the same pixels; another
// prompt gives another seed.
func TestGenerativeIsRepeatable(t *testing.T) {
	p := New(Config{Logger: quiet()})
	fakeBackends(t, p)
	fa := photos(t, kimA)
	run := func(order string, o core.Options) []byte {
		if _, err := p.Run(context.Background(), Request{OrderID: order, Inputs: []string{"in0"}, Options: resolved(t, o), Assets: fa}, nil); err != nil {
			t.Fatal(err)
		}
		return fa.out[order]
	}
	o := core.Options{GenEdit: ptr("indoor_staging"), Format: ptr("png")}
	a, b := run("a", o), run("b", o)
	if !bytes.Equal(a, b) {
		t.Error("the same order gave different pixels")
	}
	src := decodePhoto(t, kimA)
	r1 := resolved(t, o)
	o.StagingStyle = ptr("industrial")
	r2 := resolved(t, o)
	rc := genRecipes[backends.FeatureIndoorStaging]
	s1, s2 := seedOf(rc, rc.params(r1, ""), src, nil), seedOf(rc, rc.params(r2, ""), src, nil)
	if s1 == s2 || s1 != seedOf(rc, rc.params(r1, ""), src, nil) || s1 <= 0 {
		t.Errorf("seeds %d %d", s1, s2)
	}
}

// A backend that does not answer within its timeout fails the order saying so; a
// cancelled order stops the backend's job.
func TestBackendTimeoutAndCancel(t *testing.T) {
	sd := backendtest.NewA1111(t)
	// The timeout leaves time for the request to reach the server on a slow machine
	// (the race detector makes encoding the photo take most of a second); the fake
	// then holds it for an hour.
	b, err := a1111.New(spec(t, "a1111", sd.URL, map[string]any{"timeout": "3s", "progress_interval": "10ms"}))
	if err != nil {
		t.Fatal(err)
	}
	p := New(Config{Logger: quiet()})
	p.Register(GenerativeStep(backends.FeatureOutdoorStaging, b, nil))
	fa := photos(t, kimA)
	sd.Set(backendtest.Script{Mode: backendtest.ModeHang})
	o := resolved(t, core.Options{GenEdit: ptr("outdoor_staging")})
	_, err = p.Run(context.Background(), Request{OrderID: "slow", Inputs: []string{"in0"}, Options: o, Assets: fa}, nil)
	if CodeOf(err) != CodeBackendError || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("err = %v", err)
	}
	if !sd.WaitCancelled(1, 10*time.Second) {
		t.Error("the timed-out job was not interrupted")
	}
	// A cancelled order stops the backend's job (on a backend with time to spare).
	b, err = a1111.New(spec(t, "a1111", sd.URL, map[string]any{"progress_interval": "10ms"}))
	if err != nil {
		t.Fatal(err)
	}
	p.Register(GenerativeStep(backends.FeatureOutdoorStaging, b, nil))
	ctx, cancel := context.WithCancel(context.Background())
	before, cancelled := len(sd.Jobs()), sd.Cancelled()
	go func() {
		// Cancel once the job has reached the server; a job that never does is
		// cancelled after a minute, and the check below says so.
		sd.WaitJobs(time.Minute, func(jobs []backendtest.Job) bool { return len(jobs) > before })
		cancel()
	}()
	_, err = p.Run(ctx, Request{OrderID: "cancelled", Inputs: []string{"in0"}, Options: o, Assets: fa}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if !sd.WaitCancelled(cancelled+1, 10*time.Second) {
		t.Error("the cancelled job was not interrupted")
	}
}

func TestIndoorPrompt(t *testing.T) {
	cases := []struct {
		opts     core.Options
		has, not []string
		strength float64
	}{
		{core.Options{}, []string{"staging of the room, furnished with contemporary furniture", "Keep the existing floor", "Keep the wall colour"},
			[]string{"convert"}, 0.72},
		{core.Options{RoomType: ptr("child_room"), StagingStyle: ptr("industrial")},
			[]string{"as a child's bedroom", "convert its use", "industrial loft furniture"}, nil, 0.72},
		{core.Options{StagingPreset: ptr("scandi_minimal")},
			[]string{"Pared-back Scandinavian interior", "Paint the walls white"}, []string{"light oak and birch pieces"}, 0.72},
		{core.Options{StagingPreset: ptr("scandi_minimal"), StyleClause: ptr("Mid-century teak furniture and mustard velvet")},
			[]string{"furnished with Mid-century teak furniture and mustard velvet", "Paint the walls white"}, []string{"Pared-back"}, 0.72},
		{core.Options{StagingStyle: ptr("keep"), FloorFinish: ptr("tiles_white")},
			[]string{"without restaging", "Replace the floor with large white floor tiles"}, []string{"furnished with"}, 0.45},
	}
	for _, c := range cases {
		p := indoorParams(resolved(t, c.opts), "")
		for _, s := range c.has {
			if !strings.Contains(p.Prompt, s) {
				t.Errorf("%+v: prompt lacks %q:\n%s", c.opts, s, p.Prompt)
			}
		}
		for _, s := range c.not {
			if strings.Contains(p.Prompt, s) {
				t.Errorf("%+v: prompt has %q:\n%s", c.opts, s, p.Prompt)
			}
		}
		if p.Strength != c.strength || !strings.Contains(p.Negative, "watermark") {
			t.Errorf("%+v: strength %v negative %q", c.opts, p.Strength, p.Negative)
		}
	}
	// With a classifier: auto takes the detected room; a named room that differs asks
	// for a conversion from the detected one.
	for _, c := range []struct {
		room, detected, has, not string
	}{
		{"auto", "bedroom", "staging of the room as a bedroom,", "convert"},
		{"living_room", "bedroom", "as a living room, converting it from a bedroom within the same walls", "if the photo shows"},
		{"bedroom", "bedroom", "as a bedroom,", "convert"},
		{"auto", "", "staging of the room, furnished", "convert"},
	} {
		p := indoorParams(resolved(t, core.Options{RoomType: ptr(c.room)}), c.detected)
		if !strings.Contains(p.Prompt, c.has) || strings.Contains(p.Prompt, c.not) {
			t.Errorf("room %s detected %q: %s", c.room, c.detected, p.Prompt)
		}
	}
	for q, want := range map[string]tier{"fast": tiers["fast"], "best": tiers["best"], "balanced": tiers["balanced"]} {
		if got := indoorParams(resolved(t, core.Options{GenQuality: ptr(q)}), "").tier; got != want {
			t.Errorf("%s: tier %+v", q, got)
		}
		// Declutter and the magic eraser have no gen_quality of their own.
		if got := declutterParams(resolved(t, core.Options{GenQuality: ptr(q)}), "").tier; got != tiers["balanced"] {
			t.Errorf("declutter with %s: tier %+v", q, got)
		}
	}
}

// A configured room classifier names the room of auto orders in the prompt and in
// the order's notes; one that cannot tell leaves it to the model.
func TestRoomClassifier(t *testing.T) {
	comfy := backendtest.NewComfyUI(t)
	sd := backendtest.NewA1111(t)
	cb, err := comfyui.New(spec(t, "comfyui", comfy.URL, map[string]any{"model": "realisticVision_v51.safetensors", "poll_interval": "10ms",
		"workflows": map[string]any{"indoor_staging": "../backends/comfyui/workflows/img2img.json"}}))
	if err != nil {
		t.Fatal(err)
	}
	ab, err := a1111.New(spec(t, "a1111", sd.URL, nil))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := backends.Static(map[string]backends.Backend{backends.FeatureIndoorStaging: cb})
	if err != nil {
		t.Fatal(err)
	}
	reg.SetRoomClassifier(ab.(backends.RoomClassifier))
	p := New(Config{Logger: quiet()})
	if err := RegisterBackends(p, reg); err != nil {
		t.Fatal(err)
	}
	fa := photos(t, kimA)
	sd.SetCaption("a dining room with a table and chairs and a bookshelf")
	res, err := p.Run(context.Background(), Request{OrderID: "a", Inputs: []string{"in0"},
		Options: resolved(t, core.Options{GenEdit: ptr("indoor_staging")}), Assets: fa}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "|"), "room detected as dining_room") ||
		!strings.Contains(comfy.Jobs()[0].Prompt, "as a dining room,") {
		t.Errorf("notes %v prompt %s", res.Notes, comfy.Jobs()[0].Prompt)
	}
	sd.SetCaption("a photo")
	res, err = p.Run(context.Background(), Request{OrderID: "b", Inputs: []string{"in0"},
		Options: resolved(t, core.Options{GenEdit: ptr("indoor_staging"), RoomType: ptr("office")}), Assets: fa}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(res.Notes, "|"), "could not be detected") ||
		!strings.Contains(comfy.Jobs()[1].Prompt, "as a home office (if the photo shows another kind of room") {
		t.Errorf("notes %v prompt %s", res.Notes, comfy.Jobs()[1].Prompt)
	}
}

func TestBlendHelpers(t *testing.T) {
	m := imaging.New(40, 30, 1)
	m.Set(20, 15, 0, 1)
	d := dilate(m, 2)
	if d.At(22, 17, 0) != 1 || d.At(23, 15, 0) != 0 || d.At(18, 13, 0) != 1 {
		t.Error("dilate by 2 is not a 5x5 square")
	}
	for i := range m.Pix {
		m.Pix[i] = 0.25
	}
	s := soften(m, 3)
	for _, v := range s.Pix {
		if v < 0.2499 || v > 0.2501 {
			t.Fatalf("soften changed a flat field to %v", v)
		}
	}
	src, gen := imaging.New(4, 1, 3), imaging.New(4, 1, 3)
	for i := range gen.Pix {
		src.Pix[i], gen.Pix[i] = 0.2, 0.8
	}
	w := imaging.New(4, 1, 1)
	copy(w.Pix, []float32{0, 0.5, 1, 2})
	out := composite(src, gen, w)
	want := []float32{0.2, 0.5, 0.8, 0.8}
	for x, v := range want {
		if diff := out.At(x, 0, 1) - v; diff > 1e-6 || diff < -1e-6 {
			t.Errorf("composite at %d = %v, want %v", x, out.At(x, 0, 1), v)
		}
	}
}

func TestCheckAnswer(t *testing.T) {
	src := decodePhoto(t, kimA)
	small := imaging.Resize(src, 376, 250)
	changed := src.Clone()
	for i := 0; i < len(changed.Pix)/3; i++ {
		changed.Pix[i] = 1 - changed.Pix[i]
	}
	if err := checkAnswer(src, nil, changed); err != nil {
		t.Errorf("a changed answer refused: %v", err)
	}
	if err := checkAnswer(src, nil, imaging.Resize(changed, 376, 250)); err != nil {
		t.Errorf("a changed half-size answer refused: %v", err)
	}
	for _, c := range []struct {
		got  *imaging.Image
		want string
	}{
		{src.Clone(), "unchanged"},
		{small, "unchanged"},
		{imaging.New(752, 500, 3), "blank"},
		{imaging.Resize(changed, 500, 500), "aspect"},
		{imaging.Resize(changed, 75, 50), "absurd"},
	} {
		if err := checkAnswer(src, nil, c.got); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%dx%d: %v, want %q", c.got.W(), c.got.H(), err, c.want)
		}
	}
}

func BenchmarkEraseComposite12MP(b *testing.B) {
	src := imaging.New(4240, 2832, 3)
	gen := imaging.New(4240, 2832, 3)
	for i := range src.Pix {
		src.Pix[i] = float32(i%97) / 97
		gen.Pix[i] = float32(i%89) / 89
	}
	work := imaging.Resize(src, 1536, 1026)
	ans := imaging.Resize(gen, 1536, 1026)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		change, _ := changeMask(work, ans)
		change = soften(dilate(change, 3), 3)
		change = imaging.Resize(change, src.W(), src.H())
		_ = composite(src, gen, change)
	}
}
