//go:build unix

package hotfolder

import (
	"errors"
	"os"
	"syscall"
)

// linkUnsupported reports errors of file systems that have no hard links.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) ||
		errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EMLINK)
}

func crossDevice(err error) bool { return errors.Is(err, syscall.EXDEV) }

// links is the hard link count of a file.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
