package iopaint

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/porchlight/porchlight/engine/backends"
)

// CheckNames names the model the server runs (GET /api/v1/model) and asks whether
// the configured sampler is one of its samplers (GET /api/v1/samplers): IOPaint
// fails a job with an unknown one with no more than its name.
func (b *Backend) CheckNames(ctx context.Context) (backends.NameCheck, error) {
	var nc backends.NameCheck
	var model struct {
		Name string `json:"name"`
	}
	if err := b.call.JSON(ctx, backends.Call{Op: "read the model", Method: http.MethodGet, Path: "/api/v1/model", Retry: backends.RetrySafe}, &model); err != nil {
		return nc, err
	}
	if model.Name != "" {
		nc.Found = append(nc.Found, fmt.Sprintf("model %q", model.Name))
	}
	if b.sampler == "" {
		return nc, nil
	}
	var samplers []string
	if err := b.call.JSON(ctx, backends.Call{Op: "list the samplers", Method: http.MethodGet, Path: "/api/v1/samplers", Retry: backends.RetrySafe}, &samplers); err != nil {
		return nc, err
	}
	if slices.Contains(samplers, b.sampler) {
		nc.Found = append(nc.Found, fmt.Sprintf("sampler %q", b.sampler))
	} else {
		nc.Missing = append(nc.Missing, fmt.Sprintf("sampler %q is not on the server; it has: %s (%s)",
			b.sampler, backends.NameList(samplers), b.spec.Field("sampler")))
	}
	return nc, nil
}

var _ backends.NameChecker = (*Backend)(nil)
