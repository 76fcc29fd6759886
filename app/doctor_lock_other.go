//go:build !linux

package app

// lockHolder cannot name the process holding a lock outside Linux.
func lockHolder(path string) (int, string) { return 0, "" }
