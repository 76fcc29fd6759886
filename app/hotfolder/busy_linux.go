//go:build linux

package hotfolder

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// busyFiles reports, for each of the given absolute paths, why it is not free to be
// taken: it cannot be opened, another program holds a lock on it, or a process on
// this machine has it open for writing (read from /proc, which shows the processes
// this user may see). Files written over a network share by another machine show
// none of this; for them the settle time alone decides.
func busyFiles(paths []string) map[string]string {
	out := map[string]string{}
	want := map[string]string{} // real path -> path as given
	for _, p := range paths {
		if reason := lockedReason(p); reason != "" {
			out[p] = reason
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			real = p
		}
		want[real] = p
	}
	if len(want) == 0 {
		return out
	}
	for p, pid := range writers(want) {
		out[p] = fmt.Sprintf("still open for writing by process %d", pid)
	}
	return out
}

// lockedReason opens p and tests for flock and POSIX record locks that a writer
// may hold. It never follows a link put in the file's place, nor waits on a pipe.
func lockedReason(p string) string {
	f, err := os.OpenFile(p, os.O_RDONLY|openNoFollow, 0)
	if err != nil {
		return fmt.Sprintf("cannot be opened: %v", err)
	}
	defer f.Close()
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB); err != nil {
		if err == unix.EWOULDBLOCK {
			return "locked by another program"
		}
	} else {
		unix.Flock(fd, unix.LOCK_UN)
	}
	lk := unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 0}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err == nil && lk.Type != unix.F_UNLCK {
		return fmt.Sprintf("locked by process %d", lk.Pid)
	}
	return ""
}

// writers scans /proc/*/fd for descriptors that point at the wanted files and are
// open for writing, returning the path as given with one such process.
func writers(want map[string]string) map[string]int {
	out := map[string]int{}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, pe := range procs {
		pid, err := strconv.Atoi(pe.Name())
		if err != nil {
			continue
		}
		fdDir := "/proc/" + pe.Name() + "/fd"
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue // gone, or another user's
		}
		for _, fe := range fds {
			target, err := os.Readlink(fdDir + "/" + fe.Name())
			if err != nil || !strings.HasPrefix(target, "/") {
				continue
			}
			given, ok := want[target]
			if !ok {
				continue
			}
			if _, seen := out[given]; seen {
				continue
			}
			if openForWriting("/proc/" + pe.Name() + "/fdinfo/" + fe.Name()) {
				out[given] = pid
			}
		}
	}
	return out
}

// openForWriting reads the access mode from an fdinfo file's flags (octal).
func openForWriting(fdinfo string) bool {
	f, err := os.Open(fdinfo)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), "flags:")
		if !ok {
			continue
		}
		flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
		if err != nil {
			return false
		}
		mode := flags & unix.O_ACCMODE
		return mode == unix.O_WRONLY || mode == unix.O_RDWR
	}
	return false
}
