// Package unregistered holds the tests of a binary that imports package raw without
// registering its LibRaw worker: such a binary must never turn into a worker, whatever
// its environment, and runs LibRaw in its own process.
package unregistered
