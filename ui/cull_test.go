package ui

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/porchlight/porchlight/engine/grouping"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/engine/imaging/codec"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// shake blurs img along its rows over n pixels (odd), as a camera moved during the
// shot: a running box sum, so a full-size frame takes a moment.
func shake(img *imaging.Image, n int) *imaging.Image {
	out := imaging.New(img.W(), img.H(), img.C)
	w, c, r := img.W(), img.C, n/2
	for y := range img.H() {
		in, o := img.Pix[y*img.Stride:y*img.Stride+w*c], out.Pix[y*out.Stride:y*out.Stride+w*c]
		for ch := range c {
			var sum float32
			k := 0
			for x := 0; x <= r && x < w; x++ {
				sum += in[x*c+ch]
				k++
			}
			for x := range w {
				o[x*c+ch] = sum / float32(k)
				if add := x + r + 1; add < w {
					sum += in[add*c+ch]
					k++
				}
				if drop := x - r; drop >= 0 {
					sum -= in[drop*c+ch]
					k--
				}
			}
		}
	}
	return out
}

// A bracket set shot twice, the second run shaken: the window keeps the sharp run as
// the scene, shows the others set aside with why, and puts one back on request.
func TestDropSetsAsideARepeatedShakenSet(t *testing.T) {
	h := newHarness(t, 1)
	dir, shaken := shakenRepeat(t)
	ids := h.drop(dir)
	if len(ids) != 1 {
		t.Fatalf("%d scenes from a set shot twice, want 1", len(ids))
	}
	s, _ := h.w.shoot.Get(ids[0])
	if len(s.SetAside) != len(shaken) {
		t.Fatalf("set aside %+v, want the %d shaken frames", s.SetAside, len(shaken))
	}
	for _, f := range s.SetAside {
		if f.Reason == "" || f.Code == "" {
			t.Errorf("set aside without a reason: %+v", f)
		}
	}
	h.w.Select(ids[0])
	h.loop.pump()
	tiles := 0
	for _, o := range h.w.detail.strip.Objects {
		if _, ok := o.(*setAsideTile); ok {
			tiles++
		}
	}
	if tiles != len(shaken) {
		t.Fatalf("the scene shows %d set-aside photos, want %d", tiles, len(shaken))
	}

	h.w.putBack(ids[0], shaken[0])
	s, _ = h.w.shoot.Get(ids[0])
	if len(s.SetAside) != len(shaken)-1 || len(s.Files) != len(shaken)+1 || s.Files[len(s.Files)-1] != shaken[0] {
		t.Fatalf("after put back: files %v, set aside %d", s.Files, len(s.SetAside))
	}
	// Kept with the shoot.
	if rec := h.w.shoot.Record(""); len(rec.Scenes[0].SetAside) != len(shaken)-1 {
		t.Fatalf("the record keeps %d set-aside photos", len(rec.Scenes[0].SetAside))
	}
}

func TestAttachSetAsideToTheNearestScene(t *testing.T) {
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{
		{Files: []string{"/c/IMG_0101.jpg", "/c/IMG_0102.jpg", "/c/IMG_0103.jpg"}},
		{Files: []string{"/c/IMG_0201.jpg", "/c/IMG_0202.jpg"}},
		{Files: []string{"/d/IMG_0104.jpg"}},
	})
	n := sh.AttachSetAside(ids, []grouping.SetAside{
		{Path: "/c/IMG_0104.jpg", Reason: "motion blur", Code: "motion_blur"},
		{Path: "/c/IMG_0203.jpg", Reason: "black frame", Code: "black_frame"},
		{Path: "/e/IMG_0001.jpg", Reason: "test frame", Code: "test_frame"}, // no scene of its folder
	})
	if n != 2 {
		t.Fatalf("attached %d", n)
	}
	a, _ := sh.Get(ids[0])
	b, _ := sh.Get(ids[1])
	if len(a.SetAside) != 1 || a.SetAside[0].Path != "/c/IMG_0104.jpg" || len(b.SetAside) != 1 || b.SetAside[0].Code != "black_frame" {
		t.Fatalf("attached %+v / %+v", a.SetAside, b.SetAside)
	}
	if err := sh.PutBack(ids[0], "/c/IMG_0104.jpg"); err != nil {
		t.Fatal(err)
	}
	a, _ = sh.Get(ids[0])
	if len(a.Files) != 4 || a.Files[3] != "/c/IMG_0104.jpg" || len(a.SetAside) != 0 {
		t.Fatalf("after put back %+v", a)
	}
	if err := sh.PutBack(ids[0], "/c/IMG_0104.jpg"); err == nil {
		t.Fatal("a photo was put back twice")
	}
}

// shakenRepeat writes building_exterior_phone's brackets and, two minutes later by
// their EXIF, the same set shot again with a shaken camera; it returns the folder
// and the shaken copies.
func shakenRepeat(t testing.TB) (string, []string) {
	t.Helper()
	root := testphotos.Dir(t)
	dir := filepath.Join(t.TempDir(), "porch")
	os.Mkdir(dir, 0o700)
	var shaken []string
	for i, n := range testphotos.Brackets(t, "building_exterior_phone") {
		src := filepath.Join(root, "brackets", "building_exterior_phone", n)
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, n), b, 0o644)
		img, meta, err := codec.DecodeFile(src, codec.DecodeOptions{MaxPixels: -1})
		if err != nil {
			t.Fatal(err)
		}
		meta.DateTimeOriginal = meta.DateTimeOriginal.Add(2 * time.Minute)
		meta.Thumbnail = nil
		p := filepath.Join(dir, fmt.Sprintf("z_again_%d.jpg", i))
		if err := codec.WriteFile(p, shake(img, 25), codec.EncodeOptions{Format: "jpeg", Quality: 92, Meta: &meta}); err != nil {
			t.Fatal(err)
		}
		shaken = append(shaken, p)
	}
	return dir, shaken
}
