package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
)

// findButton returns the first button labelled text under o.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch v := o.(type) {
	case *widget.Button:
		if v.Text == text {
			return v
		}
	case *fyne.Container:
		for _, c := range v.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// The settings are a dialog: a Close button closes them, and so does Esc; either
// way the window can open them again.
func TestSettingsCloseAndEsc(t *testing.T) {
	h := newHarness(t, 1)
	h.w.openSettings()
	if h.w.settings == nil {
		t.Fatal("settings did not open")
	}
	win := h.w.settings
	closeBtn := findButton(win.Content(), "Close")
	if closeBtn == nil {
		t.Fatal("the settings have no Close button")
	}
	test.Tap(closeBtn)
	h.loop.pump()
	if h.w.settings != nil {
		t.Fatal("Close did not close the settings")
	}

	h.w.openSettings()
	if h.w.settings == nil {
		t.Fatal("settings did not open again")
	}
	h.w.settings.Canvas().OnTypedKey()(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.loop.pump()
	if h.w.settings != nil {
		t.Fatal("Esc did not close the settings")
	}
}
