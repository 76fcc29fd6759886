package codec

import (
	"os"
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/codec/raw"
)

// RAW files are developed in LibRaw worker processes of this test binary, as the
// application does in its own.
func TestMain(m *testing.M) {
	if code, worker := raw.MaybeRunWorker(); worker {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
