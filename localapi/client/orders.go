package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/porchlight/porchlight/core"
)

// OrderRequest is the body of POST /v1/orders: the inputs and the order options
// (nil fields are left out, so presets and defaults apply).
type OrderRequest struct {
	Inputs  []string
	Options core.Options
}

// MarshalJSON lays the options beside inputs, as the interface wants them.
func (r OrderRequest) MarshalJSON() ([]byte, error) {
	m, err := optionFields(r.Options)
	if err != nil {
		return nil, err
	}
	m["inputs"] = r.Inputs
	if r.Inputs == nil {
		m["inputs"] = []string{}
	}
	return json.Marshal(m)
}

func optionFields(o core.Options) (map[string]any, error) {
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// OrderCreated is the answer of POST /v1/orders.
type OrderCreated struct {
	OrderID    string `json:"orderId"`
	InputCount int    `json:"inputCount"`
	core.OrderSummary
}

// Scene is one scene of a batch: its inputs and the options it overrides.
type Scene struct {
	Inputs  []string
	Options core.Options
}

// BatchRequest is the body of POST /v1/batches: a name, shared options and scenes.
type BatchRequest struct {
	Name     string
	Defaults core.Options
	Scenes   []Scene
}

// MarshalJSON lays the shared options at the top level and each scene's overrides
// beside its inputs.
func (r BatchRequest) MarshalJSON() ([]byte, error) {
	m, err := optionFields(r.Defaults)
	if err != nil {
		return nil, err
	}
	if r.Name != "" {
		m["name"] = r.Name
	}
	scenes := make([]map[string]any, len(r.Scenes))
	for i, s := range r.Scenes {
		sm, err := optionFields(s.Options)
		if err != nil {
			return nil, err
		}
		sm["inputs"] = s.Inputs
		scenes[i] = sm
	}
	m["scenes"] = scenes
	return json.Marshal(m)
}

// SubmitOrder is POST /v1/orders. idempotencyKey makes a repeated submission answer
// the first order; when empty a fresh key is made, so that a submission that met a
// 5xx or a lost connection is sent again safely: the server answers the order it
// already created, if it did.
func (c *Client) SubmitOrder(ctx context.Context, req OrderRequest, idempotencyKey string) (OrderCreated, error) {
	return callFor[OrderCreated](ctx, c, submission("/v1/orders", req, idempotencyKey))
}

// Order is GET /v1/orders/:id.
func (c *Client) Order(ctx context.Context, id string) (core.OrderSummary, error) {
	return callFor[core.OrderSummary](ctx, c, request{method: http.MethodGet, path: "/v1/orders/" + escape(id)})
}

// CancelOrder is POST /v1/orders/:id/cancel. Repeating it answers the same summary,
// so it is retried like a read; a settled order answers 409.
func (c *Client) CancelOrder(ctx context.Context, id string) (core.OrderSummary, error) {
	return callFor[core.OrderSummary](ctx, c, request{method: http.MethodPost, path: "/v1/orders/" + escape(id) + "/cancel", retry: retrySafe})
}

// SubmitBatch is POST /v1/batches, with the same idempotency as SubmitOrder.
func (c *Client) SubmitBatch(ctx context.Context, req BatchRequest, idempotencyKey string) (core.BatchAggregate, error) {
	return callFor[core.BatchAggregate](ctx, c, submission("/v1/batches", req, idempotencyKey))
}

// Batch is GET /v1/batches/:id.
func (c *Client) Batch(ctx context.Context, id string) (core.BatchAggregate, error) {
	return callFor[core.BatchAggregate](ctx, c, request{method: http.MethodGet, path: "/v1/batches/" + escape(id)})
}

// CancelBatch is POST /v1/batches/:id/cancel; repeating it answers the aggregate again.
func (c *Client) CancelBatch(ctx context.Context, id string) (core.BatchAggregate, error) {
	return callFor[core.BatchAggregate](ctx, c, request{method: http.MethodPost, path: "/v1/batches/" + escape(id) + "/cancel", retry: retrySafe})
}

// submission is a POST that creates something, with an idempotency key (a fresh one
// when key is empty) so that it is retried safely: the server answers what it already
// created, if it did.
func submission(path string, body any, key string) request {
	if key == "" {
		key = newIdempotencyKey()
	}
	return request{method: http.MethodPost, path: path, body: body, retry: retrySafe,
		header: http.Header{HeaderIdempotencyKey: {key}}}
}

// callFor is call decoding the answer into a new T.
func callFor[T any](ctx context.Context, c *Client, r request) (T, error) {
	var v T
	_, err := c.call(ctx, r, &v)
	return v, err
}

// WaitOrder follows an order until it settles and returns its terminal summary.
// progress (may be nil) receives every summary on the way. It follows the order's
// event stream, resuming after a dropped connection, and polls GET /v1/orders/:id
// when no stream can be had. A closed stream or a timeout of ctx never cancels the
// order.
func (c *Client) WaitOrder(ctx context.Context, id string, progress func(core.OrderSummary)) (core.OrderSummary, error) {
	var last core.OrderSummary
	var lastID string
	failures := 0
	for {
		err := c.stream(ctx, "/v1/orders/"+escape(id)+"/events", lastID, func(ev Event) error {
			lastID = ev.ID
			if ev.Type != core.EventOrder {
				return nil
			}
			var s core.OrderSummary
			if err := json.Unmarshal(ev.Data, &s); err != nil {
				return fmt.Errorf("order event: %w", err)
			}
			last = s
			if progress != nil {
				progress(s)
			}
			if s.Status.Terminal() {
				return errStop
			}
			return nil
		})
		if err == errStop {
			return last, nil
		}
		if ctx.Err() != nil {
			return last, ctx.Err()
		}
		if st := StatusOf(err); st == http.StatusNotFound || st == http.StatusUnauthorized || st == http.StatusForbidden {
			return last, err
		}
		// The stream ended without a terminal state, or could not be had: read the
		// order, then either stop, reconnect, or (after repeated failures) poll.
		s, rerr := c.Order(ctx, id)
		if rerr != nil {
			return last, rerr
		}
		if s.UpdatedAt != last.UpdatedAt || s.Status != last.Status {
			last = s
			if progress != nil {
				progress(s)
			}
		}
		if s.Status.Terminal() {
			return s, nil
		}
		if failures++; failures >= 3 {
			return c.pollOrder(ctx, id, last, progress)
		}
		if serr := c.sleep(ctx, c.backoff); serr != nil {
			return last, serr
		}
	}
}

// pollOrder reads the order every poll interval until it settles.
func (c *Client) pollOrder(ctx context.Context, id string, last core.OrderSummary, progress func(core.OrderSummary)) (core.OrderSummary, error) {
	for {
		if err := c.sleep(ctx, c.poll); err != nil {
			return last, err
		}
		s, err := c.Order(ctx, id)
		if err != nil {
			return last, err
		}
		if s.UpdatedAt != last.UpdatedAt || s.Status != last.Status {
			last = s
			if progress != nil {
				progress(s)
			}
		}
		if s.Status.Terminal() {
			return s, nil
		}
	}
}

// WaitBatch follows a batch until every scene settled and returns the aggregate with
// its scenes. progress (may be nil) receives the batch events' counters.
func (c *Client) WaitBatch(ctx context.Context, id string, progress func(core.BatchAggregate)) (core.BatchAggregate, error) {
	var lastID string
	failures := 0
	for {
		err := c.stream(ctx, "/v1/batches/"+escape(id)+"/events", lastID, func(ev Event) error {
			lastID = ev.ID
			if ev.Type != core.EventBatch {
				return nil
			}
			var a core.BatchAggregate
			if err := json.Unmarshal(ev.Data, &a); err != nil {
				return fmt.Errorf("batch event: %w", err)
			}
			if progress != nil {
				progress(a)
			}
			if a.Done {
				return errStop
			}
			return nil
		})
		if ctx.Err() != nil {
			return core.BatchAggregate{}, ctx.Err()
		}
		if st := StatusOf(err); st == http.StatusNotFound || st == http.StatusUnauthorized || st == http.StatusForbidden {
			return core.BatchAggregate{}, err
		}
		a, berr := c.Batch(ctx, id)
		if berr != nil {
			return a, berr
		}
		if a.Done {
			return a, nil
		}
		if failures++; failures >= 3 {
			for !a.Done {
				if err := c.sleep(ctx, c.poll); err != nil {
					return a, err
				}
				if a, err = c.Batch(ctx, id); err != nil {
					return a, err
				}
			}
			return a, nil
		}
		if serr := c.sleep(ctx, c.backoff); serr != nil {
			return a, serr
		}
	}
}
