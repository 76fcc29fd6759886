package hotfolder

import (
	"fmt"
	"slices"
	"strings"
	"time"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
	"github.com/porchlight/porchlight/core"
)

// Sidecar is the JSON written beside each output (<output>.json) and, for a failed
// scene, as <scene>.error.json in the errors folder.
type Sidecar struct {
	Folder    string            `json:"folder"`
	Scene     string            `json:"scene"`
	Index     int               `json:"index"`
	Status    string            `json:"status"` // completed or failed
	Inputs    []SidecarFile     `json:"inputs"`
	Extras    []SidecarFile     `json:"extras,omitempty"` // JPEG twins moved with their RAW inputs
	Options   core.Options      `json:"options"`
	OrderID   string            `json:"orderId,omitempty"`
	Recipes   map[string]string `json:"recipes,omitempty"`
	Notes     []string          `json:"notes,omitempty"`
	Output    string            `json:"output,omitempty"` // the result's file name (completed)
	Error     string            `json:"error,omitempty"`
	ErrorCode string            `json:"errorCode,omitempty"`
	Formed    time.Time         `json:"formed"`
	Finished  time.Time         `json:"finished"`
}

// SidecarFile is one input of a scene: its path relative to the input folder.
type SidecarFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func sidecarOf(folder string, s *journal.Scene) Sidecar {
	sc := Sidecar{
		Folder: folder, Scene: s.Label, Index: s.Index, Status: s.Outcome, Options: s.Options,
		OrderID: s.OrderID, Recipes: s.Recipes, Notes: s.Notes, Error: s.Error, ErrorCode: s.ErrorCode,
		Formed: s.Formed, Finished: s.Finished,
	}
	if s.Warning != "" {
		sc.Notes = append([]string{s.Warning}, s.Notes...)
	}
	if s.Outcome == journal.OutcomeCompleted {
		sc.Output = s.Output
	}
	for _, f := range s.Files {
		sc.Inputs = append(sc.Inputs, SidecarFile{Path: f.Rel, Size: f.Size, SHA256: f.SHA256})
	}
	for _, f := range s.Extras {
		sc.Extras = append(sc.Extras, SidecarFile{Path: f.Rel, Size: f.Size, SHA256: f.SHA256})
	}
	return sc
}

// errorText is the human-readable report of a failed scene.
func errorText(folder string, s *journal.Scene) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Scene %q of hot folder %q failed.\n\n", s.Label, folder)
	fmt.Fprintf(&b, "Reason: %s\n", s.Error)
	if s.ErrorCode != "" {
		fmt.Fprintf(&b, "Code: %s\n", s.ErrorCode)
	}
	if s.OrderID != "" {
		fmt.Fprintf(&b, "Order: %s\n", s.OrderID)
	}
	b.WriteString("\nInputs (moved into this folder):\n")
	for _, f := range s.Files {
		if slices.Contains(s.Left, f.Rel) {
			fmt.Fprintf(&b, "  %s (not read, and left in the input folder: it is no longer the file that was dropped)\n", f.Rel)
		} else {
			fmt.Fprintf(&b, "  %s\n", f.Rel)
		}
	}
	for _, f := range s.Extras {
		fmt.Fprintf(&b, "  %s (JPEG twin)\n", f.Rel)
	}
	fmt.Fprintf(&b, "\nFormed %s, failed %s.\n", s.Formed.Local().Format(time.DateTime), s.Finished.Local().Format(time.DateTime))
	b.WriteString("To try again, fix the cause and drop the files into the input folder again.\n")
	return b.String()
}
