package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
)

// Scenes as a photographer rearranges them: delete with undo, drag to another place.
func TestDeleteUndoAndDragAScene(t *testing.T) {
	h := newHarness(t, 1)
	ids := h.drop(houses(t)[:3]...)
	if len(ids) != 3 {
		t.Fatalf("%d scenes", len(ids))
	}
	order := func() []int {
		var out []int
		for _, s := range h.w.shoot.Scenes() {
			out = append(out, s.ID)
		}
		return out
	}

	h.w.Select(ids[1])
	h.loop.pump()
	h.w.deleteSelected()
	if got := order(); len(got) != 2 || !h.w.undoBtn.Visible() {
		t.Fatalf("after delete: %v, undo shown %v", got, h.w.undoBtn.Visible())
	}
	h.shortcut(&desktop.CustomShortcut{KeyName: fyne.KeyZ, Modifier: fyne.KeyModifierShortcutDefault})
	if got := order(); len(got) != 3 || got[1] != ids[1] || h.w.undoBtn.Visible() {
		t.Fatalf("after undo: %v, undo shown %v", got, h.w.undoBtn.Visible())
	}

	// Drag the first scene down two rows.
	row := newSceneRow(h.w)
	s, _ := h.w.shoot.Get(ids[0])
	row.bind(s)
	row.Resize(fyne.NewSize(300, 60))
	row.Dragged(&fyne.DragEvent{Dragged: fyne.Delta{DY: 70}})
	row.Dragged(&fyne.DragEvent{Dragged: fyne.Delta{DY: 65}})
	row.DragEnd()
	if got := order(); got[2] != ids[0] {
		t.Fatalf("after dragging the first scene two rows down: %v", got)
	}
}
