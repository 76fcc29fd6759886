package engine

import (
	"context"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/events"
)

// API is what the front doors (HTTP handlers, the window, hot folders) call; *Engine
// implements it. Every method checks ownership: another key's order or batch is
// core.NotFound. Errors are core errors that the front doors map by kind. The context
// is the caller's (a request's, a folder's, the window's): it bounds the store's work
// for that call, never the order, which runs under the engine's own context.
type API interface {
	Submit(ctx context.Context, owner string, inputs []string, opts core.Options, idempotencyKey string) (core.OrderSummary, error)
	SubmitBatch(ctx context.Context, owner string, b BatchRequest, idempotencyKey string) (core.BatchAggregate, error)
	Order(ctx context.Context, owner, id string) (core.OrderSummary, error)
	Cancel(ctx context.Context, owner, id string) (core.OrderSummary, error)
	Batch(ctx context.Context, owner, id string) (core.BatchAggregate, error)
	CancelBatch(ctx context.Context, owner, id string) (core.BatchAggregate, error)
	Running(ctx context.Context, owner string) []core.OrderSummary
	Events() *events.Bus
}

var _ API = (*Engine)(nil)
