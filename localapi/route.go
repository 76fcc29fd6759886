package localapi

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
)

// Access is who may call a route.
type Access int

const (
	AccessKey    Access = iota // any valid API key
	AccessAdmin                // a key of scope admin (403 otherwise)
	AccessPublic               // no key (catalog, openapi.json, health, signed storage addresses)
)

// Budget is the rate-limit bucket a route spends from.
type Budget int

const (
	// BudgetAuto applies the spec's rule: GET and HEAD spend reads; mutations under
	// /v1/assets spend uploads; every other mutation spends writes.
	BudgetAuto Budget = iota
	BudgetNone        // not limited (event streams, WebSocket)
	BudgetRead
	BudgetWrite
	BudgetUpload
)

func (b Budget) String() string {
	return [...]string{"auto", "none", "read", "write", "upload"}[b]
}

// HandlerFunc answers a JSON route: the data goes into {"data": ...} with status
// (0 means the route's Status), an error into {"error": ...} with the status of
// its core kind.
type HandlerFunc func(r *http.Request) (status int, data any, err error)

// Route is one endpoint: how it is reached, who may call it, what it costs, what
// it does and how the OpenAPI document describes it.
type Route struct {
	Method string // GET, POST, PUT, DELETE; GET routes answer HEAD as well
	Path   string // gorilla/mux template, "/v1/api-keys/{uuid}"
	Access Access
	Budget Budget

	// Exactly one of Handle (a JSON answer through the envelope) and Stream (writes
	// its own answer: SSE, WebSocket, storage bytes) is set.
	Handle HandlerFunc
	Stream http.HandlerFunc

	// Documentation.
	Summary     string
	Description string
	Status      int     // success status, 200 when 0
	Query       []Param // query parameters
	Request     any     // the JSON body: a Go value of its type, or a Schema; nil = no body
	Response    any     // the data member: a Go value of its type, or a Schema
	// StreamType and StreamDoc describe a Stream route's success answer
	// ("text/event-stream", "application/octet-stream").
	StreamType string
	StreamDoc  string
	Errors     []int // error statuses besides those the access rule and budget imply
	// AlsoStatus lists further success statuses the handler may answer with the
	// same data (an export answers 202 when it is new, 200 when it exists).
	AlsoStatus []int
	// Headers are request headers the route reads (Idempotency-Key, Last-Event-ID).
	Headers []Param
	// StreamSchema describes one message of an event stream (an SSE data: line, a
	// WebSocket text message): a Go value of its type, or a Schema.
	StreamSchema any
}

// Param is a query parameter.
type Param struct {
	Name        string
	Description string
	Required    bool
	Schema      Schema
}

// handle registers rt. It panics on a malformed route: that is a programming
// error that every test run catches at once.
func (s *Server) handle(rt Route) {
	if (rt.Handle == nil) == (rt.Stream == nil) {
		panic(fmt.Sprintf("localapi: route %s %s needs exactly one of Handle and Stream", rt.Method, rt.Path))
	}
	if !strings.HasPrefix(rt.Path, "/") {
		panic(fmt.Sprintf("localapi: route path %q must start with /", rt.Path))
	}
	switch rt.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch:
	default:
		panic(fmt.Sprintf("localapi: route %s %s: unsupported method", rt.Method, rt.Path))
	}
	for _, o := range s.routes {
		if o.Method == rt.Method && o.Path == rt.Path {
			panic(fmt.Sprintf("localapi: route %s %s registered twice", rt.Method, rt.Path))
		}
	}
	if rt.Status == 0 {
		rt.Status = http.StatusOK
	}
	if rt.Budget == BudgetAuto {
		rt.Budget = autoBudget(rt)
	}
	if rt.Access == AccessPublic {
		rt.Budget = BudgetNone // budgets are per key; public routes have none
	}
	s.routes = append(s.routes, &rt)
}

// autoBudget is the spec's Limits rule.
func autoBudget(rt Route) Budget {
	switch {
	case rt.Stream != nil && rt.StreamType == "text/event-stream":
		return BudgetNone
	case rt.Method == http.MethodGet:
		return BudgetRead
	case rt.Path == "/v1/assets" || strings.HasPrefix(rt.Path, "/v1/assets/"):
		return BudgetUpload
	default:
		return BudgetWrite
	}
}

