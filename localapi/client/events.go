package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/porchlight/porchlight/core"
)

// Event is one message of an event stream: {"type", "data"}. ID is the SSE frame's
// id ("" on frames without one and on WebSocket messages).
type Event struct {
	ID   string          `json:"-"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// Order decodes an order event's summary.
func (e Event) Order() (core.OrderSummary, bool) {
	var s core.OrderSummary
	if e.Type != core.EventOrder || json.Unmarshal(e.Data, &s) != nil {
		return s, false
	}
	return s, true
}

// Batch decodes a batch event's aggregate.
func (e Event) Batch() (core.BatchAggregate, bool) {
	var a core.BatchAggregate
	if e.Type != core.EventBatch || json.Unmarshal(e.Data, &a) != nil {
		return a, false
	}
	return a, true
}

// errStop ends a stream from inside its callback.
var errStop = errors.New("stop")

// OrderEvents follows GET /v1/orders/:id/events, calling fn for each event, until the
// stream closes (the order settled), ctx ends or fn returns an error (returned).
func (c *Client) OrderEvents(ctx context.Context, id string, fn func(Event) error) error {
	return c.stream(ctx, "/v1/orders/"+escape(id)+"/events", "", fn)
}

// BatchEvents follows GET /v1/batches/:id/events like OrderEvents.
func (c *Client) BatchEvents(ctx context.Context, id string, fn func(Event) error) error {
	return c.stream(ctx, "/v1/batches/"+escape(id)+"/events", "", fn)
}

// Events follows the account feed GET /v1/events until ctx ends or fn returns an
// error. The feed never ends by itself; after a drop it is joined again (from the
// last event seen), and ping events are passed on like the others.
func (c *Client) Events(ctx context.Context, fn func(Event) error) error {
	last := ""
	for {
		err := c.stream(ctx, "/v1/events", last, func(ev Event) error {
			if ev.ID != "" {
				last = ev.ID
			}
			return fn(ev)
		})
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var e *Error
		if errors.As(err, &e) && e.Status < 500 {
			return err
		}
		if err != nil && !isStreamBreak(err) {
			return err
		}
		if err := c.sleep(ctx, c.backoff); err != nil {
			return err
		}
	}
}

// streamBreak marks a stream that broke off (not the callback's error).
type streamBreak struct{ err error }

func (s *streamBreak) Error() string { return "event stream broke off: " + s.err.Error() }
func (s *streamBreak) Unwrap() error { return s.err }

func isStreamBreak(err error) bool {
	var sb *streamBreak
	return errors.As(err, &sb)
}

// stream reads one SSE stream. It returns nil when the server closed it, the
// callback's error, or a *streamBreak when the connection failed mid-stream.
func (c *Client) stream(ctx context.Context, path, lastID string, fn func(Event) error) error {
	h := http.Header{"Accept": {"text/event-stream"}}
	if lastID != "" {
		h.Set(HeaderLastEventID, lastID)
	}
	res, err := c.send(ctx, request{method: http.MethodGet, path: path, header: h, retry: retrySafe})
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return fmt.Errorf("GET %s: answered %q, not an event stream", path, ct)
	}
	stop := context.AfterFunc(ctx, func() { res.Body.Close() })
	defer stop()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 16<<10), 16<<20)
	var ev Event
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if data.Len() > 0 {
				var msg Event
				if err := json.Unmarshal([]byte(data.String()), &msg); err != nil {
					return fmt.Errorf("GET %s: an event is not JSON: %w", path, err)
				}
				if msg.Type == "" {
					msg.Type = ev.Type
				}
				msg.ID = ev.ID
				if err := fn(msg); err != nil {
					return err
				}
			}
			ev, data = Event{}, strings.Builder{}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // comment
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Type = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return &streamBreak{err: err}
	}
	return nil
}

// WSTicket is the answer of POST /v1/ws-ticket.
type WSTicket struct {
	Ticket    string `json:"ticket"`
	URL       string `json:"url"`
	ExpiresIn int    `json:"expiresIn"`
}

// NewWSTicket is POST /v1/ws-ticket (a write; single use, valid 60 seconds).
func (c *Client) NewWSTicket(ctx context.Context) (WSTicket, error) {
	var t WSTicket
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/ws-ticket", retry: retryLimited}, &t)
	return t, err
}

// WebSocket gets a ticket, connects to GET /v1/ws and calls fn for every message
// until ctx ends, the connection drops (returned) or fn returns an error. Clients
// whose WebSocket cannot connect fall back to the event streams or polling.
func (c *Client) WebSocket(ctx context.Context, fn func(Event) error) error {
	t, err := c.NewWSTicket(ctx)
	if err != nil {
		return err
	}
	// The ticket's URL carries the server's own view of its address; dial ours.
	u := *c.base
	u.Scheme = map[string]string{"https": "wss"}[c.base.Scheme]
	if u.Scheme == "" {
		u.Scheme = "ws"
	}
	u.Path = c.base.Path + "/v1/ws"
	u.RawQuery = url.Values{"ticket": {t.Ticket}}.Encode()
	d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
	conn, res, err := d.DialContext(ctx, u.String(), nil)
	if res != nil && res.Body != nil {
		defer res.Body.Close()
	}
	if err != nil {
		if res != nil {
			return &Error{Method: http.MethodGet, Path: "/v1/ws", Status: res.StatusCode, Reason: err.Error()}
		}
		return fmt.Errorf("GET /v1/ws: %w", err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &streamBreak{err: err}
		}
		var ev Event
		if err := json.Unmarshal(msg, &ev); err != nil {
			return fmt.Errorf("GET /v1/ws: a message is not JSON: %w", err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}
