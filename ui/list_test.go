package ui

import (
	"fmt"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/grouping"
)

// addScenes puts n scenes in the shoot, a third of them running with progress.
func addScenes(h *harness, n int) {
	groups := make([]grouping.Scene, n)
	for i := range groups {
		groups[i] = grouping.Scene{Files: []string{fmt.Sprintf("/shoot/room%03d/a.jpg", i), fmt.Sprintf("/shoot/room%03d/b.jpg", i)}}
	}
	ids := h.w.shoot.Add(groups)
	eta := 30
	for i, id := range ids {
		if i%3 == 0 {
			h.w.shoot.Prepare([]int{id}, 1)
			h.w.shoot.Submitted(id, core.OrderSummary{OrderUUID: fmt.Sprint("o", i), Status: core.OrderRunning,
				ProgressPercent: float64(i % 100), ProgressStage: "tone", ETASeconds: &eta})
		}
	}
}

// The scene list is virtualised: with 300 scenes only the rows on screen exist, and
// a redraw binds only those, so its cost does not grow with the shoot. How long a
// redraw takes is measured by BenchmarkRefresh300Scenes, not judged here: a busy
// machine would fail any fixed limit.
func TestListWith300Scenes(t *testing.T) {
	h := newHarness(t, 1)
	created, bound := 0, 0
	create, update := h.w.list.CreateItem, h.w.list.UpdateItem
	h.w.list.CreateItem = func() fyne.CanvasObject { created++; return create() }
	h.w.list.UpdateItem = func(id widget.ListItemID, o fyne.CanvasObject) { bound++; update(id, o) }
	gridUpdate := h.w.grid.UpdateItem
	h.w.grid.UpdateItem = func(id widget.GridWrapItemID, o fyne.CanvasObject) { bound++; gridUpdate(id, o) }
	addScenes(h, 300)
	h.w.refresh()
	h.loop.pump()
	if created == 0 || created > 40 {
		t.Fatalf("%d rows created for 300 scenes", created)
	}
	h.w.list.ScrollToBottom()
	h.w.refresh()
	if created > 80 {
		t.Fatalf("%d rows after scrolling: rows are not reused", created)
	}
	const rounds = 20
	for i := range rounds {
		bound = 0
		h.w.shoot.Update(core.OrderSummary{OrderUUID: "o0", Status: core.OrderRunning, ProgressPercent: float64(i)})
		h.w.refresh()
		if bound == 0 || bound > 80 {
			t.Fatalf("a redraw of 300 scenes bound %d list rows and grid cells, want only those on screen", bound)
		}
	}
}

func BenchmarkRefresh300Scenes(b *testing.B) {
	h := newHarness(b, 1)
	addScenes(h, 300)
	h.w.refresh()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		h.w.shoot.Update(core.OrderSummary{OrderUUID: "o0", Status: core.OrderRunning, ProgressPercent: float64(i % 100)})
		h.w.refresh()
	}
}
