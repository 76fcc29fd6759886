//go:build !linux

package imaging

import "unsafe"

func adviseHuge(unsafe.Pointer, uintptr) {}
