// Package rawtest lets a test binary develop RAW files the way the application
// does: in LibRaw worker processes of the same executable. A test package whose
// tests decode RAW files declares
//
//	func TestMain(m *testing.M) { rawtest.Main(m) }
package rawtest

import (
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

// Main answers as a LibRaw worker when the test binary was started as one, and
// otherwise runs the tests; it exits either way.
func Main(m *testing.M) {
	if code, worker := raw.MaybeRunWorker(); worker {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