// mount adds the registered routes to the router, literal segments before
// variables so "/v1/api-keys/rotate" is never taken for "/v1/api-keys/{uuid}".
func (s *Server) mount() error {
	sorted := append([]*Route(nil), s.routes...)
	sort.SliceStable(sorted, func(i, j int) bool { return pathBefore(sorted[i].Path, sorted[j].Path) })
	for _, rt := range sorted {
		methods := []string{rt.Method}
		if answersHEAD(rt) {
			methods = append(methods, http.MethodHead)
		}
		if err := s.router.Handle(rt.Path, s.wrap(rt)).Methods(methods...).GetError(); err != nil {
			return fmt.Errorf("localapi: route %s %s: %w", rt.Method, rt.Path, err)
		}
	}
	return nil
}

// answersHEAD: GET routes answer HEAD too, except event streams, which would
// hold a connection open to send nothing.
func answersHEAD(rt *Route) bool {
	return rt.Method == http.MethodGet && rt.StreamType != "text/event-stream"
}

func pathBefore(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := 0; i < len(as) && i < len(bs); i++ {
		av, bv := strings.HasPrefix(as[i], "{"), strings.HasPrefix(bs[i], "{")
		if av != bv {
			return bv
		}
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
}

// wrap is the one place where every route is authenticated, authorised, charged
// and answered.
func (s *Server) wrap(rt *Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rt.Handle != nil {
			// Streams keep the connection open for long; JSON answers get a deadline
			// (wall time: the injectable clock only drives the budgets).
			rc := http.NewResponseController(w)
			deadline := time.Now().Add(s.cfg.RequestTimeout)
			_ = rc.SetReadDeadline(deadline)
			_ = rc.SetWriteDeadline(deadline)
		}
		if rt.Access != AccessPublic {
			k, end, err := s.deps.Keys.AuthenticateWatch(r.Header.Get(HeaderAPIKey))
			if err != nil {
				s.writeErr(w, r, err)
				return
			}
			if rt.Access == AccessAdmin && k.Scope != core.ScopeAdmin {
				s.writeErr(w, r, core.Forbidden("this endpoint needs an admin key; key %s has scope %s", k.Prefix, k.Scope))
				return
			}
			if !s.charge(w, rt.Budget, k.UUID) {
				return
			}
			r = r.WithContext(withKeyEnd(withKey(r.Context(), k), end))
		}
		if rt.Stream != nil {
			// A stream ends when its key is rotated or revoked (streams.go).
			r, cancel := untilKeyEnds(r)
			defer cancel()
			rt.Stream(w, r)
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
		}
		status, data, err := rt.Handle(r)
		if err != nil {
			s.writeErr(w, r, err)
			return
		}
		if status == 0 {
			status = rt.Status
		}
		s.writeData(w, r, status, data)
	})
}

// charge spends one unit of budget and sets the rate-limit headers; when the
// budget is exhausted it answers 429 and reports false.
func (s *Server) charge(w http.ResponseWriter, b Budget, keyID string) bool {
	l := s.limits.of(b)
	if l == nil {
		return true
	}
	d := l.Take(keyID)
	h := w.Header()
	h.Set(HeaderRateLimit, strconv.Itoa(d.Limit))
	h.Set(HeaderRateRemaining, strconv.Itoa(d.Remaining))
	h.Set(HeaderRateReset, strconv.FormatInt(d.ResetUnix(), 10))
	if d.Allowed {
		return true
	}
	retry := d.RetryAfterSeconds()
	h.Set("Retry-After", strconv.FormatInt(retry, 10))
	writeError(w, http.StatusTooManyRequests,
		fmt.Sprintf("rate limit exceeded: %d %s requests allowed; retry in %d s", d.Limit, b, retry))
	return false
}

// PathVar returns a path variable of the route ("{uuid}").
func PathVar(r *http.Request, name string) string { return muxVar(r, name) }
