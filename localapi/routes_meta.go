package localapi

import (
	"net/http"
	"strings"

	"github.com/porchlight/porchlight/engine/catalog"
)

// Public and catalog routes: health, the OpenAPI document, the feature catalog
// and the presets.
func init() { addRouteGroup("meta", (*Server).metaRoutes) }

type healthAnswer struct {
	Status string `json:"status" enum:"ok"`
}

type featuresAnswer struct {
	Features []catalog.Feature `json:"features"`
}

type presetsAnswer struct {
	Presets []catalog.Preset `json:"presets"`
}

func (s *Server) metaRoutes() {
	s.handle(Route{
		Method: http.MethodGet, Path: "/healthz", Access: AccessPublic,
		Summary:  "Health check",
		Response: healthAnswer{},
		Handle: func(*http.Request) (int, any, error) {
			return 0, healthAnswer{Status: "ok"}, nil
		},
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/openapi.json", Access: AccessPublic,
		Summary:    "This document",
		StreamType: "application/json",
		StreamDoc:  "the OpenAPI 3.1 description of this interface",
		Stream: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Header().Set("Cache-Control", "no-cache")
			w.WriteHeader(http.StatusOK)
			if r.Method != http.MethodHead {
				w.Write(s.openapiJSON)
			}
		},
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/v1/features", Access: AccessPublic,
		Summary: "The feature catalog",
		Description: "Every feature with its recipe, the recipe's version and the order options it reads. " +
			"available is false when the feature needs a model backend and none is configured.",
		Response: featuresAnswer{},
		Handle: func(*http.Request) (int, any, error) {
			return 0, featuresAnswer{Features: catalog.Features(s.deps.Available)}, nil
		},
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/v1/presets",
		Summary: "Presets of a feature",
		Description: "Named looks that an order selects by key (tonecraft_profile, staging_preset). " +
			"Without feature, the presets of every feature.",
		Query: []Param{{
			Name: "feature", Description: "the feature whose presets to list: tonecraft or indoor_staging",
			Schema: Schema{"type": "string"},
		}},
		Response: presetsAnswer{},
		Handle: func(r *http.Request) (int, any, error) {
			q := r.URL.Query()
			if err := onlyQuery(q, "feature"); err != nil {
				return 0, nil, err
			}
			list, err := catalog.Presets(strings.TrimSpace(q.Get("feature")))
			if err != nil {
				return 0, nil, err
			}
			return 0, presetsAnswer{Presets: list}, nil
		},
	})
}
