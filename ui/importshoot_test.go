package ui

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/testphotos"
)

// A card is imported whole: every folder under it, a folder at a time, hidden
// folders and other files left out.
func TestImportShootReadsTheWholeTree(t *testing.T) {
	h := newHarness(t, 1)
	root := testphotos.Dir(t)
	card := filepath.Join(t.TempDir(), "card")
	link := func(src, dst string) {
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Symlink(src, dst); err != nil {
			t.Fatal(err)
		}
	}
	kim, _ := filepath.Glob(filepath.Join(root, "brackets", "house_interior_kim", "*"))
	for _, f := range kim {
		link(f, filepath.Join(card, "DCIM", "100CANON", filepath.Base(f)))
	}
	link(filepath.Join(root, "interiors", "houses_109_bedroom.jpg"), filepath.Join(card, "DCIM", "101CANON", "IMG_0001.jpg"))
	link(filepath.Join(root, "exteriors", "houses_117_frontal.jpg"), filepath.Join(card, "DCIM", "101CANON", "IMG_0002.jpg"))
	link(filepath.Join(root, "interiors", "houses_111_bedroom.jpg"), filepath.Join(card, ".trash", "IMG_0003.jpg"))
	os.WriteFile(filepath.Join(card, "DCIM", "notes.txt"), []byte("not a photo"), 0o644)

	folders, err := photoFolders(h.w.ctx, []string{card})
	if err != nil {
		t.Fatal(err)
	}
	if len(folders) != 2 || len(folders[0]) != len(kim) || len(folders[1]) != 2 {
		t.Fatalf("folders %v", folders)
	}

	var ids []int
	done := false
	h.w.importTree([]string{card}, func(got []int, err error) {
		if err != nil {
			t.Errorf("import: %v", err)
		}
		ids, done = got, true
	})
	h.waitFor("the card to be imported", time.Minute, func() bool { return done })
	if len(ids) != 3 { // the bracket set and the two single photos
		t.Fatalf("imported %d scenes, want 3", len(ids))
	}
	if len(h.w.shoot.Scenes()) != 3 {
		t.Fatalf("the shoot holds %d scenes", len(h.w.shoot.Scenes()))
	}
}

func TestSystemFolderChooser(t *testing.T) {
	found := func(have ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			for _, h := range have {
				if h == name {
					return "/usr/bin/" + name, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	if c, ok := systemFolderChooser(found("zenity", "kdialog")); !ok || c.name != "zenity" || !c.multi {
		t.Fatalf("with zenity: %+v", c)
	}
	if c, ok := systemFolderChooser(found("kdialog")); !ok || c.name != "kdialog" {
		t.Fatalf("with kdialog: %+v", c)
	}
	if _, ok := systemFolderChooser(found()); ok {
		t.Fatal("a chooser without any on the PATH")
	}
}
