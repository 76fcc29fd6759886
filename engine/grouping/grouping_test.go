package grouping

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// The testdata bracket sets and interiors, dropped together, give one scene per
// bracket folder and one scene per interior photo.
func TestGroupTestdataMatchesFolders(t *testing.T) {
	root := testphotos.Dir(t)
	res, err := Group([]string{filepath.Join(root, "brackets"), filepath.Join(root, "interiors")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 {
		t.Fatalf("skipped: %+v", res.Skipped)
	}
	var got []string
	for _, s := range res.Scenes {
		dir := filepath.Base(filepath.Dir(s.Files[0]))
		var names []string
		for _, f := range s.Files {
			names = append(names, filepath.Base(f))
		}
		sort.Strings(names)
		if dir == "interiors" {
			got = append(got, "interiors/"+strings.Join(names, ","))
			continue
		}
		got = append(got, dir+"/"+strings.Join(names, ","))
	}
	var want []string
	brackets, _ := os.ReadDir(filepath.Join(root, "brackets"))
	for _, d := range brackets {
		files, _ := Expand([]string{filepath.Join(root, "brackets", d.Name())})
		var names []string
		for _, f := range files {
			names = append(names, filepath.Base(f))
		}
		sort.Strings(names)
		want = append(want, d.Name()+"/"+strings.Join(names, ","))
	}
	interiors, _ := Expand([]string{filepath.Join(root, "interiors")})
	for _, f := range interiors {
		want = append(want, "interiors/"+filepath.Base(f))
	}
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("scenes differ from folders:\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Copying two bracket sets into one flat folder (as a card dump would) still splits
// them, by time and by content.
func TestGroupFlatFolderOfTwoScenes(t *testing.T) {
	root := testphotos.Dir(t)
	flat := t.TempDir()
	for _, set := range []string{"library_phone", "building_exterior_phone"} {
		files, _ := Expand([]string{filepath.Join(root, "brackets", set)})
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(flat, filepath.Base(f)), b, 0o600)
		}
	}
	res, err := Group([]string{flat}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 2 || len(res.Scenes[0].Files) != 5 || len(res.Scenes[1].Files) != 5 {
		t.Fatalf("want two scenes of 5, got %+v", res.Scenes)
	}
}

func TestGroupSkipsUnreadableAndHidden(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "broken.jpg"), []byte("not a jpeg"), 0o600)
	os.WriteFile(filepath.Join(dir, ".hidden.jpg"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600)
	res, err := Group([]string{dir}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scenes) != 0 || len(res.Skipped) != 1 || filepath.Base(res.Skipped[0].Path) != "broken.jpg" {
		t.Fatalf("got %+v", res)
	}
}

// photo makes a crafted photo whose thumbnail is a ramp (content 0), the reversed
// ramp (1) or a scrambled one (2), so similarity is 1, -1 or near 0.
func photo(path, camera string, taken time.Time, dur, ev, bright float64, content int) Photo {
	const n = 64
	lum := make([]float32, n)
	for i := range lum {
		v := i
		switch content {
		case 1:
			v = n - 1 - i
		case 2:
			v = (i * 37) % n
		}
		lum[i] = 0.05 + 0.8*float32(v)/n
	}
	return Photo{Path: path, Camera: camera, Taken: taken, Duration: dur, EV: ev, Brightness: bright, lum: lum, Raw: strings.HasSuffix(path, ".CR2")}
}

func flash(p Photo) Photo {
	p.Flash = true
	return p
}

func TestGroupRules(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	nan := math.NaN()
	cases := []struct {
		name   string
		photos []Photo
		want   [][]string
	}{
		{"auto bracket burst", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(0.3), 0.04, 2, 0, 0),
			photo("/s/c.jpg", "cam", at(0.6), 0.0025, -2, 0, 0),
		}, [][]string{{"a", "b", "c"}}},
		{"long exposure does not split", []Photo{
			photo("/s/a.jpg", "cam", at(0), 30, 5, 0, 0),
			photo("/s/b.jpg", "cam", at(32), 8, 3, 0, 0),
		}, [][]string{{"a", "b"}}},
		{"pause longer than the gap splits", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(45), 0.04, 2, 0, 0),
		}, [][]string{{"a"}, {"b"}}},
		{"repeated exposure starts the next scene", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 2, 0, 0),
			photo("/s/c.jpg", "cam", at(5), 0.01, 0, 0, 0),
			photo("/s/d.jpg", "cam", at(6), 0.04, 2, 0, 0),
		}, [][]string{{"a", "b"}, {"c", "d"}}},
		{"different content splits", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 2, 0, 2),
		}, [][]string{{"a"}, {"b"}}},
		{"another camera splits", []Photo{
			photo("/s/a.jpg", "cam1", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam2", at(1), 0.04, 2, 0, 0),
		}, [][]string{{"a"}, {"b"}}},
		{"folders never mix", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/t/b.jpg", "cam", at(1), 0.04, 2, 0, 0),
		}, [][]string{{"a"}, {"b"}}},
		// A 7-bracket set was once cut at five, and the two frames left over (the
		// brightest or darkest) merged into a black or white scene of their own.
		{"seven brackets are one scene", []Photo{
			photo("/s/1.jpg", "cam", at(0), 0, -3, 0, 0),
			photo("/s/2.jpg", "cam", at(1), 0, -2, 0, 0),
			photo("/s/3.jpg", "cam", at(2), 0, -1, 0, 0),
			photo("/s/4.jpg", "cam", at(3), 0, 0, 0, 0),
			photo("/s/5.jpg", "cam", at(4), 0, 1, 0, 0),
			photo("/s/6.jpg", "cam", at(5), 0, 2, 0, 0),
			photo("/s/7.jpg", "cam", at(6), 0, 3, 0, 0),
		}, [][]string{{"1", "2", "3", "4", "5", "6", "7"}}},
		{"at most nine frames", []Photo{
			photo("/s/1.jpg", "cam", at(0), 0, -5, 0, 0),
			photo("/s/2.jpg", "cam", at(1), 0, -4, 0, 0),
			photo("/s/3.jpg", "cam", at(2), 0, -3, 0, 0),
			photo("/s/4.jpg", "cam", at(3), 0, -2, 0, 0),
			photo("/s/5.jpg", "cam", at(4), 0, -1, 0, 0),
			photo("/s/6.jpg", "cam", at(5), 0, 0, 0, 0),
			photo("/s/7.jpg", "cam", at(6), 0, 1, 0, 0),
			photo("/s/8.jpg", "cam", at(7), 0, 2, 0, 0),
			photo("/s/9.jpg", "cam", at(8), 0, 3, 0, 0),
			photo("/s/10.jpg", "cam", at(9), 0, 4, 0, 0),
		}, [][]string{{"1", "2", "3", "4", "5", "6", "7", "8", "9"}, {"10"}}},
		{"no EXIF: name order and look", []Photo{
			photo("/s/IMG_10.png", "", time.Time{}, 0, nan, -1, 0),
			photo("/s/IMG_9.png", "", time.Time{}, 0, nan, -3, 0),
			photo("/s/IMG_11.png", "", time.Time{}, 0, nan, 1, 0),
			photo("/s/IMG_12.png", "", time.Time{}, 0, nan, 1.1, 2),
		}, [][]string{{"IMG_9", "IMG_10", "IMG_11"}, {"IMG_12"}}},
		// Rule 6: a flash frame is no bracket.
		{"a flash frame joins its brackets whatever its exposure", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 2, 0, 0),
			flash(photo("/s/f.jpg", "cam", at(12), 0.001, 0, 0, 0)),
			photo("/s/c.jpg", "cam", at(14), 0.0025, -2, 0, 0),
		}, [][]string{{"a", "b", "f", "c"}}},
		{"a flash frame of another view is a scene of its own", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/b.jpg", "cam", at(1), 0.04, 2, 0, 0),
			flash(photo("/s/f.jpg", "cam", at(12), 0.001, -4, 0, 2)),
		}, [][]string{{"a", "b"}, {"f"}}},
		{"a bracket after a flash frame is judged by the brackets", []Photo{
			photo("/s/a.jpg", "cam", at(0), 0.01, 0, 0, 0),
			flash(photo("/s/f.jpg", "cam", at(10), 0.001, -4, 0, 0)),
			photo("/s/c.jpg", "cam", at(20), 0.01, 0, 0, 0),
		}, [][]string{{"a", "f"}, {"c"}}},
		{"flash frames first, then the ambient", []Photo{
			flash(photo("/s/f.jpg", "cam", at(0), 0.001, -4, 0, 0)),
			flash(photo("/s/g.jpg", "cam", at(5), 0.001, -4, 0, 0)),
			photo("/s/a.jpg", "cam", at(15), 0.01, 0, 0, 0),
		}, [][]string{{"f", "g", "a"}}},
		{"capture time beats names", []Photo{
			photo("/s/z.jpg", "cam", at(0), 0.01, 0, 0, 0),
			photo("/s/a.jpg", "cam", at(100), 0.01, 0, 0, 0),
		}, [][]string{{"z"}, {"a"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			scenes, _ := GroupPhotos(tc.photos, Options{})
			var got [][]string
			for _, s := range scenes {
				var names []string
				for _, f := range s.Files {
					names = append(names, strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)))
				}
				got = append(got, names)
			}
			if !equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestRawJPEGTwinsAreOneFrame(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	ps := []Photo{
		photo("/s/IMG_1.CR2", "cam", t0, 0.01, 0, 0, 0),
		photo("/s/IMG_1.JPG", "cam", t0, 0.01, 0, 0, 0),
		photo("/s/IMG_2.CR2", "cam", t0.Add(time.Second), 0.04, 2, 0, 0),
		photo("/s/IMG_2.JPG", "cam", t0.Add(time.Second), 0.04, 2, 0, 0),
	}
	scenes, skipped := GroupPhotos(ps, Options{})
	if len(scenes) != 1 || len(scenes[0].Files) != 2 || !strings.HasSuffix(scenes[0].Files[0], ".CR2") {
		t.Fatalf("scenes %+v", scenes)
	}
	if len(skipped) != 2 || !strings.Contains(skipped[0].Reason, "twin") {
		t.Fatalf("skipped %+v", skipped)
	}
}

func TestNaturalLess(t *testing.T) {
	names := []string{"IMG_10", "IMG_9", "IMG_100", "a", "IMG_09b"}
	sort.Slice(names, func(i, j int) bool { return naturalLess(names[i], names[j]) })
	if strings.Join(names, " ") != "IMG_9 IMG_09b IMG_10 IMG_100 a" {
		t.Fatalf("%v", names)
	}
}

func equal(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], ",") != strings.Join(b[i], ",") {
			return false
		}
	}
	return true
}

// The flambient photos: four views of one kitchen, each an ambient frame and a flash
// frame 8 to 23 seconds later, give four scenes of two. By brightness order alone
// each flash frame was a scene of its own (rank correlation 0.19 to 0.24 with its
// ambient frame); by edges it matches its own view (0.67 to 0.95) and no other
// (at most 0.35).
func TestGroupFlambientPairs(t *testing.T) {
	res, err := Group([]string{filepath.Join(testphotos.Dir(t), "flambient")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 0 || len(res.Scenes) != 4 {
		t.Fatalf("skipped %+v, scenes %+v", res.Skipped, res.Scenes)
	}
	for _, s := range res.Scenes {
		if len(s.Files) != 2 {
			t.Errorf("scene %v", s.Files)
			continue
		}
		a, f := filepath.Base(s.Files[0]), filepath.Base(s.Files[1])
		if a[:8] != f[:8] || !strings.Contains(a, "_ambient_") || !strings.Contains(f, "_flash_") {
			t.Errorf("scene %s + %s", a, f)
		}
	}
}
