//go:build !linux

package raw

// applyLimits has no portable way to cap address space outside Linux; the worker
// still runs in its own process, bounded in time by the parent's Timeout.
func applyLimits(memory, cpu string) error { return nil }
