package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
)

// fullTextLabel is a one-line label for messages that can be long (the status
// bar, a scene's state, a hot folder's last error): it cuts the text to its width
// with an ellipsis, and a tap opens the whole message, wrapped, in a dialog.
type fullTextLabel struct {
	widget.Label
	parent func() fyne.Window // the window the dialog opens over
	title  string
	opened dialog.Dialog // the last dialog opened, for tests
}

func newFullTextLabel(text, title string, parent func() fyne.Window) *fullTextLabel {
	l := &fullTextLabel{parent: parent, title: title}
	l.Text = text
	l.Truncation = fyne.TextTruncateEllipsis
	l.ExtendBaseWidget(l)
	return l
}

// Tapped shows the whole message.
func (l *fullTextLabel) Tapped(*fyne.PointEvent) {
	if l.Text == "" || l.parent == nil || l.parent() == nil {
		return
	}
	msg := widget.NewLabel(l.Text)
	msg.Wrapping = fyne.TextWrapWord
	msg.Selectable = true
	scroll := container.NewVScroll(msg)
	scroll.SetMinSize(fyne.NewSize(520, 160))
	l.opened = dialog.NewCustom(l.title, "Close", scroll, l.parent())
	l.opened.Show()
}
