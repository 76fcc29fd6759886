package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Handlers of the batch routes: atomic submission of up to 100 scenes, the
// aggregate and batch cancellation (their rows are in routes.go).

func (s *Server) submitBatch(r *http.Request) (int, any, error) {
	fields, err := decodeFields(r)
	if err != nil {
		return 0, nil, err
	}
	req, err := s.batchOf(fields)
	if err != nil {
		return 0, nil, err
	}
	agg, err := s.deps.Engine.SubmitBatch(r.Context(), Owner(r), req, r.Header.Get(HeaderIdempotencyKey))
	if err != nil {
		return 0, nil, err
	}
	return 0, agg, nil
}

func (s *Server) batch(r *http.Request) (int, any, error) {
	agg, err := s.deps.Engine.Batch(r.Context(), Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, agg, nil
}

func (s *Server) cancelBatch(r *http.Request) (int, any, error) {
	agg, err := s.deps.Engine.CancelBatch(r.Context(), Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, agg, nil
}

// batchOf splits a batch body into its name, shared options and scenes. Scene
// errors are prefixed with their position ("scenes[3].quality").
func (s *Server) batchOf(fields map[string]json.RawMessage) (engine.BatchRequest, error) {
	var req engine.BatchRequest
	shared := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		switch k {
		case "name", "scenes":
		default:
			shared[k] = v
		}
	}
	if raw, ok := fields["name"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &req.Name); err != nil {
			return req, core.Invalid("name", "must be a string")
		}
	}
	raw, ok := fields["scenes"]
	if !ok || isNull(raw) {
		return req, core.Invalid("scenes", "required: 1 to %d scenes, each with its inputs", engine.MaxScenes)
	}
	var scenes []json.RawMessage
	if err := json.Unmarshal(raw, &scenes); err != nil {
		return req, core.Invalid("scenes", "must be an array of scene objects")
	}
	if len(scenes) == 0 || len(scenes) > engine.MaxScenes {
		return req, core.Invalid("scenes", "a batch has 1 to %d scenes, got %d", engine.MaxScenes, len(scenes))
	}
	if _, ok := shared["inputs"]; ok {
		return req, core.Invalid("inputs", "belongs in each scene (scenes[i].inputs), not at the top level of a batch")
	}
	defaults, err := catalog.DecodeOptions(shared)
	if err != nil {
		return req, err
	}
	req.Defaults = defaults
	req.Scenes = make([]engine.Scene, len(scenes))
	for i, sr := range scenes {
		prefix := fmt.Sprintf("scenes[%d]", i)
		var sf map[string]json.RawMessage
		if err := json.Unmarshal(sr, &sf); err != nil || sf == nil {
			return req, core.Invalid(prefix, "must be an object with inputs and any option it overrides")
		}
		inputs, opts, err := s.sceneOf(sf)
		if err != nil {
			return req, core.WithPrefix(prefix, err)
		}
		req.Scenes[i] = engine.Scene{Inputs: inputs, Options: opts}
	}
	return req, nil
}

func batchRequestSchema(maxInputs int) Schema {
	scene := optionSchemas()
	scene["inputs"] = inputsSchema(maxInputs)
	delete(scene, "style_clause")
	shared := optionSchemas()
	delete(shared, "style_clause")
	shared["name"] = Schema{"type": "string", "maxLength": engine.MaxBatchNameLen}
	shared["scenes"] = Schema{"type": "array", "minItems": 1, "maxItems": engine.MaxScenes,
		"items": Schema{"type": "object", "required": []any{"inputs"}, "properties": scene, "additionalProperties": false}}
	return Schema{"type": "object", "required": []any{"scenes"}, "properties": shared, "additionalProperties": false}
}
