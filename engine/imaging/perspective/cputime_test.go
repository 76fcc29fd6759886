package perspective

import (
	"syscall"
	"testing"
	"time"
)

// cpuTimer reports the process CPU time per operation next to the wall time, which
// on a shared machine says more about the code than the wall clock does.
type cpuTimer struct{ start time.Duration }

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func startCPU() cpuTimer { return cpuTimer{processCPU()} }

func (c cpuTimer) report(b *testing.B) {
	b.ReportMetric(float64(processCPU()-c.start)/float64(b.N), "cpu-ns/op")
}
