package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/viper"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/internal/testphotos"
)

// The export file chooser opens where the last export went, remembered in the
// config file; before any export (or when that folder is gone) in the output folder.
func TestExportOpensWhereTheLastExportWent(t *testing.T) {
	h := newHarness(t, 1)
	if got := exportStart(h.cfg); got == nil || got.Path() != h.out {
		t.Fatalf("before any export the chooser opens at %v, want the output folder %s", got, h.out)
	}
	a, err := h.w.upload(testphotos.Path(t, "interiors", "houses_109_bedroom.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("the upload to be ready", time.Minute, func() bool {
		got, err := h.sys.assets.Get(h.w.owner, a.ID)
		return err == nil && got.Status == core.AssetReady
	})
	dest := filepath.Join(t.TempDir(), "for-the-agent")
	os.Mkdir(dest, 0o700)
	path := filepath.Join(dest, "bedroom.jpg")
	h.w.detail.runExport(Scene{Name: "bedroom", Summary: core.OrderSummary{OutputAssetID: a.ID}},
		core.ExportOptions{Format: "jpeg", Quality: 80}, path)
	h.waitFor("the export", time.Minute, func() bool { return strings.HasPrefix(h.w.statusText.Text, "Exported") })
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
	if got := exportStart(h.cfg); got == nil || got.Path() != dest {
		t.Fatalf("after an export the chooser opens at %v, want %s", got, dest)
	}
	// Kept across starts: the config file has it.
	v := viper.New()
	v.SetConfigFile(h.cfg.File())
	if err := v.ReadInConfig(); err != nil || v.GetString(KeyExportDir) != dest {
		t.Fatalf("config file: %v %q", err, v.GetString(KeyExportDir))
	}
	os.RemoveAll(dest)
	if got := exportStart(h.cfg); got == nil || got.Path() != h.out {
		t.Fatalf("with the last folder gone the chooser opens at %v, want %s", got, h.out)
	}
}
