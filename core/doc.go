// Package core holds the types every other package of Porchlight shares: API keys,
// assets, orders, batches, order options, events and the typed errors that the HTTP
// layer turns into status codes. It imports nothing of ours, so every arrow of the
// dependency graph can point at it.
package core
