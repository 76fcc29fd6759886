package app

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/app/hotfolder"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/internal/testphotos"
)

func meanLevel(img image.Image) float64 {
	b := img.Bounds()
	var sum float64
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			sum += float64(r+g+bl) / 3
		}
	}
	return sum / float64((b.Dx()+1)/2*((b.Dy()+1)/2))
}

// A look saved in the config file is a tonecraft_profile like the built-in ones:
// process takes its key, and its settings reach the photo.
func TestProcessUsesAStudioPresetFromTheConfig(t *testing.T) {
	t.Cleanup(func() { _ = catalog.SetUserPresets(nil) })
	in := testphotos.Path(t, "interiors", "houses_109_bedroom.jpg")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte(`presets:
  - key: studio-bright
    name: Studio bright
    base: natural
    options:
      exposure: 1.5
      saturation: -100
`), 0o600)

	plain := filepath.Join(dir, "plain.png")
	mine := filepath.Join(dir, "mine.png")
	a := processTo(t, plain, png.Decode, "--config", cfg, "-q", "--tonecraft", "--tonecraft-profile", "natural", "-o", plain, in)
	b := processTo(t, mine, png.Decode, "--config", cfg, "-q", "--tonecraft", "--tonecraft-profile", "studio-bright", "-o", mine, in)
	if la, lb := meanLevel(a), meanLevel(b); lb < la*1.2 {
		t.Errorf("mean level %.0f with the preset, %.0f without: its exposure did not reach the photo", lb, la)
	}
	r, g, bl, _ := b.At(b.Bounds().Dx()/2, b.Bounds().Dy()/2).RGBA()
	if max(r, g, bl)-min(r, g, bl) > 0x300 {
		t.Errorf("centre pixel %d %d %d: the preset's saturation -100 did not make it grey", r, g, bl)
	}

	// A hot folder names the studio's look like a built-in one.
	if _, _, err := LoadConfig(cfg, nil); err != nil {
		t.Fatal(err)
	}
	folders, err := hotfolder.Decode([]map[string]any{{"name": "studio", "input": t.TempDir(), "output": t.TempDir(), "preset": "studio-bright"}})
	if err != nil || len(folders) != 1 || *folders[0].Options.TonecraftProfile != "studio-bright" {
		t.Fatalf("a hot folder with the studio's preset: %v", err)
	}

	os.WriteFile(cfg, []byte("presets:\n  - key: signature\n    base: natural\n"), 0o600)
	_, stderr, err := runCLI(t, "process", "--config", cfg, "-q", "-o", filepath.Join(dir, "x.png"), in)
	if err == nil || !strings.Contains(err.Error()+stderr, "presets[0].key") {
		t.Fatalf("a preset reusing a built-in key: err %v, stderr %s", err, stderr)
	}
}
