// Package ui is Porchlight's desktop window (Fyne). It reads the engine through Go
// interfaces, never through HTTP, and updates widgets with fyne.Do so the window never
// blocks on work.
package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// Status is what the window shows about the running services.
type Status struct {
	DataDir string
	APIAddr string // "" when the API is off
}

// Run opens the main window and blocks until it is closed or ctx ends.
func Run(ctx context.Context, st Status) error {
	a := fyneapp.NewWithID("photo.porchlight.app")
	w := a.NewWindow("Porchlight")
	w.SetContent(content(st))
	w.Resize(fyne.NewSize(960, 640))
	go func() {
		<-ctx.Done()
		fyne.Do(a.Quit)
	}()
	w.ShowAndRun()
	return nil
}

func content(st Status) fyne.CanvasObject {
	api := "API off"
	if st.APIAddr != "" {
		api = fmt.Sprintf("API listening on http://%s", st.APIAddr)
	}
	title := widget.NewLabelWithStyle("Porchlight", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	return container.NewVBox(
		title,
		widget.NewLabel("Drop exposure brackets here to make listing photos."),
		widget.NewLabel(api),
		widget.NewLabel("Data: "+st.DataDir),
	)
}
