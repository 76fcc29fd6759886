// Command genicon draws Porchlight's icon (ui/appicon) into packaging/icon.png, the
// icon FyneApp.toml names for `fyne package`.
//
//	go run ./packaging/genicon [-size 512] [-o packaging/icon.png]
package main

import (
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"

	"github.com/porchlight/porchlight/ui/appicon"
)

func main() {
	size := flag.Int("size", 512, "edge in pixels")
	out := flag.String("o", "packaging/icon.png", "where to write the PNG")
	flag.Parse()
	if err := write(*out, *size); err != nil {
		fmt.Fprintln(os.Stderr, "genicon:", err)
		os.Exit(1)
	}
}

// write encodes the icon to a temporary file beside out, syncs it and renames it.
func write(out string, size int) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".icon-*.png")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := png.Encode(tmp, appicon.Draw(size)); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}
