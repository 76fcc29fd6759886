package comfyui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/porchlight/porchlight/engine/backends"
)

// CheckNames asks the server (GET /object_info/{class}) whether every node type of
// the workflows is installed and every fixed choice they make (checkpoint, sampler,
// scheduler, LoRA...) is among the node's options; {{model}} counts as its value.
func (b *Backend) CheckNames(ctx context.Context) (backends.NameCheck, error) {
	var nc backends.NameCheck
	info := map[string]map[string]json.RawMessage{} // class -> input name -> spec
	features := make([]string, 0, len(b.workflows))
	for f := range b.workflows {
		features = append(features, f)
	}
	sort.Strings(features)
	seen := map[string]bool{}
	for _, f := range features {
		wf := b.workflows[f]
		ids := make([]string, 0, len(wf.nodes))
		for id := range wf.nodes {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			node, _ := wf.nodes[id].(map[string]any)
			class, _ := node["class_type"].(string)
			inputs, ok := info[class]
			if !ok {
				var ans map[string]struct {
					Input map[string]map[string]json.RawMessage `json:"input"`
				}
				if err := b.call.JSON(ctx, backends.Call{Op: "read the node types", Method: http.MethodGet,
					Path: "/object_info/" + url.PathEscape(class), Retry: backends.RetrySafe}, &ans); err != nil {
					return nc, err
				}
				inputs = nil
				if def, ok := ans[class]; ok {
					inputs = map[string]json.RawMessage{}
					for _, group := range def.Input {
						for name, spec := range group {
							inputs[name] = spec
						}
					}
				}
				info[class] = inputs
			}
			where := fmt.Sprintf("node %s of %s", id, filepath.Base(wf.path))
			if inputs == nil {
				nc.Missing = append(nc.Missing, fmt.Sprintf("node type %s (%s) is not installed on the server", class, where))
				continue
			}
			values, _ := node["inputs"].(map[string]any)
			names := make([]string, 0, len(values))
			for n := range values {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, name := range names {
				v, ok := values[name].(string)
				if !ok {
					continue
				}
				if m := placeholderRE.FindStringSubmatch(v); m != nil {
					if strings.ToLower(m[1]) != PhModel || m[0] != strings.TrimSpace(v) {
						continue // a job's value
					}
					v = b.model
				}
				options, isCombo := comboOptions(inputs[name])
				if !isCombo {
					continue
				}
				key := class + "\x00" + name + "\x00" + v
				if seen[key] {
					continue
				}
				seen[key] = true
				if slices.Contains(options, v) {
					nc.Found = append(nc.Found, fmt.Sprintf("%s %q", name, v))
				} else {
					nc.Missing = append(nc.Missing, fmt.Sprintf("%s %q (%s) is not on the server; it has: %s", name, v, where, backends.NameList(options)))
				}
			}
		}
	}
	return nc, nil
}

// comboOptions reads a combo input's options: [["a", "b"], {...}] or, from newer
// servers, ["COMBO", {"options": ["a", "b"]}].
func comboOptions(spec json.RawMessage) ([]string, bool) {
	var parts []json.RawMessage
	if json.Unmarshal(spec, &parts) != nil || len(parts) == 0 {
		return nil, false
	}
	var list []string
	if json.Unmarshal(parts[0], &list) == nil {
		return list, true
	}
	var kind string
	if json.Unmarshal(parts[0], &kind) == nil && kind == "COMBO" && len(parts) > 1 {
		var opts struct {
			Options []string `json:"options"`
		}
		if json.Unmarshal(parts[1], &opts) == nil {
			return opts.Options, true
		}
	}
	return nil, false
}

var _ backends.NameChecker = (*Backend)(nil)
