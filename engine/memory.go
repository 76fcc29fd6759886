package engine

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// fallbackBudget is used when /proc/meminfo cannot be read (not Linux).
const fallbackBudget = 2 << 30

// defaultBudget is fraction of the memory the kernel reports available now.
func defaultBudget(fraction float64) int64 {
	avail, ok := memAvailable("/proc/meminfo")
	if !ok {
		return fallbackBudget
	}
	return int64(float64(avail) * fraction)
}

// memAvailable reads MemAvailable (bytes) from a meminfo file.
func memAvailable(path string) (int64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "MemAvailable:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			return 0, false
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || n <= 0 {
			return 0, false
		}
		if len(fields) > 1 && strings.EqualFold(fields[1], "kB") {
			n *= 1024
		}
		return n, true
	}
	return 0, false
}
