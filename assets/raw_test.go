package assets

import (
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// Camera RAW is accepted by ingest and can be downloaded, but an export must go
// through an order first.
func TestRawUploadIngestedButNotExportable(t *testing.T) {
	if testing.Short() {
		t.Skip("develops a RAW file")
	}
	e := newEnv(t, Config{})
	crw := photo(t, "raw", "CRW.CRW")
	raw := e.add("CRW.CRW", "image/x-canon-crw", crw)
	if raw.Status != core.AssetReady || raw.Format != "raw" || raw.Width < 2000 || raw.Height < 1400 {
		t.Fatalf("CRW ingest: %+v", raw)
	}
	_, _, err := e.s.Export(owner, raw.ID, core.ExportOptions{Format: "jpeg"})
	if core.KindOf(err) != core.KindInvalid || !strings.Contains(err.Error(), "RAW") {
		t.Fatalf("export of a RAW upload: %v", err)
	}
	// Declared as octet-stream, the same file is accepted too.
	if a := e.add("x.crw", "application/octet-stream", crw); a.Status != core.AssetReady {
		t.Fatalf("CRW as octet-stream: %+v", a)
	}
	// Declared as another camera's RAW it is mislabelled.
	if a := e.add("x.nef", "image/x-nikon-nef", crw); a.Code != core.CodeContentTypeMismatch || !strings.Contains(a.Reason, "CRW") {
		t.Fatalf("CRW declared as NEF: %+v", a)
	}
	// A DNG whose pixel data was stripped has valid headers but cannot be developed.
	if a := e.add("DNG.dng", "image/x-adobe-dng", photo(t, "raw", "DNG.dng")); a.Status != core.AssetFailed || a.Code != core.CodeUnreadable {
		t.Fatalf("DNG without pixels: %+v", a)
	}
}
