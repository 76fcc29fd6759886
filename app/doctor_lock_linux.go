package app

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockHolder returns the pid of the process holding a lock on path, read from
// /proc/locks, and its program name; 0 when it cannot tell.
func lockHolder(path string) (int, string) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, ""
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, ""
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer f.Close()
	// A line: "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a waiting lock has
	// "->" after the number. The device is major:minor:inode in hex:hex:decimal.
	want := ":" + strconv.FormatUint(sys.Ino, 10)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" {
			continue
		}
		if !strings.HasSuffix(fields[5], want) {
			continue
		}
		pid, err := strconv.Atoi(fields[4])
		if err != nil || pid <= 0 {
			continue
		}
		name := ""
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil {
			name = filepath.Base(exe)
		} else if comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); err == nil {
			name = strings.TrimSpace(string(comm))
		}
		return pid, name
	}
	return 0, ""
}
