package app

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/adapters"
	"github.com/porchlight/porchlight/engine/pipeline"
)

// registerBackends builds the model backends from the config keys `backends` and
// `features` and registers the generative steps on p. A feature without a backend
// keeps no step: its orders fail with feature_unavailable and the catalog shows it
// unavailable. Config mistakes are errors naming the key.
func registerBackends(cfg *Config, p *pipeline.Pipeline, log *slog.Logger) (*backends.Registry, error) {
	reg, err := adapters.NewRegistry(cfg.Backends, cfg.Features)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := pipeline.RegisterBackends(p, reg); err != nil {
		return nil, err
	}
	for _, b := range reg.Backends() {
		var serves []string
		for _, f := range reg.Features() {
			if fb, _ := reg.For(f); fb == b {
				serves = append(serves, f)
			}
		}
		log.Info("model backend configured", "backend", b.Name(), "type", b.Type(), "features", strings.Join(serves, ","))
	}
	local, missing := withoutBackend(p, reg.Available)
	if len(local) > 0 {
		log.Info("features without a model backend run on this machine", "features", strings.Join(local, ","))
	}
	if len(missing) > 0 {
		log.Info("generative features without a model backend are unavailable", "features", strings.Join(missing, ","),
			"configure", "name a backend for each under `features` in the config file")
	}
	return reg, nil
}

// withoutBackend sorts the model-backend features that served(feature) says no
// backend serves: local ones run on this machine all the same (the magic eraser's
// inpainting), the others are unavailable. p decides, so the log, doctor and
// GET /v1/features say the same.
func withoutBackend(p *pipeline.Pipeline, served func(string) bool) (local, unavailable []string) {
	for _, f := range backends.Features {
		switch {
		case served(f):
		case p.FeatureAvailable(f):
			local = append(local, f)
		default:
			unavailable = append(unavailable, f)
		}
	}
	return local, unavailable
}

// withoutBackendNote says in one sentence what runs without a backend.
func withoutBackendNote(served func(string) bool) string {
	local, missing := withoutBackend(pipeline.New(pipeline.Config{}), served)
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "unavailable: "+strings.Join(missing, ", "))
	}
	if len(local) > 0 {
		parts = append(parts, "runs on this machine: "+strings.Join(local, ", "))
	}
	return strings.Join(parts, "; ")
}

// available is the catalog's availability of a feature: every step it needs is
// registered (a generative feature's step exists only when a backend serves it).
func (s *system) available(feature string) bool {
	return s.pipe != nil && s.pipe.FeatureAvailable(feature)
}
