package localapi

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"
)

// The local features complete through the API with their recipes recorded: sky
// replacement on an exterior, privacy blur, and the built-in magic eraser with a mask
// uploaded as an asset.
func TestLocalFeatureOrdersThroughTheAPI(t *testing.T) {
	f := startFull(t)
	exterior := f.uploadSmall(f.key, 1024, "exteriors", "houses_102_frontal.jpg")
	interior := f.uploadPhoto(f.key, photoA...)

	var mask bytes.Buffer
	m := image.NewNRGBA(image.Rect(0, 0, 752, 500))
	for y := 200; y < 330; y++ {
		for x := 300; x < 420; x++ {
			copy(m.Pix[y*m.Stride+4*x:], []byte{255, 255, 255, 255})
		}
	}
	if err := png.Encode(&mask, m); err != nil {
		t.Fatal(err)
	}
	maskID, st := f.uploadBytes(f.key, "mask.png", mask.Bytes())
	if st["status"] != "ready" {
		t.Fatalf("mask asset ended %v", st)
	}

	cases := []struct {
		name   string
		body   map[string]any
		recipe string
	}{
		{"sky", map[string]any{"inputs": []string{exterior}, "sky": true, "sky_style": "low_cloud"}, "sky"},
		{"privacy", map[string]any{"inputs": []string{interior}, "privacy": true, "categories": []string{"human face", "license plate"}}, "privacy"},
		{"magic eraser", map[string]any{"inputs": []string{interior}, "gen_edit": "magic_eraser", "mask": maskID}, "magic_eraser"},
	}
	for _, c := range cases {
		id := f.submit(f.key, c.body)["orderId"].(string)
		sum := f.waitOrder(f.key, id)
		recipes, _ := sum["recipes"].(map[string]any)
		if sum["status"] != "completed" || recipes[c.recipe] == nil || recipes[c.recipe] == "" {
			t.Errorf("%s: order ended %v", c.name, sum)
			continue
		}
		out, _ := sum["outputAssetId"].(string)
		if len(f.download(f.key, out)) == 0 {
			t.Errorf("%s: empty output", c.name)
		}
	}
	// A mask of another shape than its photo fails the order, naming the mask.
	var bad bytes.Buffer
	sq := image.NewNRGBA(image.Rect(0, 0, 300, 300))
	for i := range sq.Pix[:300*4*50] {
		sq.Pix[i] = 255
	}
	if err := png.Encode(&bad, sq); err != nil {
		t.Fatal(err)
	}
	badID, _ := f.uploadBytes(f.key, "square.png", bad.Bytes())
	id := f.submit(f.key, map[string]any{"inputs": []string{interior}, "gen_edit": "magic_eraser", "mask": badID})["orderId"].(string)
	if sum := f.waitOrder(f.key, id); sum["status"] != "failed" || sum["errorCode"] != "invalid_mask" ||
		!strings.Contains(sum["error"].(string), "aspect ratio") {
		t.Errorf("square mask on a 752x500 photo: %v", sum)
	}
}
