package comfyui

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Placeholders a workflow template may use, as JSON strings. A string that is only
// the placeholder becomes a value of the placeholder's type (seed and steps are
// integers, denoise and cfg numbers); inside a longer string it is replaced as text.
const (
	PhImage    = "image"    // the uploaded photo's name, for LoadImage
	PhMask     = "mask"     // the uploaded mask's name (gray, white = change), for LoadImageMask
	PhPrompt   = "prompt"   // the recipe's prompt
	PhNegative = "negative" // the recipe's negative prompt
	PhSeed     = "seed"
	PhSteps    = "steps"
	PhDenoise  = "denoise" // denoising strength 0..1
	PhCFG      = "cfg"     // guidance scale
	PhWidth    = "width"   // the photo's size as sent
	PhHeight   = "height"
	PhModel    = "model" // the backend's model key (a checkpoint name)
)

var placeholders = map[string]string{ // name -> kind
	PhImage: "string", PhMask: "string", PhPrompt: "string", PhNegative: "string", PhModel: "string",
	PhSeed: "int", PhSteps: "int", PhWidth: "int", PhHeight: "int",
	PhDenoise: "float", PhCFG: "float",
}

var placeholderRE = regexp.MustCompile(`\{\{\s*([A-Za-z_]+)\s*\}\}`)

// outputClasses are the node types whose images a workflow answers with.
var outputClasses = map[string]bool{"SaveImage": true, "PreviewImage": true}

// workflow is a template in ComfyUI's API format ({node id: {class_type, inputs}}).
type workflow struct {
	path   string
	nodes  map[string]any
	uses   map[string]bool // placeholders present
	output string          // the node whose images are the result
}

// loadWorkflow reads and checks a template: JSON in the API format (File > Export
// (API) in ComfyUI), every placeholder known, {{image}} present, one output node (or
// the one named).
func loadWorkflow(path, outputNode string) (*workflow, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nodes map[string]any
	if err := json.Unmarshal(b, &nodes); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %v", path, err)
	}
	if len(nodes) == 0 {
		return nil, fmt.Errorf("%s has no nodes", path)
	}
	if _, ok := nodes["nodes"]; ok {
		return nil, fmt.Errorf("%s is in ComfyUI's UI format; export it with \"Save (API Format)\"", path)
	}
	wf := &workflow{path: path, nodes: nodes, uses: map[string]bool{}}
	var outputs []string
	for id, n := range nodes {
		node, ok := n.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: node %s is not an object", path, id)
		}
		class, _ := node["class_type"].(string)
		if class == "" {
			return nil, fmt.Errorf("%s: node %s has no class_type", path, id)
		}
		if _, ok := node["inputs"].(map[string]any); !ok {
			return nil, fmt.Errorf("%s: node %s (%s) has no inputs object", path, id, class)
		}
		if outputClasses[class] {
			outputs = append(outputs, id)
		}
	}
	var bad []string
	walkStrings(nodes, func(s string) {
		for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
			name := strings.ToLower(m[1])
			if _, ok := placeholders[name]; ok {
				wf.uses[name] = true
			} else {
				bad = append(bad, m[0])
			}
		}
	})
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("%s: unknown placeholder %s (known: %s)", path, bad[0], knownPlaceholders())
	}
	if !wf.uses[PhImage] {
		return nil, fmt.Errorf("%s: no {{image}} placeholder: the photo has to reach a LoadImage node", path)
	}
	switch {
	case outputNode != "":
		if _, ok := nodes[outputNode].(map[string]any); !ok {
			return nil, fmt.Errorf("%s: output_node %q is not a node of the workflow", path, outputNode)
		}
		wf.output = outputNode
	case len(outputs) == 1:
		wf.output = outputs[0]
	case len(outputs) == 0:
		return nil, fmt.Errorf("%s: no SaveImage or PreviewImage node to take the result from", path)
	default:
		sort.Strings(outputs)
		return nil, fmt.Errorf("%s: several output nodes (%s); name the result's with output_node", path, strings.Join(outputs, ", "))
	}
	return wf, nil
}

func knownPlaceholders() string {
	var k []string
	for n := range placeholders {
		k = append(k, "{{"+n+"}}")
	}
	sort.Strings(k)
	return strings.Join(k, ", ")
}

func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case map[string]any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	case []any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	}
}

// fill returns a copy of the template with the placeholders replaced.
func (wf *workflow) fill(values map[string]any) (map[string]any, error) {
	var err error
	var sub func(v any) any
	sub = func(v any) any {
		switch t := v.(type) {
		case string:
			if m := placeholderRE.FindStringSubmatch(t); m != nil && m[0] == strings.TrimSpace(t) {
				val, ok := values[strings.ToLower(m[1])]
				if !ok {
					err = fmt.Errorf("no value for %s", m[0])
					return t
				}
				return val
			}
			return placeholderRE.ReplaceAllStringFunc(t, func(s string) string {
				m := placeholderRE.FindStringSubmatch(s)
				val, ok := values[strings.ToLower(m[1])]
				if !ok {
					err = fmt.Errorf("no value for %s", s)
					return s
				}
				switch x := val.(type) {
				case string:
					return x
				case float64:
					return strconv.FormatFloat(x, 'f', -1, 64)
				default:
					return fmt.Sprint(x)
				}
			})
		case map[string]any:
			out := make(map[string]any, len(t))
			for k, x := range t {
				out[k] = sub(x)
			}
			return out
		case []any:
			out := make([]any, len(t))
			for i, x := range t {
				out[i] = sub(x)
			}
			return out
		}
		return v
	}
	out := sub(wf.nodes).(map[string]any)
	return out, err
}
