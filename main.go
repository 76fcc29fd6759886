// Command porchlight edits real-estate listing photos on the photographer's machine.
// Everything is wired in package app; this file only hands over.
package main

import (
	"os"

	_ "github.com/porchlight/porchlight/internal/plainlocale" // before the GUI toolkit reads the locale

	"github.com/porchlight/porchlight/app"
)

func main() { os.Exit(app.Main(os.Args[1:])) }
