// Package client is the Go client of Porchlight's /v1 interface: a typed call for
// every endpoint, the whole upload flow in one call (declare, PUT to the signed
// address, confirm, wait until ready), waiting for an order or batch by its event
// stream with a fallback to polling, downloads through the signed addresses, and
// the interface's rules for retrying:
//
//   - 429 answers are waited out for at least their Retry-After, then sent again;
//   - reads (and other requests that are safe to repeat: cancels, uploads to a
//     signed address) are retried with exponential backoff on 5xx and connection
//     errors;
//   - submissions always carry an Idempotency-Key (one is made when the caller gives
//     none), so after a 5xx or a lost connection they are sent again with the same
//     key and the server answers the order it may already have created instead of
//     creating a second one.
//
// It imports no server code; its types are its own or the shared core types.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Header names of the interface.
const (
	HeaderAPIKey         = "X-API-Key"
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderLastEventID    = "Last-Event-ID"
)

// Client calls one Porchlight server with one API key. It is safe for concurrent
// use, except that RotateKey changes the key the other calls use.
type Client struct {
	base *url.URL
	key  string
	http *http.Client

	retries       int
	backoff       time.Duration
	maxRetryAfter time.Duration
	poll          time.Duration
	sleep         func(ctx context.Context, d time.Duration) error
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default: one without a global timeout, since
// event streams stay open; each call is bounded by its context).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// WithRetries sets how many times a retryable failure is retried (default 4) and the
// first backoff (default 250ms, doubled each time).
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) { c.retries, c.backoff = n, backoff }
}

// WithMaxRetryAfter bounds how long a 429 is waited out (default 2 minutes); a longer
// Retry-After is returned as the error instead.
func WithMaxRetryAfter(d time.Duration) Option { return func(c *Client) { c.maxRetryAfter = d } }

// WithPollInterval sets how often status is polled when no event stream is
// available (default 1s).
func WithPollInterval(d time.Duration) Option { return func(c *Client) { c.poll = d } }

// WithSleep replaces how the client waits between attempts (tests use a fake clock).
func WithSleep(f func(ctx context.Context, d time.Duration) error) Option {
	return func(c *Client) { c.sleep = f }
}

// New returns a client of the server at baseURL ("http://127.0.0.1:8787") using
// apiKey (an sk- secret; "" for the public endpoints only).
func New(baseURL, apiKey string, opts ...Option) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(strings.TrimSpace(baseURL), "/"))
	if err != nil {
		return nil, fmt.Errorf("client: base URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an http(s) address", baseURL)
	}
	c := &Client{base: u, key: apiKey, http: &http.Client{}, retries: 4, backoff: 250 * time.Millisecond,
		maxRetryAfter: 2 * time.Minute, poll: time.Second, sleep: sleepCtx}
	for _, o := range opts {
		o(c)
	}
	return c, nil
}

// BaseURL returns the server's address.
func (c *Client) BaseURL() string { return c.base.String() }

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Error is an answer with the failure envelope, or a status without one.
type Error struct {
	Method, Path string
	Status       int
	Reason       string
	// RetryAfter is the wait a 429 asked for.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %s", e.Method, e.Path, e.Status, e.Reason)
}

// StatusOf returns the HTTP status of an *Error in err's chain, 0 when none.
func StatusOf(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

// retryKind says what may be repeated after a failure.
type retryKind int

const (
	retrySafe    retryKind = iota // repeating is harmless: reads, cancels, idempotent submissions
	retryLimited                  // only 429 (the server refused before doing anything)
)

// request is one call.
type request struct {
	method, path string
	query        url.Values
	body         any    // JSON-encoded when not nil
	raw          []byte // sent as is (with rawType) when not nil
	rawType      string
	header       http.Header
	retry        retryKind
	noKey        bool // signed storage addresses and public endpoints
	absolute     string
}

// call sends r and decodes the data member of a 2xx answer into out. It returns the
// success status.
func (c *Client) call(ctx context.Context, r request, out any) (int, error) {
	res, err := c.send(ctx, r)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<20))
	if err != nil {
		return 0, fmt.Errorf("%s %s: read the answer: %w", r.method, r.path, err)
	}
	if out == nil {
		return res.StatusCode, nil
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil || env.Data == nil {
		return 0, fmt.Errorf("%s %s: the answer is not a {\"data\": ...} envelope: %s", r.method, r.path, snippet(b))
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return 0, fmt.Errorf("%s %s: decode the answer: %w", r.method, r.path, err)
	}
	return res.StatusCode, nil
}

// send sends r with the retry rules and returns a 2xx answer (body open).
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	var body []byte
	ctype := r.rawType
	if r.raw != nil {
		body = r.raw
	} else if r.body != nil {
		b, err := json.Marshal(r.body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: encode the request: %w", r.method, r.path, err)
		}
		body, ctype = b, "application/json"
	}
	wait := c.backoff
	for attempt, limited := 0, 0; ; attempt++ {
		res, err := c.once(ctx, r, body, ctype)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var e *Error
		var d time.Duration
		switch {
		case errors.As(err, &e) && e.Status == http.StatusTooManyRequests:
			// Refused before anything happened: always safe to send again, after the
			// wait the server asked for.
			if e.RetryAfter > c.maxRetryAfter || limited >= 8 {
				return nil, err
			}
			limited++
			attempt--
			d = max(e.RetryAfter, time.Second)
		case r.retry == retrySafe && attempt < c.retries && (e == nil || e.Status >= 500):
			d = wait
			wait *= 2
		default:
			return nil, err
		}
		if err := c.sleep(ctx, d); err != nil {
			return nil, err
		}
	}
}

func (c *Client) url(path string, q url.Values) string {
	u := *c.base
	u.Path = c.base.Path + path
	u.RawQuery = q.Encode()
	return u.String()
}

func (c *Client) once(ctx context.Context, r request, body []byte, ctype string) (*http.Response, error) {
	target := r.absolute
	if target == "" {
		target = c.url(r.path, r.query)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, target, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if !r.noKey && c.key != "" {
		req.Header.Set(HeaderAPIKey, c.key)
	}
	for k, v := range r.header {
		req.Header[k] = v
	}
	res, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", r.method, r.path, err)
	}
	if res.StatusCode/100 == 2 || res.StatusCode == http.StatusSwitchingProtocols {
		return res, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	e := &Error{Method: r.method, Path: r.path, Status: res.StatusCode, Reason: http.StatusText(res.StatusCode)}
	var env struct {
		Error struct {
			Status int    `json:"status"`
			Reason string `json:"reason"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &env) == nil && env.Error.Reason != "" {
		e.Reason = env.Error.Reason
	} else if len(bytes.TrimSpace(b)) > 0 {
		e.Reason = snippet(b)
	}
	if ra := strings.TrimSpace(res.Header.Get("Retry-After")); ra != "" {
		if s, err := strconv.Atoi(ra); err == nil && s >= 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		} else if t, err := http.ParseTime(ra); err == nil {
			e.RetryAfter = max(time.Until(t), 0)
		}
	}
	return nil, e
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// newIdempotencyKey returns a fresh key for a submission the caller gave none.
func newIdempotencyKey() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("client: no randomness: " + err.Error())
	}
	return "pl-" + hex.EncodeToString(b[:])
}

func escape(id string) string { return url.PathEscape(id) }
