package localapi

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
)

// hostCheck refuses requests whose Host header does not name this server, so a
// web page cannot reach the loopback API through a DNS name it controls (DNS
// rebinding). Accepted: localhost, loopback and the bound IP literal on the
// bound port, and the configured extra hosts. IP literals are safe to accept
// because a rebinding attack needs a name.
type hostCheck struct {
	mu       sync.RWMutex
	port     string // "" accepts any port (configured port 0 and not bound yet)
	ip       netip.Addr
	wildcard bool // bound to 0.0.0.0 or ::
	extra    map[string]bool
}

func newHostCheck(listen string, extra []string) (*hostCheck, error) {
	h := &hostCheck{extra: map[string]bool{}}
	if err := h.set(listen); err != nil {
		return nil, err
	}
	for _, e := range extra {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" || strings.ContainsAny(e, "/ ") {
			return nil, fmt.Errorf("localapi: allowed host %q: want host or host:port", e)
		}
		h.extra[e] = true
	}
	return h, nil
}

func (h *hostCheck) set(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("localapi: listen address %q: %w", addr, err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.port = port
	if port == "0" {
		h.port = ""
	}
	h.ip, h.wildcard = netip.Addr{}, host == ""
	if ip, err := netip.ParseAddr(host); err == nil {
		h.ip = ip.Unmap()
		h.wildcard = ip.IsUnspecified()
	} else if host != "" && !strings.EqualFold(host, "localhost") {
		h.extra[strings.ToLower(host)] = true // a configured name is the address itself
	}
	return nil
}

// bind records the address Serve actually listens on.
func (h *hostCheck) bind(addr string) { _ = h.set(addr) }

func (h *hostCheck) allowed(hostHeader string) bool {
	hostHeader = strings.ToLower(hostHeader)
	if hostHeader == "" {
		return false
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = strings.Trim(hostHeader, "[]"), "80"
	}
	if h.extra[hostHeader] || h.extra[host] {
		return true
	}
	if h.port != "" && port != h.port {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	ip = ip.Unmap()
	return ip.IsLoopback() || ip == h.ip || (h.wildcard && !ip.IsUnspecified())
}

func (h *hostCheck) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.allowed(r.Host) {
			writeError(w, http.StatusForbidden, fmt.Sprintf("Host %q is not an address of this server", r.Host))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// corsPolicy answers browsers from the configured origins only; with none
// configured it adds nothing, so browsers keep the same-origin rule.
type corsPolicy struct {
	origins map[string]bool
}

func newCORSPolicy(origins []string) (*corsPolicy, error) {
	p := &corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		u, err := url.Parse(strings.TrimSpace(o))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("localapi: CORS origin %q: want scheme://host[:port]", o)
		}
		p.origins[strings.ToLower(u.Scheme+"://"+u.Host)] = true
	}
	return p, nil
}

const (
	corsMethods = "GET, HEAD, POST, PUT, DELETE"
	corsHeaders = "X-API-Key, Content-Type"
	corsExpose  = "X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"
)

func (p *corsPolicy) middleware(next http.Handler) http.Handler {
	if len(p.origins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		ok := p.origins[strings.ToLower(origin)]
		preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
		h := w.Header()
		h.Add("Vary", "Origin")
		if preflight {
			if !ok {
				writeError(w, http.StatusForbidden, fmt.Sprintf("origin %q is not allowed", origin))
				return
			}
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsHeaders)
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if ok {
			h.Set("Access-Control-Allow-Origin", origin)
			h.Set("Access-Control-Expose-Headers", corsExpose)
		}
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a panicking handler into a logged 500 envelope; the server
// keeps serving. A panic after the answer started can only end the connection.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if tw.wrote {
				panic(http.ErrAbortHandler)
			}
			writeError(w, http.StatusInternalServerError, "internal server error")
		}()
		next.ServeHTTP(tw, r)
	})
}

// trackingWriter notes whether the answer has started. It passes Flush and
// Hijack through (streams and WebSocket upgrades need them) and unwraps for
// http.ResponseController.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) {
	if code >= 200 {
		t.wrote = true
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

func (t *trackingWriter) Flush() {
	t.wrote = true
	http.NewResponseController(t.ResponseWriter).Flush()
}

func (t *trackingWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	t.wrote = true
	return http.NewResponseController(t.ResponseWriter).Hijack()
}

func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
