package assets

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/imaging/codec"
)

// tagged returns a copy of a real photo with EXIF tags written by exiftool.
func tagged(t *testing.T, data []byte, args ...string) []byte {
	t.Helper()
	if _, err := exec.LookPath("exiftool"); err != nil {
		t.Skip("exiftool not installed")
	}
	p := filepath.Join(t.TempDir(), "tagged.jpg")
	if err := os.WriteFile(p, data, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("exiftool", append(append([]string{"-q", "-overwrite_original"}, args...), p)...).CombinedOutput()
	if err != nil {
		t.Fatalf("exiftool: %v %s", err, out)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Ingest records the size as displayed, after the EXIF orientation.
func TestIngestDimensionsAfterOrientation(t *testing.T) {
	e := newEnv(t, Config{})
	rotated := tagged(t, photo(t, "brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_06.jpg"), "-Orientation=6", "-n")
	a := e.add("rotated.jpg", "image/jpeg", rotated)
	if a.Status != core.AssetReady || a.Width != 1200 || a.Height != 1600 {
		t.Fatalf("orientation 6: %dx%d %s, want 1200x1600", a.Width, a.Height, a.Status)
	}
}

// Exports keep the photographer's metadata and drop the GPS position unless the
// configuration keeps it.
func TestExportMetadataPolicy(t *testing.T) {
	src := tagged(t, photo(t, "brackets", "room_window_e995", "HDRI_Sample_Scene_Window_-_06.jpg"),
		"-Copyright=Studio North", "-Artist=A. Photographer",
		"-GPSLatitude=47.3769", "-GPSLatitudeRef=N", "-GPSLongitude=8.5417", "-GPSLongitudeRef=E")
	for _, keep := range []bool{false, true} {
		e := newEnv(t, Config{KeepGPS: keep})
		a := e.add("window.jpg", "image/jpeg", src)
		x, _, err := e.s.Export(owner, a.ID, core.ExportOptions{Format: "jpeg", MaxEdge: 800})
		if err != nil {
			t.Fatal(err)
		}
		if got := e.wait(x.ID); got.Status != core.AssetReady {
			t.Fatalf("export: %+v", got)
		}
		f, xa, _ := e.s.Open(x.ID)
		m, err := codec.ReadMeta(f, xa.Size)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.EqualFold(m.Make, "NIKON") || m.Copyright != "Studio North" || m.Artist != "A. Photographer" {
			t.Errorf("keepGPS=%v: metadata lost: make %q copyright %q artist %q", keep, m.Make, m.Copyright, m.Artist)
		}
		if m.HasGPS != keep {
			t.Errorf("keepGPS=%v: export has GPS %v", keep, m.HasGPS)
		}
		if keep && (m.Latitude < 47.37 || m.Latitude > 47.38) {
			t.Errorf("kept latitude %v", m.Latitude)
		}
	}
}
