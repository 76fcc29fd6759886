package ui

import (
	"bytes"
	"log"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/test"
)

// Opening Fyne's file dialogs on a home without the XDG folders (here a bare temp
// folder) prints nothing through the filter the window installs, while other Fyne
// errors still get through whole.
func TestFileDialogsPrintNoErrors(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var raw, filtered bytes.Buffer
	prev, flags := log.Writer(), log.Flags()
	defer func() { log.SetOutput(prev); log.SetFlags(flags) }()

	open := func() {
		a := test.NewApp()
		defer a.Quit()
		w := a.NewWindow("dialogs")
		w.Resize(fyne.NewSize(1000, 720))
		dialog.NewFolderOpen(func(fyne.ListableURI, error) {}, w).Show()
		dialog.NewFileOpen(func(fyne.URIReadCloser, error) {}, w).Show()
		dialog.NewFileSave(func(fyne.URIWriteCloser, error) {}, w).Show()
	}
	log.SetOutput(&raw)
	open()
	if !strings.Contains(raw.String(), "Getting favorite locations") {
		t.Skipf("Fyne reported nothing to filter here:\n%s", raw.String())
	}
	log.SetOutput(newFyneLogFilter(&filtered))
	open()
	fyne.LogError("Something else", nil)
	if got := filtered.String(); strings.Count(got, "Fyne error:") != 1 || !strings.Contains(got, "Something else") ||
		strings.Count(got, "  At: ") != 1 || strings.Contains(got, "favorite") {
		t.Fatalf("filtered log:\n%s", got)
	}
}
