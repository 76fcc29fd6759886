package raw

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// applyLimits caps the worker's address space at what it maps now plus memory bytes,
// and its CPU time at cpu seconds. Empty values leave a limit as it is.
func applyLimits(memory, cpu string) error {
	if memory != "" {
		extra, err := strconv.ParseInt(memory, 10, 64)
		if err != nil || extra <= 0 {
			return fmt.Errorf("bad memory limit %q", memory)
		}
		now, err := mappedBytes()
		if err != nil {
			return err
		}
		lim := uint64(now + extra)
		if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
			return fmt.Errorf("address space limit: %w", err)
		}
	}
	if cpu != "" {
		sec, err := strconv.ParseUint(cpu, 10, 64)
		if err != nil || sec == 0 {
			return fmt.Errorf("bad CPU limit %q", cpu)
		}
		if err := syscall.Setrlimit(syscall.RLIMIT_CPU, &syscall.Rlimit{Cur: sec, Max: sec}); err != nil {
			return fmt.Errorf("CPU time limit: %w", err)
		}
	}
	return nil
}

// mappedBytes is the process's address space now (VmSize): the Go runtime and the
// shared libraries have reserved plenty already, so the limit is relative to it.
func mappedBytes() (int64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmSize:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			break
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("no VmSize in /proc/self/status")
}
