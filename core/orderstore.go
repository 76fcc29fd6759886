package core

import (
	"context"
	"errors"
	"time"
)

// OrderStore keeps the engine's orders, batches, queue and idempotency records. The
// engine holds only this interface: engine/store implements it on bbolt for one
// machine, and a queue shared by several machines implements the same seam.
//
// The store keeps the queue in step with each order's status: a pending order is in
// the queue at its place (first in, first out), a running one is held by a worker,
// a settled one is in neither. A status change and the record's other changes commit
// together. The store never publishes anything: the engine announces what a
// transaction changed only after it committed. Every order, batch and record it
// returns is the caller's own copy.
type OrderStore interface {
	// Update runs fn in one read-write transaction, committed when fn returns nil
	// and rolled back otherwise.
	Update(ctx context.Context, fn func(tx OrdersTx) error) error
	// View runs fn in one read-only transaction: a consistent snapshot.
	View(ctx context.Context, fn func(tx OrdersReader) error) error

	// Get returns order id, nil when there is none.
	Get(ctx context.Context, id string) (*Order, error)
	// ByOwner returns every order of owner, in no particular order.
	ByOwner(ctx context.Context, owner string) ([]Order, error)
	// Pending returns the pending orders in queue order, oldest first.
	Pending(ctx context.Context) ([]Order, error)
	// Running returns the orders workers hold.
	Running(ctx context.Context) ([]Order, error)
	// Head returns the oldest pending order, nil when the queue is empty. A queue
	// entry that does not lead to a pending order at that place answers an error
	// wrapping ErrDanglingEntry; DropDanglingHead removes it.
	Head(ctx context.Context) (*Order, error)
	// DropDanglingHead removes the first queue entry when it still does not lead
	// to a pending order; it leaves a sound head alone.
	DropDanglingHead(ctx context.Context) error
	// RecoverRunning hands every order a worker held when the process stopped to
	// fn, all in one transaction; fn moves it on (back to pending or to failed).
	// Entries of orders that are not running any more are dropped.
	RecoverRunning(ctx context.Context, fn func(tx OrdersTx, o *Order) error) error

	// ForgetIdempotency drops the idempotency records created at or before cutoff,
	// and those that cannot be read.
	ForgetIdempotency(ctx context.Context, cutoff time.Time) error

	// StepTimings returns the saved cost model of the pipeline's steps (seconds
	// per megapixel by step name), nil when none was saved.
	StepTimings(ctx context.Context) (map[string]float64, error)
	// SaveStepTimings replaces the saved cost model.
	SaveStepTimings(ctx context.Context, timings map[string]float64) error
}

// OrdersReader reads inside a transaction of an OrderStore.
type OrdersReader interface {
	// Get returns order id, nil when there is none.
	Get(id string) (*Order, error)
	// Batch returns batch id, nil when there is none.
	Batch(id string) (*Batch, error)
	// Idempotency returns the record of owner's Idempotency-Key key, nil when
	// there is none.
	Idempotency(owner, key string) (*IdempotencyRecord, error)
}

// OrdersTx changes an OrderStore inside one transaction.
type OrdersTx interface {
	OrdersReader
	// Enqueue stores a new order as pending at the tail of the queue and lists it
	// under its owner.
	Enqueue(o *Order) error
	// Move stores o with status to, taking it out of the queue or the workers'
	// hold that its current status (o.Status, as read in this transaction) puts it
	// in and into the one of to. The caller checks that the state machine allows
	// the move; o.Status is to afterwards.
	Move(o *Order, to OrderStatus) error
	// PutBatch stores b.
	PutBatch(b *Batch) error
	// PutIdempotency stores the first answer to owner's Idempotency-Key key.
	PutIdempotency(owner, key string, rec IdempotencyRecord) error
}

// IdempotencyRecord is the stored first answer to an Idempotency-Key: which request
// it was (by fingerprint) and what it created.
type IdempotencyRecord struct {
	Kind        string    `json:"kind"` // "order" or "batch"
	Fingerprint string    `json:"fingerprint"`
	ID          string    `json:"id"` // order or batch id
	CreatedAt   time.Time `json:"createdAt"`
}

// ErrDanglingEntry is the error (wrapped) of a queue entry that does not lead to a
// pending order at its place; such an entry would block the queue forever.
var ErrDanglingEntry = errors.New("queue entry without a pending order")
