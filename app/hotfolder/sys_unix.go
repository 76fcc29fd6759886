//go:build unix

package hotfolder

import (
	"errors"
	"os"
	"syscall"

	journal "github.com/porchlight/porchlight/app/hotfolder/store"
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

// openNoFollow makes opening an input file fail on a symbolic link in its place
// instead of following it, and not block on a named pipe put there.
const openNoFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// identity is the device and inode of a file.
func identity(fi os.FileInfo) journal.FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return journal.FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return journal.FileID{}
}
