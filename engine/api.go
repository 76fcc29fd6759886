package engine

import (
	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// API is what the front doors (HTTP handlers, the window, hot folders) call; *Engine
// implements it. Every method checks ownership: another key's order or batch is
// core.NotFound. Errors are core errors that the front doors map by kind.
type API interface {
	Submit(owner string, inputs []string, opts core.Options, idempotencyKey string) (core.OrderSummary, error)
	SubmitBatch(owner string, b BatchRequest, idempotencyKey string) (core.BatchAggregate, error)
	Order(owner, id string) (core.OrderSummary, error)
	Cancel(owner, id string) (core.OrderSummary, error)
	Batch(owner, id string) (core.BatchAggregate, error)
	CancelBatch(owner, id string) (core.BatchAggregate, error)
	Running(owner string) []core.OrderSummary
	Events() *events.Bus
}

var _ API = (*Engine)(nil)
