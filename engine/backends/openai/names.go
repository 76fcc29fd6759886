package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/porchlight/porchlight/engine/backends"
)

// CheckNames asks GET /v1/models whether the model is offered. An endpoint without
// the list (some compatible servers) is not checked.
func (b *Backend) CheckNames(ctx context.Context) (backends.NameCheck, error) {
	var nc backends.NameCheck
	var ans struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	err := b.call.JSON(ctx, backends.Call{Op: "list the models", Method: http.MethodGet,
		Path: strings.TrimSuffix(b.path, "/images/edits") + "/models", Retry: backends.RetrySafe}, &ans)
	var se *backends.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nc, nil
	}
	if err != nil {
		return nc, err
	}
	var ids []string
	for _, m := range ans.Data {
		if m.ID == b.model {
			nc.Found = append(nc.Found, fmt.Sprintf("model %q", b.model))
			return nc, nil
		}
		ids = append(ids, m.ID)
	}
	nc.Missing = append(nc.Missing, fmt.Sprintf("model %q is not offered; the endpoint has: %s (%s)",
		b.model, backends.NameList(ids), b.spec.Field("model")))
	return nc, nil
}

var _ backends.NameChecker = (*Backend)(nil)
