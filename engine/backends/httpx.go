package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MaxAnswerBytes bounds what is read of one answer (an image, a JSON document).
const MaxAnswerBytes = 512 << 20

// Caller sends a backend's HTTP requests: base address, authentication headers,
// retries with exponential backoff (see Retry), and errors that name the backend
// and what it was doing.
type Caller struct {
	Backend string // label for errors: "gpu (comfyui)"
	Base    *url.URL
	Client  *http.Client
	Header  http.Header // sent with every request (authentication)
	Retries int
	Backoff time.Duration

	jobOnce   sync.Once
	jobClient *http.Client
}

// NewCaller returns a Caller for spec with a transport that bounds connecting and
// TLS handshakes but not the answer: a generation may take minutes, and the job's
// context carries that deadline.
func NewCaller(spec Spec, label string) *Caller {
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &Caller{Backend: label, Base: spec.URL, Client: &http.Client{Transport: tr}, Header: http.Header{},
		Retries: spec.Retries, Backoff: spec.Backoff}
}

// Retry says when a failed request may be sent again.
type Retry int

const (
	// RetrySafe: the request changes nothing on the server, or doing it twice is
	// harmless (a read, an upload that overwrites); retried on 5xx, 429 and any
	// connection error.
	RetrySafe Retry = iota
	// RetryUnsent: the request starts a job. It is sent again only when the job
	// provably did not start: a 429 or 503 answer (refused before any work) or a
	// connection error before the whole request was written. Any other failure,
	// a connection lost once the request was sent above all, may leave the job
	// running on the server, so it is never sent twice; a lost answer comes back
	// as an error that matches ErrMaybeStarted. It goes out on a connection of its
	// own, so a kept-alive one the server closed at that moment cannot pass for a
	// request the server received.
	RetryUnsent
	// RetryNever: sent once.
	RetryNever
)

// ErrMaybeStarted matches the error of a RetryUnsent call whose connection broke
// after the request was sent: the server may be running the job.
var ErrMaybeStarted = errors.New("the connection broke after the request was sent; it is not sent again, since the server may be running it")

// Call is one request.
type Call struct {
	Op     string // for errors: "queue the workflow"
	Method string
	Path   string // joined to the base address
	Query  url.Values
	// Body makes the body afresh for every attempt; nil sends none.
	Body        func() (io.Reader, error)
	ContentType string
	Header      http.Header
	Retry       Retry
}

// StatusError is an answer with a status outside 2xx.
type StatusError struct {
	Status     int
	Message    string // the server's message, from its JSON error body when it had one
	RetryAfter time.Duration
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return http.StatusText(e.Status)
	}
	return e.Message
}

// URL returns the address of path (and query) under the base address.
func (c *Caller) URL(path string, q url.Values) string {
	u := *c.Base
	u.Path = c.Base.Path + "/" + strings.TrimLeft(path, "/")
	u.RawQuery = ""
	if len(q) > 0 {
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Do sends call and returns a 2xx answer, whose body the caller closes. Other
// answers and transport failures come back as *Error (wrapping *StatusError for
// HTTP statuses), after the retries the call allows. When ctx is done it returns
// ctx's error.
func (c *Caller) Do(ctx context.Context, call Call) (*http.Response, error) {
	wait := c.Backoff
	for attempt := 0; ; attempt++ {
		res, sent, err := c.once(ctx, call)
		if err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var se *StatusError
		isStatus := errors.As(err, &se)
		retry := false
		switch {
		case isStatus && call.Retry == RetrySafe:
			retry = se.Status >= 500 || se.Status == http.StatusTooManyRequests
		case isStatus && call.Retry == RetryUnsent:
			retry = se.Status == http.StatusServiceUnavailable || se.Status == http.StatusTooManyRequests
		case !isStatus:
			retry = call.Retry == RetrySafe || (call.Retry == RetryUnsent && !sent)
		}
		if !retry || attempt >= c.Retries {
			e := &Error{Backend: c.Backend, Op: call.Op, Err: err}
			switch {
			case isStatus:
				e.Status = se.Status
			case call.Retry == RetryUnsent && sent:
				e.Err = fmt.Errorf("%w: %v", ErrMaybeStarted, err)
			case attempt > 0:
				e.Err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, e
		}
		d := wait + time.Duration(rand.Int64N(int64(wait)/4+1)) // jitter spreads retries of parallel jobs
		if isStatus && se.RetryAfter > d {
			d = se.RetryAfter
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait *= 2
	}
}

// once sends one attempt; sent reports whether the whole request was written.
func (c *Caller) once(ctx context.Context, call Call) (_ *http.Response, sent bool, _ error) {
	var body io.Reader
	if call.Body != nil {
		b, err := call.Body()
		if err != nil {
			return nil, false, err
		}
		body = b
	}
	req, err := http.NewRequestWithContext(ctx, call.Method, c.URL(call.Path, call.Query), body)
	if err != nil {
		return nil, false, err
	}
	for k, vs := range c.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range call.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	if call.ContentType != "" {
		req.Header.Set("Content-Type", call.ContentType)
	}
	var wrote atomic.Bool
	req = req.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(i httptrace.WroteRequestInfo) { wrote.Store(i.Err == nil) },
	}))
	client := c.Client
	if call.Retry == RetryUnsent {
		client = c.newConnClient()
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, wrote.Load(), err
	}
	if res.StatusCode/100 == 2 {
		return res, true, nil
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(res.Body, 16<<10))
	se := &StatusError{Status: res.StatusCode, Message: ErrorMessage(b)}
	if ra := res.Header.Get("Retry-After"); ra != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && s >= 0 {
			se.RetryAfter = min(time.Duration(s)*time.Second, 2*time.Minute)
		}
	}
	return nil, true, se
}

