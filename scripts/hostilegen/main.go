// Command hostilegen writes the hostile uploads scripts/bench-hostile.sh sends: files
// of a few hundred kB that declare frames of about 120 MP, complete or cut short.
//
//	go run ./scripts/hostilegen DIR
//
// It prints one line per file: name, content type, and the state ingest should reach.
package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/porchlight/porchlight/internal/hostile"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hostilegen DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	build := func(write func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			fmt.Fprintln(os.Stderr, "hostilegen:", err)
			os.Exit(1)
		}
		return b.Bytes()
	}
	png := build(func(b *bytes.Buffer) error { return hostile.PNGZeros(b, 10950, 10950) })
	png2 := build(func(b *bytes.Buffer) error { return hostile.PNGZeros(b, 10949, 10950) })
	tiff := build(func(b *bytes.Buffer) error { return hostile.TIFFZeros(b, 10950, 10950) })
	mask := build(func(b *bytes.Buffer) error { return hostile.PNGMask(b, 9000, 6000) })
	png12 := build(func(b *bytes.Buffer) error { return hostile.PNGZeros(b, 4000, 3000) })
	files := []struct {
		name, ct, want string
		data           []byte
	}{
		{"zeros16-a.png", "image/png", "ready", png},
		{"zeros16-b.png", "image/png", "ready", png2},
		{"scan-ends-early-a.jpg", "image/jpeg", "failed", hostile.JPEGTruncated(10900, 10900)},
		{"scan-ends-early-b.jpg", "image/jpeg", "failed", hostile.JPEGTruncated(10900, 10850)},
		{"flat.jpg", "image/jpeg", "ready", hostile.JPEGFlat(10900, 10900, 3, false)},
		{"flat-progressive.jpg", "image/jpeg", "ready", hostile.JPEGFlat(10900, 10900, 3, true)},
		{"cut.jpg", "image/jpeg", "failed", hostile.JPEGCut(10900, 10900, 0.3)},
		{"zeros16-cut.png", "image/png", "failed", png[:len(png)/2]},
		{"zeros16.tif", "image/tiff", "ready", tiff},
		{"mask.png", "image/png", "ready", mask},
		{"grid.heic", "image/heic", "ready", hostile.HEICGrid(21, 21)},
		// Frames an order can take within a 1 GB budget, so the order phase runs some.
		{"flat-12mp.jpg", "image/jpeg", "ready", hostile.JPEGFlat(4000, 3000, 3, false)},
		{"zeros16-12mp.png", "image/png", "ready", png12},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.name), f.data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "hostilegen:", err)
			os.Exit(1)
		}
		fmt.Println(f.name, f.ct, f.want)
	}
}
