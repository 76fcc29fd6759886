package localapi

import (
	"net/http"
	"strings"

	"github.com/porchlight/porchlight/engine/catalog"
)

// Handlers of the public and catalog routes: health, the OpenAPI document, the
// feature catalog and the presets (their rows are in routes.go).

type healthAnswer struct {
	Status string `json:"status" enum:"ok"`
}

type featuresAnswer struct {
	Features []catalog.Feature `json:"features"`
}

type presetsAnswer struct {
	Presets []catalog.Preset `json:"presets"`
}

func (s *Server) health(*http.Request) (int, any, error) {
	return 0, healthAnswer{Status: "ok"}, nil
}

func (s *Server) serveOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(s.openapiJSON)
	}
}

func (s *Server) features(*http.Request) (int, any, error) {
	return 0, featuresAnswer{Features: catalog.Features(s.deps.Available)}, nil
}

func (s *Server) presets(r *http.Request) (int, any, error) {
	q := r.URL.Query()
	if err := onlyQuery(q, "feature"); err != nil {
		return 0, nil, err
	}
	list, err := catalog.Presets(strings.TrimSpace(q.Get("feature")))
	if err != nil {
		return 0, nil, err
	}
	return 0, presetsAnswer{Presets: list}, nil
}
