package ui

import (
	"fmt"
	"image"
	"path/filepath"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/grouping"
)

// Culling (engine/cull through grouping.CullScenes) sets aside the photos of a drop
// that would spoil a merge: a set shot twice keeps its sharper run, a blurred, black
// or test frame leaves its scene. The window shows each with its reason under its
// scene, and the photographer can put it back.

// AttachSetAside gives each set-aside photo to the scene among ids it belongs with:
// the one of its folder whose photos lie nearest to it in name order (the run a
// repeated set repeats, the siblings of a blurred frame). Photos with no such scene
// are dropped from the list, never from disk.
func (sh *Shoot) AttachSetAside(ids []int, aside []grouping.SetAside) int {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	n := 0
	for _, a := range aside {
		dir := filepath.Dir(a.Path)
		var best *Scene
		bestDist := 0
		for _, id := range ids {
			s, ok := sh.byID[id]
			if !ok {
				continue
			}
			for _, f := range s.Files {
				if filepath.Dir(f) != dir {
					continue
				}
				if d := nameDistance(filepath.Base(f), filepath.Base(a.Path)); best == nil || d < bestDist {
					best, bestDist = s, d
				}
			}
		}
		if best == nil {
			continue
		}
		best.SetAside = append(best.SetAside, core.SetAsideFrame{Path: a.Path, Code: string(a.Code), Reason: a.Reason})
		n++
	}
	if n > 0 {
		sh.changed()
	}
	return n
}

// nameDistance orders file names of one folder by how far apart a camera numbered
// them: the length of their common prefix first, then the difference of the first
// byte that differs.
func nameDistance(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	d := 1000 * (64 - min(i, 64))
	if i < len(a) && i < len(b) {
		d += max(int(a[i])-int(b[i]), int(b[i])-int(a[i]))
	}
	return d
}

// PutBack returns the set-aside photo path to draft scene id's brackets, in name
// order, within engine.MaxBrackets.
func (sh *Shoot) PutBack(id int, path string) error {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	s, _, err := sh.draftLocked(id)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(s.SetAside, func(f core.SetAsideFrame) bool { return f.Path == path })
	if i < 0 {
		return fmt.Errorf("%s is not set aside from %s", filepath.Base(path), s.Name)
	}
	if len(s.Files) >= engine.MaxBrackets {
		return fmt.Errorf("%s has %d brackets, the most a scene takes", s.Name, len(s.Files))
	}
	s.SetAside = slices.Delete(s.SetAside, i, i+1)
	at, _ := slices.BinarySearchFunc(s.Files, path, func(f, p string) int {
		switch {
		case filepath.Base(f) < filepath.Base(p):
			return -1
		case filepath.Base(f) > filepath.Base(p):
			return 1
		}
		return 0
	})
	s.Files = slices.Insert(s.Files, at, path)
	sh.changed()
	return nil
}

// putBack puts a set-aside photo back into its scene and imports it.
func (w *Window) putBack(id int, path string) {
	if err := w.shoot.PutBack(id, path); err != nil {
		w.setStatus(err.Error())
		return
	}
	w.enqueueImport(path)
	w.setStatus("Put " + filepath.Base(path) + " back into the scene.")
	w.refresh()
}

// asideSummary counts the set-aside photos by reason: "2 motion blur, 1 black frame".
func asideSummary(aside []grouping.SetAside) string {
	var reasons []string
	count := map[string]int{}
	for _, a := range aside {
		if count[a.Reason] == 0 {
			reasons = append(reasons, a.Reason)
		}
		count[a.Reason]++
	}
	parts := make([]string, len(reasons))
	for i, r := range reasons {
		parts[i] = fmt.Sprintf("%d %s", count[r], r)
	}
	return strings.Join(parts, ", ")
}

// setAsideTile is a set-aside photo in a scene's strip: dimmed, with why, and a
// button that puts it back.
type setAsideTile struct {
	widget.BaseWidget
	w      *Window
	path   string
	img    *canvas.Image
	reason *widget.Label
	back   *widget.Button
}

func newSetAsideTile(w *Window, sceneID int, f core.SetAsideFrame, canPutBack bool) *setAsideTile {
	t := &setAsideTile{w: w, path: f.Path}
	t.img = canvas.NewImageFromImage(nil)
	t.img.FillMode = canvas.ImageFillContain
	t.img.SetMinSize(fyne.NewSize(96, 64))
	t.img.Translucency = 0.55
	t.reason = widget.NewLabel("Set aside: " + f.Reason)
	t.reason.SizeName = theme.SizeNameCaptionText
	t.reason.Wrapping = fyne.TextWrapWord
	t.back = widget.NewButtonWithIcon("Put back", theme.ContentUndoIcon(), func() { w.putBack(sceneID, f.Path) })
	t.back.Importance = widget.LowImportance
	if !canPutBack {
		t.back.Disable()
	}
	t.ExtendBaseWidget(t)
	t.bindImage()
	return t
}

func (t *setAsideTile) bindImage() {
	img, _ := t.w.thumbs.Get("file:"+t.path, func() (image.Image, error) { return fileThumb(t.path) })
	if img != nil && t.img.Image != img {
		t.img.Image = img
		t.img.Refresh()
	}
}

func (t *setAsideTile) CreateRenderer() fyne.WidgetRenderer {
	box := container.NewVBox(t.img, container.NewGridWrap(fyne.NewSize(112, 2*t.reason.MinSize().Height), t.reason), t.back)
	return widget.NewSimpleRenderer(box)
}
