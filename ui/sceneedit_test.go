package ui

import (
	"testing"

	"github.com/porchlight/porchlight/engine/grouping"
)

func fourScenes(t *testing.T) (*Shoot, []int) {
	t.Helper()
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{
		{Files: []string{"/s/kitchen/a.jpg", "/s/kitchen/b.jpg", "/s/kitchen/c.jpg"}},
		{Files: []string{"/s/bath/d.jpg", "/s/bath/e.jpg"}},
		{Files: []string{"/s/hall/f.jpg"}},
		{Files: []string{"/s/kitchen2/g.jpg", "/s/kitchen2/h.jpg"}},
	})
	if len(ids) != 4 {
		t.Fatalf("added %d scenes", len(ids))
	}
	return sh, ids
}

func TestShootRenameMergeAnyMoveToDeleteUndo(t *testing.T) {
	sh, ids := fourScenes(t)

	if got, err := sh.Rename(ids[2], "  Entry hall "); err != nil || got != "Entry hall" {
		t.Fatalf("rename: %q %v", got, err)
	}
	if got, _ := sh.Rename(ids[1], "Entry hall"); got != "Entry hall (2)" {
		t.Fatalf("a taken name gave %q", got)
	}
	if _, err := sh.Rename(ids[0], "   "); err == nil {
		t.Fatal("an empty name was accepted")
	}

	// Merge scenes that are not neighbours: the kitchen and the second kitchen.
	into, err := sh.MergeScenes([]int{ids[3], ids[0]})
	if err != nil || into != ids[0] {
		t.Fatalf("merge: %d %v", into, err)
	}
	if got := names(sh); got != "kitchen:a,b,c,g,h Entry hall (2):d,e Entry hall:f" {
		t.Fatalf("after merge: %s", got)
	}
	if _, err := sh.MergeScenes([]int{ids[0]}); err == nil {
		t.Fatal("a merge of one scene was accepted")
	}

	// Drag the hall to the top.
	if err := sh.MoveTo(ids[2], 0); err != nil {
		t.Fatal(err)
	}
	if got := names(sh); got != "Entry hall:f kitchen:a,b,c,g,h Entry hall (2):d,e" {
		t.Fatalf("after move: %s", got)
	}

	// Delete the kitchen, undo: it is back in its place.
	undo, err := sh.Delete(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := names(sh); got != "Entry hall:f Entry hall (2):d,e" {
		t.Fatalf("after delete: %s", got)
	}
	undo()
	undo() // a second undo changes nothing
	if got := names(sh); got != "Entry hall:f kitchen:a,b,c,g,h Entry hall (2):d,e" {
		t.Fatalf("after undo: %s", got)
	}
	if _, ok := sh.Get(ids[0]); !ok {
		t.Fatal("the restored scene is not found by id")
	}
}

func TestShootMergeScenesRespectsTheBracketLimit(t *testing.T) {
	sh := NewShoot()
	ids := sh.Add([]grouping.Scene{
		{Files: []string{"/a/1.jpg", "/a/2.jpg", "/a/3.jpg", "/a/4.jpg", "/a/5.jpg"}},
		{Files: []string{"/b/1.jpg", "/b/2.jpg", "/b/3.jpg", "/b/4.jpg", "/b/5.jpg"}},
	})
	if _, err := sh.MergeScenes(ids); err == nil {
		t.Fatal("ten brackets were merged into one scene")
	}
	if len(sh.Scenes()) != 2 {
		t.Fatal("a refused merge changed the shoot")
	}
}
