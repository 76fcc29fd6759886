package tone

import (
	"testing"
	"time"

	"github.com/porchlight/porchlight/internal/imagingtest"
)

// cpuTimer reports the process CPU time per operation next to the wall time, which
// on a shared machine says more about the code than the wall clock does.
type cpuTimer struct{ start time.Duration }

func startCPU() cpuTimer { return cpuTimer{imagingtest.ProcessCPU()} }

func (c cpuTimer) report(b *testing.B) {
	b.ReportMetric(float64(imagingtest.ProcessCPU()-c.start)/float64(b.N), "cpu-ns/op")
}
