package app

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/engine/pipeline"
)

// A name longer than the default column (a backend or hot folder the user named)
// widens the column for every line, so the details stay in one column; on a
// terminal long details wrap under it, and the fix under its text.
func TestDoctorColumnsAlign(t *testing.T) {
	results := []checkResult{
		{Name: "jpeg", Status: checkOK, Detail: "libjpeg-turbo encodes and decodes"},
		{Name: "hot folder downtown-listings", Status: checkFail,
			Detail: "input folder /srv/studio/downtown-listings/incoming does not exist and nothing can be taken from it",
			Fix:    "create it (mkdir -p \"/srv/studio/downtown-listings/incoming\") or correct its input in the config file"},
		{Name: "hot folders", Status: checkNote, Detail: "none configured"},
	}
	for _, width := range []int{0, 80} {
		var b bytes.Buffer
		printDoctorWidth(&b, results, width)
		lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
		col := strings.Index(lines[0], "libjpeg")
		for _, l := range lines {
			if l == "" {
				break // the summary follows
			}
			if width > 0 && len(l) > width {
				t.Errorf("width %d: line of %d characters: %q", width, len(l), l)
			}
			if len(l) <= col || l[col-1] != ' ' || l[col] == ' ' {
				t.Errorf("width %d: detail not in the column at %d: %q", width, col, l)
			}
		}
		if width == 0 && len(lines) != 4+2 {
			t.Errorf("unwrapped report has %d lines, want one per check and the fix:\n%s", len(lines), b.String())
		}
	}
}

// The magic eraser runs on this machine without a backend: the serve log and
// doctor say so, as /v1/features does (available) and the README.
func TestEraserIsLocalEverywhere(t *testing.T) {
	var logs bytes.Buffer
	p := pipeline.New(pipeline.Config{})
	if _, err := registerBackends(&Config{}, p, slog.New(slog.NewTextHandler(&logs, nil))); err != nil {
		t.Fatal(err)
	}
	if !p.FeatureAvailable("magic_eraser") {
		t.Fatal("the catalog would call the magic eraser unavailable")
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "unavailable") && strings.Contains(l, "magic_eraser") {
			t.Errorf("the serve log calls the magic eraser unavailable: %s", l)
		}
	}
	if !strings.Contains(logs.String(), `run on this machine" features=magic_eraser`) {
		t.Errorf("the serve log does not say the eraser runs on this machine:\n%s", logs.String())
	}
	report, _ := runDoctorWith(t, "")
	var line string
	for _, l := range strings.Split(report, "\n") {
		if strings.Contains(l, "backends") {
			line = l
		}
	}
	if !strings.Contains(line, "runs on this machine: magic_eraser") || strings.Contains(line, "magic eraser") {
		t.Errorf("doctor's backends line: %q", line)
	}
}
