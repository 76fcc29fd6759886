package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/porchlight/porchlight/core"
)

// Header names of the interface.
const (
	HeaderAPIKey        = "X-API-Key"
	HeaderRateLimit     = "X-RateLimit-Limit"
	HeaderRateRemaining = "X-RateLimit-Remaining"
	HeaderRateReset     = "X-RateLimit-Reset"
)

// ErrorBody is the failure envelope's member.
type ErrorBody struct {
	Status int    `json:"status"`
	Reason string `json:"reason"`
}

type errorEnvelope struct {
	Error ErrorBody `json:"error"`
}

type dataEnvelope struct {
	Data any `json:"data"`
}

// StatusOf maps an error's core kind to its HTTP status.
func StatusOf(err error) int {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return http.StatusRequestEntityTooLarge
	}
	switch core.KindOf(err) {
	case core.KindInvalid:
		return http.StatusBadRequest
	case core.KindUnauthorized:
		return http.StatusUnauthorized
	case core.KindForbidden:
		return http.StatusForbidden
	case core.KindNotFound:
		return http.StatusNotFound
	case core.KindConflict:
		return http.StatusConflict
	case core.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case core.KindUnsupported:
		return http.StatusUnsupportedMediaType
	}
	return http.StatusInternalServerError
}

// writeErr answers err. Internal errors are logged and answered with a generic
// reason: their text may carry paths or database details.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	reason := err.Error()
	if status == http.StatusRequestEntityTooLarge && core.KindOf(err) != core.KindTooLarge {
		reason = "body: larger than the limit"
	}
	if status == http.StatusInternalServerError {
		if errors.Is(err, context.Canceled) && r.Context().Err() != nil {
			s.log.Debug("request abandoned by the client", "method", r.Method, "path", r.URL.Path)
		} else {
			s.log.Error("internal error", "method", r.Method, "path", r.URL.Path, "err", err)
		}
		reason = "internal server error"
	}
	writeError(w, status, reason)
}

// writeData answers {"data": data}. A value that cannot be encoded is an internal
// error, caught before anything is written.
func (s *Server) writeData(w http.ResponseWriter, r *http.Request, status int, data any) {
	body, err := json.Marshal(dataEnvelope{Data: data})
	if err != nil {
		s.log.Error("encode answer", "method", r.Method, "path", r.URL.Path, "err", err)
		writeError(w, http.StatusInternalServerError, "internal server error")
		return
	}
	writeJSON(w, status, body)
}

// writeError answers the failure envelope with status.
func writeError(w http.ResponseWriter, status int, reason string) {
	if reason == "" {
		reason = http.StatusText(status)
	}
	body, _ := json.Marshal(errorEnvelope{Error: ErrorBody{Status: status, Reason: reason}})
	writeJSON(w, status, body)
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(bytes.TrimRight(body, "\n"), '\n'))
}

type keyCtx struct{}

func withKey(ctx context.Context, k core.Key) context.Context {
	return context.WithValue(ctx, keyCtx{}, k)
}

// KeyFrom returns the API key that authenticated the request. Resources are owned
// by the key's UUID.
func KeyFrom(ctx context.Context) (core.Key, bool) {
	k, ok := ctx.Value(keyCtx{}).(core.Key)
	return k, ok
}

// Owner is the UUID of the key that authenticated r; routes with AccessKey or
// AccessAdmin always have one.
func Owner(r *http.Request) string {
	k, _ := KeyFrom(r.Context())
	return k.UUID
}

func muxVar(r *http.Request, name string) string { return mux.Vars(r)[name] }