// newConnClient returns a client like c.Client that opens a connection per request.
func (c *Caller) newConnClient() *http.Client {
	c.jobOnce.Do(func() {
		c.jobClient = c.Client
		if tr, ok := c.Client.Transport.(*http.Transport); ok {
			t := tr.Clone()
			t.DisableKeepAlives = true
			cl := *c.Client
			cl.Transport = t
			c.jobClient = &cl
		} else if c.Client.Transport == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.DisableKeepAlives = true
			cl := *c.Client
			cl.Transport = t
			c.jobClient = &cl
		}
	})
	return c.jobClient
}

// JSON sends call and decodes a 2xx JSON answer into out (nil discards it).
func (c *Caller) JSON(ctx context.Context, call Call, out any) error {
	res, err := c.Do(ctx, call)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := ReadAll(res.Body)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &Error{Backend: c.Backend, Op: call.Op, Err: fmt.Errorf("reading the answer: %w", err)}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return &Error{Backend: c.Backend, Op: call.Op, Err: fmt.Errorf("the answer is not the expected JSON: %v (%s)", err, Snippet(b))}
	}
	return nil
}

// JSONBody returns a Body func sending v as JSON.
func JSONBody(v any) (func() (io.Reader, error), error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return func() (io.Reader, error) { return bytes.NewReader(b), nil }, nil
}

// ReadAll reads an answer body up to MaxAnswerBytes.
func ReadAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxAnswerBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxAnswerBytes {
		return nil, fmt.Errorf("the answer is larger than %d MB", MaxAnswerBytes>>20)
	}
	return b, nil
}

// ErrorMessage extracts the message of the JSON error bodies the protocols use
// ({"error": "..."}, {"error": {"message": ...}}, {"detail": ...}, {"error":
// {"reason": ...}}), or returns a snippet of the body.
func ErrorMessage(b []byte) string {
	var v map[string]any
	if json.Unmarshal(b, &v) != nil {
		return Snippet(b)
	}
	var parts []string
	add := func(x any) {
		switch t := x.(type) {
		case string:
			if t != "" {
				parts = append(parts, t)
			}
		case map[string]any:
			for _, k := range []string{"message", "reason", "detail"} {
				if s, ok := t[k].(string); ok && s != "" {
					parts = append(parts, s)
					return
				}
			}
			if s, err := json.Marshal(t); err == nil {
				parts = append(parts, string(s))
			}
		case []any:
			for _, it := range t {
				if m, ok := it.(map[string]any); ok {
					msg, _ := m["msg"].(string)
					if loc, ok := m["loc"].([]any); ok && msg != "" {
						var l []string
						for _, p := range loc {
							l = append(l, fmt.Sprint(p))
						}
						msg = strings.Join(l, ".") + ": " + msg
					}
					if msg != "" {
						parts = append(parts, msg)
					}
				}
			}
		case nil:
		default:
			parts = append(parts, fmt.Sprint(t))
		}
	}
	for _, k := range []string{"error", "detail", "errors", "message"} {
		if x, ok := v[k]; ok {
			add(x)
		}
	}
	// ComfyUI explains a refused workflow per node.
	if ne, ok := v["node_errors"].(map[string]any); ok {
		ids := make([]string, 0, len(ne))
		for id := range ne {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			n, _ := ne[id].(map[string]any)
			class, _ := n["class_type"].(string)
			errs, _ := n["errors"].([]any)
			for _, e := range errs {
				m, _ := e.(map[string]any)
				msg, _ := m["message"].(string)
				if d, _ := m["details"].(string); d != "" && d != msg {
					msg += ": " + d
				}
				parts = append(parts, fmt.Sprintf("node %s (%s): %s", id, class, msg))
			}
		}
	}
	if len(parts) == 0 {
		return Snippet(b)
	}
	return strings.Join(parts, "; ")
}

// Snippet returns the start of b for messages.
func Snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
