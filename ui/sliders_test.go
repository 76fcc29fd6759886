package ui

import (
	"context"
	"image"
	"path/filepath"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/adjust"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// officeBase is the office set's middle bracket at the preview's size: the base a
// slider preview renders from.
func officeBase(t testing.TB) *imaging.Image {
	t.Helper()
	path := filepath.Join(testphotos.Dir(t), "brackets", "office_fisheye_5dmk2", "IMG_6963.JPG")
	img, _, err := codec.DecodeFile(path, codec.DecodeOptions{ScaleToMaxEdge: adjust.PreviewEdge, MaxPixels: -1})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func meanNRGBA(img image.Image) float64 {
	n := img.(*image.NRGBA)
	var sum float64
	for i := 0; i < len(n.Pix); i += 4 * 7 {
		sum += float64(n.Pix[i]) + float64(n.Pix[i+1]) + float64(n.Pix[i+2])
	}
	return sum / float64(len(n.Pix)/(4*7)) / 3
}

// Moving a slider of the panel renders a preview of the new value: brighter for
// more exposure, within the test's generous bound.
func TestSliderMoveUpdatesThePreview(t *testing.T) {
	test.NewTempApp(t)
	base := officeBase(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shown := make(chan float64, 16)
	pv, err := newPreviewer(ctx, base, func(img image.Image, took time.Duration) {
		shown <- meanNRGBA(img)
	})
	if err != nil {
		t.Fatal(err)
	}
	var moved sliderValues
	panel := newSliderPanel(func(v sliderValues) {
		moved = v
		pv.Request(v.settings(nil))
	}, sliderActions{})

	wait := func() float64 {
		select {
		case m := <-shown:
			return m
		case <-time.After(2 * time.Second):
			t.Fatal("no preview within 2 s of a slider move")
			return 0
		}
	}
	panel.sliders["exposure"].SetValue(0)
	pv.Request(adjust.Settings{})
	plain := wait()
	start := time.Now()
	panel.sliders["exposure"].SetValue(1)
	bright := wait()
	t.Logf("preview %dx%d after a slider move: %v", base.W(), base.H(), time.Since(start))
	if moved["exposure"] != 1 {
		t.Fatalf("panel reported %v", moved)
	}
	if bright < plain*1.15 {
		t.Fatalf("mean %.1f at +1 EV, %.1f at 0: the preview did not follow the slider", bright, plain)
	}

	// The values become the scene's options, and a slider back at 0 is unset.
	o := moved.apply(core.Options{})
	if o.Exposure == nil || *o.Exposure != 1 || o.Contrast != nil {
		t.Fatalf("options %+v", o)
	}
	panel.Set(sliderValues{})
	if v := panel.Values(); len(v) != 0 || panel.sliders["exposure"].Value != 0 {
		t.Fatalf("after reset: %v", v)
	}
}

// Previews relative to a base that already carries sliders apply only the
// difference.
func TestSliderSettingsAreRelativeToTheBase(t *testing.T) {
	s := sliderValues{"exposure": 1.5, "contrast": 20}.settings(sliderValues{"exposure": 0.5})
	if s.Exposure != 1 || s.Contrast != 20 || s.Saturation != 0 {
		t.Fatalf("settings %+v", s)
	}
	if s := (sliderValues{"saturation": -100}).settings(sliderValues{"saturation": 100}); s.Saturation != -100 {
		t.Fatalf("clamped saturation %v", s.Saturation)
	}
}

// BenchmarkSliderPreview is the window's path on the office set's 2048 px preview:
// a slider move, the render off the UI goroutine, the image handed to the view.
func BenchmarkSliderPreview(b *testing.B) {
	test.NewTempApp(b)
	base := officeBase(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	shown := make(chan struct{}, 1)
	pv, err := newPreviewer(ctx, base, func(image.Image, time.Duration) { shown <- struct{}{} })
	if err != nil {
		b.Fatal(err)
	}
	panel := newSliderPanel(func(v sliderValues) { pv.Request(v.settings(nil)) }, sliderActions{})
	panel.sliders["contrast"].SetValue(10)
	<-shown
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		panel.sliders["exposure"].SetValue(float64(i%40)/10 - 2) // one move, one render
		<-shown
	}
}
