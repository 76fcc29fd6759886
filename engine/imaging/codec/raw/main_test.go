package raw

import (
	"os"
	"testing"
)

// The tests develop files in worker processes of this test binary, as the
// application does in its own.
func TestMain(m *testing.M) {
	if code, worker := MaybeRunWorker(); worker {
		os.Exit(code)
	}
	os.Exit(m.Run())
}
