package hotfolder

import (
	"testing"

	"github.com/porchlight/porchlight/engine/imaging/codec/raw/rawtest"
)

// RAW files are developed in LibRaw worker processes of this test binary, as the
// application does in its own.
func TestMain(m *testing.M) { rawtest.Main(m) }
