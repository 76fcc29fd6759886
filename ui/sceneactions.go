package ui

import (
	"fmt"
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// renameSelected asks for a new name of the selected scene.
func (w *Window) renameSelected() {
	s, ok := w.shoot.Get(w.selected)
	if !ok {
		return
	}
	name := widget.NewEntry()
	name.SetText(s.Name)
	d := dialog.NewForm("Rename scene", "Rename", "Cancel", []*widget.FormItem{widget.NewFormItem("Name", name)},
		func(ok bool) {
			if !ok {
				return
			}
			got, err := w.shoot.Rename(s.ID, name.Text)
			if err != nil {
				w.setStatus(err.Error())
				return
			}
			w.setStatus(fmt.Sprintf("Renamed %s to %s.", s.Name, got))
			w.refresh()
		}, w.win)
	d.Resize(fyne.NewSize(420, 160))
	d.Show()
	w.win.Canvas().Focus(name)
}

// mergeDialog offers the other draft scenes, wherever they are in the list, to merge
// into the selected one.
func (w *Window) mergeDialog() {
	s, ok := w.shoot.Get(w.selected)
	if !ok || s.Phase != PhaseDraft {
		return
	}
	var others []Scene
	for _, o := range w.shoot.Drafts() {
		if o.ID != s.ID && len(o.Versions) == 0 {
			others = append(others, o)
		}
	}
	if len(others) == 0 {
		w.setStatus("There is no other scene to merge with: only scenes not processed yet can be merged.")
		return
	}
	checks := make([]*widget.Check, len(others))
	box := container.NewVBox()
	for i, o := range others {
		checks[i] = widget.NewCheck(fmt.Sprintf("%s (%d %s)", o.Name, len(o.Files), plural(len(o.Files), "photo", "brackets")), nil)
		box.Add(checks[i])
	}
	help := widget.NewLabel(fmt.Sprintf("The brackets of the scenes you tick join %s, in list order.", s.Name))
	help.Wrapping = fyne.TextWrapWord
	body := container.NewBorder(help, nil, nil, nil, container.NewVScroll(box))
	d := dialog.NewCustomConfirm("Merge scenes", "Merge", "Cancel", body, func(ok bool) {
		if !ok {
			return
		}
		ids := []int{s.ID}
		for i, c := range checks {
			if c.Checked {
				ids = append(ids, others[i].ID)
			}
		}
		into, err := w.shoot.MergeScenes(ids)
		if err != nil {
			w.setStatus(err.Error())
			return
		}
		w.setStatus(fmt.Sprintf("Merged %d scenes.", len(ids)))
		w.selected = 0
		w.selectScene(into)
		w.refresh()
	}, w.win)
	d.Resize(fyne.NewSize(460, 380))
	d.Show()
}

// deleteSelected removes the selected scene, with an undo (Ctrl+Z or the button in
// the status bar) until the next delete.
func (w *Window) deleteSelected() {
	s, ok := w.shoot.Get(w.selected)
	if !ok {
		return
	}
	if s.Active() {
		w.setStatus("Cancel " + s.Name + " before deleting it.")
		return
	}
	undo, err := w.shoot.Delete(s.ID)
	if err != nil {
		w.setStatus(err.Error())
		return
	}
	w.undoDelete = func() {
		undo()
		w.setStatus("Restored " + s.Name + ".")
		w.selectScene(s.ID)
	}
	w.undoBtn.Show()
	w.setStatus("Deleted " + s.Name + ". Undo brings it back.")
	w.selectScene(0)
	w.refresh()
}

// undoLast undoes the last delete.
func (w *Window) undoLast() {
	if w.undoDelete == nil {
		return
	}
	u := w.undoDelete
	w.undoDelete = nil
	w.undoBtn.Hide()
	u()
	w.refresh()
}

// Dragging a scene in the list moves it: the rows it travelled are the places it
// moves by.
func (r *sceneRow) Dragged(e *fyne.DragEvent) { r.dragDY += e.Dragged.DY }

func (r *sceneRow) DragEnd() {
	dy := r.dragDY
	r.dragDY = 0
	h := r.Size().Height
	if h <= 0 || r.id == 0 {
		return
	}
	rows := int(math.Round(float64(dy / (h + theme.Padding()))))
	if rows == 0 {
		return
	}
	w := r.w
	i := w.shoot.Index(r.id)
	if err := w.shoot.MoveTo(r.id, i+rows); err != nil {
		w.setStatus(err.Error())
		return
	}
	if j := w.shoot.Index(r.id); j >= 0 && r.id == w.selected {
		w.list.Select(j)
	}
	w.refresh()
}
