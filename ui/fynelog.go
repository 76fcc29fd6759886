package ui

import (
	"bytes"
	"io"
	"sync"
)

// Fyne reports through the standard logger, three lines at a time ("Fyne error:
// REASON", "  Cause: ...", "  At: file:line"). Its file dialog builds a sidebar of
// the XDG folders (Documents, Music, Pictures, Videos, ...) each time it opens and
// reports every one this computer does not define (xdg-user-dir answers the home
// folder) as an error, though the dialog works and simply leaves it out. Those
// reports are noise on the terminal of every photographer without a Videos folder;
// fyneLogFilter drops them and passes everything else on.
type fyneLogFilter struct {
	mu       sync.Mutex
	out      io.Writer
	dropping bool // inside a dropped report: its Cause and At lines go too
}

// harmlessFyneReports are the reasons of Fyne reports that say nothing is wrong.
var harmlessFyneReports = [][]byte{
	[]byte("Fyne error:  Getting favorite locations"),
}

func newFyneLogFilter(out io.Writer) *fyneLogFilter { return &fyneLogFilter{out: out} }

// Write takes one log line per call, as the standard logger writes them.
func (f *fyneLogFilter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case bytes.Contains(p, []byte("Fyne error: ")):
		f.dropping = false
		for _, r := range harmlessFyneReports {
			if bytes.Contains(p, r) {
				f.dropping = true
			}
		}
	case f.dropping && (bytes.Contains(p, []byte("  Cause: ")) || bytes.Contains(p, []byte("  At: "))):
	default:
		f.dropping = false
	}
	if f.dropping {
		return len(p), nil
	}
	return f.out.Write(p)
}
