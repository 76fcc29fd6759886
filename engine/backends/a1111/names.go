package a1111

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strings"

	"github.com/porchlight/porchlight/engine/backends"
)

// sdModel is an entry of GET /sdapi/v1/sd-models.
type sdModel struct {
	Title     string `json:"title"`
	ModelName string `json:"model_name"`
	Hash      string `json:"hash"`
	SHA256    string `json:"sha256"`
	Filename  string `json:"filename"`
}

// name is the checkpoint's path under the models folder: its title without the
// hash the web UI appends.
func (m sdModel) name() string {
	if m.Hash != "" {
		return strings.TrimSuffix(m.Title, " ["+m.Hash+"]")
	}
	return m.Title
}

// aliases are the names the web UI accepts for it in sd_model_checkpoint (its
// CheckpointInfo ids, less the legacy 8-digit hash the list does not show).
func (m sdModel) aliases() []string {
	base := path.Base(strings.ReplaceAll(m.Filename, `\`, "/"))
	extra := strings.TrimSuffix(base, path.Ext(base))
	out := []string{m.Title, m.name(), m.ModelName, extra}
	if m.Hash != "" {
		out = append(out, m.Hash, m.name()+" ["+m.Hash+"]", extra+" ["+m.Hash+"]")
	}
	if m.SHA256 != "" {
		out = append(out, m.SHA256)
	}
	return out
}

type sampler struct {
	Name string `json:"name"`
}

type scheduler struct {
	Name    string   `json:"name"`
	Label   string   `json:"label"`
	Aliases []string `json:"aliases"`
}

// list reads one of the web UI's lists; found is false when the server has no
// such list (an older web UI has no /sdapi/v1/schedulers).
func (b *Backend) list(ctx context.Context, what, route string, out any) (found bool, err error) {
	err = b.call.JSON(ctx, backends.Call{Op: "list the " + what, Method: http.MethodGet, Path: route, Retry: backends.RetrySafe}, out)
	var se *backends.StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return false, nil
	}
	return err == nil, err
}

// CheckNames asks the server whether the configured checkpoint, sampler and
// scheduler exist, as the web UI matches them.
func (b *Backend) CheckNames(ctx context.Context) (backends.NameCheck, error) {
	var nc backends.NameCheck
	if b.model != "" {
		var models []sdModel
		if _, err := b.list(ctx, "checkpoints", "/sdapi/v1/sd-models", &models); err != nil {
			return nc, err
		}
		ok := false
		var names []string
		for _, m := range models {
			ok = ok || slices.Contains(m.aliases(), b.model)
			names = append(names, m.name())
		}
		if ok {
			nc.Found = append(nc.Found, fmt.Sprintf("checkpoint %q", b.model))
		} else {
			nc.Missing = append(nc.Missing, fmt.Sprintf("checkpoint %q is not on the server; it has: %s (%s)",
				b.model, backends.NameList(names), b.spec.Field("model")))
		}
	}
	var schedulers []scheduler
	hasSchedulers, err := b.list(ctx, "schedulers", "/sdapi/v1/schedulers", &schedulers)
	if err != nil {
		return nc, err
	}
	if b.scheduler != "" && hasSchedulers {
		ok := false
		var names []string
		for _, s := range schedulers {
			ok = ok || b.scheduler == s.Name || b.scheduler == s.Label
			names = append(names, s.Label)
		}
		if ok {
			nc.Found = append(nc.Found, fmt.Sprintf("scheduler %q", b.scheduler))
		} else {
			nc.Missing = append(nc.Missing, fmt.Sprintf("scheduler %q is not on the server; it has: %s (%s)",
				b.scheduler, backends.NameList(names), b.spec.Field("scheduler")))
		}
	}
	if b.sampler != "" {
		var samplers []sampler
		found, err := b.list(ctx, "samplers", "/sdapi/v1/samplers", &samplers)
		if err != nil {
			return nc, err
		}
		if found {
			// The web UI reads a scheduler at the end of the name ("DPM++ 2M Karras").
			name := b.sampler
		strip:
			for _, s := range schedulers {
				for _, opt := range append([]string{s.Label, s.Name}, s.Aliases...) {
					if opt != "" && strings.HasSuffix(name, " "+opt) {
						name = strings.TrimSuffix(name, " "+opt)
						break strip
					}
				}
			}
			var names []string
			for _, s := range samplers {
				names = append(names, s.Name)
			}
			if slices.Contains(names, name) {
				nc.Found = append(nc.Found, fmt.Sprintf("sampler %q", b.sampler))
			} else {
				nc.Missing = append(nc.Missing, fmt.Sprintf("sampler %q is not on the server; it has: %s (%s)",
					b.sampler, backends.NameList(names), b.spec.Field("sampler")))
			}
		}
	}
	return nc, nil
}

// checkNames fails the job when a configured name is not on the server: the web UI
// would run another model or sampler without a word.
func (b *Backend) checkNames(ctx context.Context) error {
	nc, err := b.CheckNames(ctx)
	if err != nil {
		return err
	}
	if len(nc.Missing) > 0 {
		return backends.Errorf(b, "check the configured names", "%s", strings.Join(nc.Missing, "; "))
	}
	return nil
}

var _ backends.NameChecker = (*Backend)(nil)
