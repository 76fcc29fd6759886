package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// A long message in the status bar is cut to the window's width, and a tap on it
// opens the whole message, wrapped.
func TestLongStatusOpensInFull(t *testing.T) {
	h := newHarness(t, 1)
	long := "export: open /home/photographer/Listings/2026/12 Elm Street/finished/" +
		strings.Repeat("a very long folder name/", 12) + "kitchen.jpg: permission denied"
	h.w.setStatus(long)
	if h.w.statusText.Truncation != fyne.TextTruncateEllipsis {
		t.Fatal("the status bar does not cut long messages")
	}
	test.Tap(h.w.statusText)
	if h.w.statusText.opened == nil {
		t.Fatal("a tap did not open the message")
	}
	overlays := h.w.win.Canvas().Overlays().List()
	if len(overlays) == 0 {
		t.Fatal("no dialog shown")
	}
	var found *widget.Label
	var walk func(o fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			if v.Text == long {
				found = v
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case fyne.Widget:
			r := test.TempWidgetRenderer(t, v)
			for _, c := range r.Objects() {
				walk(c)
			}
		}
	}
	walk(overlays[len(overlays)-1])
	if found == nil || found.Wrapping != fyne.TextWrapWord {
		t.Fatalf("the dialog does not show the whole message wrapped: %v", found)
	}
}
