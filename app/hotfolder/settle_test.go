package hotfolder

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"image/jpeg"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestTakeableNames(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"IMG_0001.JPG": true, "room.jpeg": true, "scan.tif": true, "shot.CR3": true, "frame.dng": true,
		"a.jpg.part": false, "a.jpg.crdownload": false, "a.jpg.download": false, "a.jpg.partial": false,
		"a.jpg.tmp": false, "a.jpg~": false, "~$a.jpg": false, ".hidden.jpg": false, "._room.jpg": false,
		".DS_Store": false, "Thumbs.db": false, "desktop.ini": false, "notes.txt": false, "movie.mov": false,
		"a.jpg.filepart": false, ".room.jpg.Xa8Sd2": false,
	} {
		if got := takeable(name); got != want {
			t.Errorf("takeable(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestIncompleteByEndMarker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := readPhoto(t, photoBedroom...)
	whole := filepath.Join(dir, "whole.jpg")
	os.WriteFile(whole, data, 0o644)
	if r := incomplete(openTest(t, whole), int64(len(data))); r != "" {
		t.Fatalf("a whole JPEG reported incomplete: %s", r)
	}
	cut := filepath.Join(dir, "cut.jpg")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	if r := incomplete(openTest(t, cut), int64(len(data)/2)); r == "" {
		t.Fatal("half a JPEG reported whole")
	}
}

// A file written in pieces, with pauses longer than the settle time, is taken once
// and whole: whether the writer keeps it open (seen in /proc) or opens it again for
// each piece (the JPEG has no end marker until the last one).
func TestSlowWriterIsTakenOnceWhole(t *testing.T) {
	t.Parallel()
	for _, reopen := range []bool{false, true} {
		name := "kept-open"
		if reopen {
			name = "reopened"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, "")
			c := folderConfig(t, "studio")
			e.start(c)
			data := readPhoto(t, photoKitchen...)
			p := filepath.Join(c.Input, "slow.jpg")
			const pieces = 5
			var f *os.File
			for i := range pieces {
				if f == nil {
					var err error
					if f, err = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := f.Write(data[i*len(data)/pieces : (i+1)*len(data)/pieces]); err != nil {
					t.Fatal(err)
				}
				if reopen || i == pieces-1 {
					f.Close()
					f = nil
				}
				if i < pieces-1 {
					time.Sleep(3 * c.Settle) // long enough for a naive settle check to take it
					if st := e.status("studio"); st.Processing+st.Done+st.Failed != 0 {
						t.Fatalf("the file was taken after %d of %d pieces: %+v", i+1, pieces, st)
					}
				}
			}
			waitFor(t, 60*time.Second, "the scene", func() bool { return e.settledCount("studio") == 1 })
			st := e.status("studio")
			if st.Done != 1 || st.Failed != 0 {
				t.Fatalf("status: %+v", st)
			}
			sum := sha256.Sum256(data)
			sc := readSidecar(t, filepath.Join(c.Output, "slow.jpg.json"))
			if len(sc.Inputs) != 1 || sc.Inputs[0].SHA256 != hex.EncodeToString(sum[:]) || sc.Inputs[0].Size != int64(len(data)) {
				t.Fatalf("the scene took %+v, not the whole file", sc.Inputs)
			}
			out, _ := os.ReadFile(filepath.Join(c.Output, "slow.jpg"))
			img, err := jpeg.Decode(bytes.NewReader(out))
			if err != nil || img.Bounds().Dx() != 1024 {
				t.Fatalf("output: %v %v", img.Bounds(), err)
			}
		})
	}
}

func TestPartialNamesIgnoredAndRenamedFileTaken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	e.start(c)
	data := readPhoto(t, photoBedroom...)
	junk := []string{"a.jpg.part", "b.jpg.crdownload", "c.jpg.download", ".d.jpg", "._e.jpg", "f.jpg~",
		"g.jpg.tmp", "Thumbs.db", ".DS_Store", "h.jpg.partial", "notes.txt"}
	for _, n := range junk {
		os.WriteFile(filepath.Join(c.Input, n), data, 0o644)
	}
	time.Sleep(8 * c.Settle)
	st := e.status("studio")
	if st.Pending+st.Processing+st.Done+st.Failed != 0 {
		t.Fatalf("partial names were taken: %+v", st)
	}
	// The download finishes: the temporary name is renamed to the real one.
	if err := os.Rename(filepath.Join(c.Input, "b.jpg.crdownload"), filepath.Join(c.Input, "b.jpg")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 60*time.Second, "the renamed file", func() bool { return e.settledCount("studio") == 1 })
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"b.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
	left := filesIn(t, c.Input)
	slices.Sort(junk)
	want := append(slices.DeleteFunc(slices.Clone(junk), func(n string) bool { return n == "b.jpg.crdownload" }), "_done/b.jpg")
	slices.Sort(want)
	if !slices.Equal(left, want) {
		t.Fatalf("input folder: %v, want %v", left, want)
	}
}

// File-system notifications, not the rescan, bring a drop in: with a rescan period
// far longer than the test, a file in a new subfolder is still delivered.
func TestNotificationsTakeDropsWithoutRescan(t *testing.T) {
	t.Parallel()
	e := newEnv(t, "")
	c := folderConfig(t, "studio")
	c.Grouping, c.Count = GroupSubfolder, 0
	c.Rescan = 10 * time.Minute
	c.Naming = "{scene}"
	e.start(c)
	time.Sleep(2 * c.Settle) // the first scan has run
	begin := time.Now()
	drop(t, c.Input, "kitchen/k.jpg", readPhoto(t, photoKitchen...))
	waitFor(t, 30*time.Second, "the scene", func() bool { return e.settledCount("studio") == 1 })
	if took := time.Since(begin); took > 20*time.Second {
		t.Fatalf("took %v", took)
	}
	if got := outputs(t, c.Output); !slices.Equal(got, []string{"kitchen.jpg"}) {
		t.Fatalf("outputs: %v", got)
	}
}
