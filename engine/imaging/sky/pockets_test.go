package sky

import (
	"context"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging"
)

// pocketScene draws a blue sky over a pale, smooth wall (from y = 0.45 h) with a tree
// on the left whose dark, textured canopy reaches into the sky and encloses a gap of
// sky, and a window on the wall that shows the sky's own colour in a dark frame. It
// returns the image and the centres of the gap and of the window.
func pocketScene(w, h int) (img *imaging.Image, gap, window [2]int) {
	img = imaging.New(w, h, 3)
	sky := [3]float32{0.18, 0.32, 0.78}
	wall := [3]float32{0.62, 0.55, 0.45}
	frame := [3]float32{0.05, 0.05, 0.06}
	gap = [2]int{w / 5, h * 3 / 8}
	crown := [2]int{w / 5, h / 2}
	window = [2]int{w * 7 / 10, h * 56 / 100}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var c [3]float32
			lift := 1 - 0.2*float32(y)/float32(h)
			for i := range c {
				c[i] = sky[i] * lift
			}
			if y >= h*45/100 {
				c = wall
			}
			// The canopy: an ellipse over the wall's top edge, with the gap.
			dx, dy := float32(x-crown[0])/float32(w/7), float32(y-crown[1])/float32(h/4)
			inGap := abs32(float32(x-gap[0])) < float32(w/30) && abs32(float32(y-gap[1])) < float32(h/24)
			if dx*dx+dy*dy < 1 && !inGap {
				t := float32(hash2(int32(x), int32(y), 7)&255) / 255
				c = [3]float32{0.03 + 0.08*t, 0.06 + 0.14*t, 0.02 + 0.04*t}
			}
			// The window: the sky's colour in a dark frame.
			fx, fy := abs32(float32(x-window[0])), abs32(float32(y-window[1]))
			switch {
			case fx < float32(w/24) && fy < float32(h/16):
				c = sky
			case fx < float32(w/24)+4 && fy < float32(h/16)+4:
				c = frame
			}
			for i := range c {
				img.Set(x, y, i, c[i])
			}
		}
	}
	return img, gap, window
}

// TestSkyPockets: sky seen through a gap in a canopy is sky; a window that shows the
// sky's colour, framed on a smooth wall, is not.
func TestSkyPockets(t *testing.T) {
	img, gap, window := pocketScene(480, 320)
	matte, res, err := Segment(context.Background(), img)
	if err != nil || !res.Found {
		t.Fatalf("err %v, result %+v", err, res)
	}
	if v := matte.At(gap[0], gap[1], 0); v < 0.5 {
		t.Errorf("sky seen through the canopy: matte %.2f, want sky", v)
	}
	if v := matte.At(window[0], window[1], 0); v > 0.02 {
		t.Errorf("window showing the sky's colour: matte %.2f, want ground", v)
	}
	legacy, _, err := segment(context.Background(), img, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gap: matte %.2f (sky@4.0.0 %.2f); window %.2f", matte.At(gap[0], gap[1], 0), legacy.At(gap[0], gap[1], 0), matte.At(window[0], window[1], 0))
}
