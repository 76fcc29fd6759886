package assets

import (
	"encoding/json"
	"errors"
	"log/slog"
	"mime"
	"net/http"
	"strings"

	"github.com/porchlight/porchlight/core"
)

// StorageHandler serves the signed storage addresses. Mount it at "/storage/" without
// stripping the prefix. It needs no API key and is not rate limited: the signature is
// the authorisation.
//
//	PUT       /storage/upload/{assetId}?exp=&sig=    the bytes of a declared upload
//	GET, HEAD /storage/download/{assetId}?exp=&sig=  the bytes of a ready asset (Range, ETag)
func (s *Service) StorageHandler() http.Handler {
	return s.StorageHandlerWith(StorageOptions{})
}

// StorageHandlerWith is StorageHandler with the upload bodies received as opt says.
func (s *Service) StorageHandlerWith(opt StorageOptions) http.Handler {
	opt = opt.withDefaults()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serveStorage(w, r, opt) })
}

func (s *Service) serveStorage(w http.ResponseWriter, r *http.Request, opt StorageOptions) {
	what, id, ok := strings.Cut(strings.TrimPrefix(r.URL.Path, "/storage/"), "/")
	if !ok || id == "" || strings.Contains(id, "/") || (what != "upload" && what != "download") {
		writeError(w, http.StatusNotFound, "no such storage address")
		return
	}
	method, allow, allowed := r.Method, "PUT", r.Method == http.MethodPut
	if what == "download" {
		allow, allowed = "GET, HEAD", r.Method == http.MethodGet || r.Method == http.MethodHead
		method = http.MethodGet // one signature covers GET and HEAD
	}
	if !allowed {
		w.Header().Set("Allow", allow)
		writeError(w, http.StatusMethodNotAllowed, "the "+what+" address answers "+allow)
		return
	}
	q := r.URL.Query()
	if err := s.signer.Verify(method, id, q.Get("exp"), q.Get("sig"), s.cfg.Now()); err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	if what == "upload" {
		s.serveUpload(w, r, id, opt)
		return
	}
	s.serveDownload(w, r, id, opt.Logger)
}

func (s *Service) serveDownload(w http.ResponseWriter, r *http.Request, id string, log *slog.Logger) {
	f, a, err := s.Open(id)
	if err != nil {
		writeCoreError(w, r, log, err)
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", servedType(a.ContentType, a.Format))
	h.Set("ETag", `"`+a.SHA256+`"`)
	h.Set("Cache-Control", "private, max-age=3600, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	if cd := mime.FormatMediaType("attachment", map[string]string{"filename": a.Filename}); cd != "" {
		h.Set("Content-Disposition", cd)
	}
	http.ServeContent(w, r, a.Filename, a.UpdatedAt, f)
}

// writeError answers with the API's error envelope.
func writeError(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"status": status, "reason": reason}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// httpStatus maps an error's kind to the status the API answers.
func httpStatus(err error) int {
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
	var stalled *StalledError
	switch {
	case errors.As(err, &stalled):
		return http.StatusRequestTimeout
	case errors.Is(err, ErrStorageFull):
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}

// writeCoreError answers err. Server-side failures are logged and answered with a
// reason of their own: their text names files of the data dir.
func writeCoreError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	status := httpStatus(err)
	reason := err.Error()
	switch status {
	case http.StatusInsufficientStorage:
		log.Error("storage full", "method", r.Method, "path", r.URL.Path, "err", err)
		reason = "the server has no space left to store the file; nothing was kept, try again once space is freed"
	case http.StatusInternalServerError:
		log.Error("storage failure", "method", r.Method, "path", r.URL.Path, "err", err)
		reason = "internal error storing the file"
	}
	writeError(w, status, reason)
}
