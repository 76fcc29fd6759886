package app

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/backends/adapters"
)

// checkBackendNames asks each configured server whether the models, samplers and
// node types its backend's configuration names are there: several servers quietly
// run something else for a name they do not have. A config that does not build is
// reported by checkBackends, and an unreachable server by its probe.
func checkBackendNames(ctx context.Context, cfg *Config, timeout time.Duration) []checkResult {
	if len(cfg.Backends) == 0 {
		return nil
	}
	reg, err := adapters.NewRegistry(cfg.Backends, cfg.Features)
	if err != nil {
		return nil
	}
	var out []checkResult
	for _, b := range reg.Backends() {
		nc, ok := b.(backends.NameChecker)
		if !ok {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		res, err := nc.CheckNames(cctx)
		cancel()
		r := checkResult{Name: "models " + b.Name()}
		switch {
		case err != nil:
			r.Status, r.Detail = checkNote, fmt.Sprintf("could not ask %s for its models and samplers: %v", backends.Label(b), err)
		case len(res.Missing) > 0:
			r.Status, r.Detail = checkFail, strings.Join(res.Missing, "; ")
			r.Fix = fmt.Sprintf("install what is missing on the server, or correct backends.%s to a name it has", b.Name())
		case len(res.Found) == 0:
			r.Status, r.Detail = checkOK, "its configuration names no model or sampler (the server's own are used)"
		default:
			r.Status, r.Detail = checkOK, "on the server: "+strings.Join(res.Found, ", ")
		}
		out = append(out, r)
	}
	return out
}
