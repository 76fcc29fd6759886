// Command porchlight edits real-estate listing photos on the photographer's machine.
// Everything is wired in package app; this file only hands over, after serving as
// the LibRaw worker when this executable was started as one.
package main

import (
	"os"

	_ "github.com/porchlight/porchlight/internal/plainlocale" // before the GUI toolkit reads the locale

	"github.com/porchlight/porchlight/app"
	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

func main() {
	// LibRaw runs in a child process of this executable; in that child, nothing else runs.
	if code, worker := raw.MaybeRunWorker(); worker {
		os.Exit(code)
	}
	os.Exit(app.Main(os.Args[1:]))
}
