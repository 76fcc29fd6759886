package imaging

import (
	"syscall"
	"unsafe"
)

const hugePage = 2 << 20

// adviseHuge marks the whole 2 MB pages inside [p, p+size) for transparent huge
// pages (honoured where THP is "madvise" or "always"; an error changes nothing).
func adviseHuge(p unsafe.Pointer, size uintptr) {
	start := (uintptr(p) + hugePage - 1) &^ (hugePage - 1)
	end := (uintptr(p) + size) &^ (hugePage - 1)
	if end <= start {
		return
	}
	syscall.Syscall(syscall.SYS_MADVISE, start, end-start, syscall.MADV_HUGEPAGE)
}
