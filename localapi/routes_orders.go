package localapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// Handlers of the order routes: submission (with an optional Idempotency-Key),
// the summary and cancellation (their rows are in routes.go).

// HeaderIdempotencyKey makes a submission safe to repeat: the same key and body
// within a day answer the first order (or batch) again.
const HeaderIdempotencyKey = "Idempotency-Key"

// orderCreated is the answer of POST /v1/orders: the spec's orderId and
// inputCount, then the summary.
type orderCreated struct {
	OrderID    string `json:"orderId"`
	InputCount int    `json:"inputCount"`
	core.OrderSummary
}

var idempotencyHeader = Param{
	Name: HeaderIdempotencyKey,
	Description: "up to 255 printable ASCII characters; repeating the same request with the same key within " +
		"24 hours answers the first result again, a different request under a used key answers 409",
}

func (s *Server) submitOrder(r *http.Request) (int, any, error) {
	fields, err := decodeFields(r)
	if err != nil {
		return 0, nil, err
	}
	inputs, opts, err := s.sceneOf(fields)
	if err != nil {
		return 0, nil, err
	}
	sum, err := s.deps.Engine.Submit(r.Context(), Owner(r), inputs, opts, r.Header.Get(HeaderIdempotencyKey))
	if err != nil {
		return 0, nil, err
	}
	return 0, orderCreated{OrderID: sum.OrderUUID, InputCount: len(sum.Inputs), OrderSummary: sum}, nil
}

func (s *Server) order(r *http.Request) (int, any, error) {
	sum, err := s.deps.Engine.Order(r.Context(), Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, sum, nil
}

func (s *Server) cancelOrder(r *http.Request) (int, any, error) {
	sum, err := s.deps.Engine.Cancel(r.Context(), Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, sum, nil
}

// decodeFields reads a JSON object body member by member, so the option fields
// can go to the catalog's decoder, which names unknown fields and bad values.
func decodeFields(r *http.Request) (map[string]json.RawMessage, error) {
	var fields map[string]json.RawMessage
	if err := DecodeJSON(r, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}

// sceneOf splits an order's (or a batch scene's) members into its inputs and its
// options. Errors name the field relative to the object.
func (s *Server) sceneOf(fields map[string]json.RawMessage) ([]string, core.Options, error) {
	raw, ok := fields["inputs"]
	if !ok || isNull(raw) {
		return nil, core.Options{}, core.Invalid("inputs", "required: 1 to %d asset ids (the brackets of one scene)", s.cfg.MaxInputs)
	}
	inputs, err := stringList("inputs", raw)
	if err != nil {
		return nil, core.Options{}, err
	}
	// The engine takes up to engine.MaxBrackets for the window and hot folders;
	// the API keeps its own, configurable, limit.
	if n := len(inputs); n < 1 || n > s.cfg.MaxInputs {
		return nil, core.Options{}, core.Invalid("inputs", "needs 1 to %d asset ids (the brackets of one scene), got %d", s.cfg.MaxInputs, n)
	}
	rest := make(map[string]json.RawMessage, len(fields))
	for k, v := range fields {
		if k != "inputs" {
			rest[k] = v
		}
	}
	opts, err := catalog.DecodeOptions(rest)
	if err != nil {
		return nil, core.Options{}, err
	}
	return inputs, opts, nil
}

// stringList decodes a JSON array of strings, naming the item that is not one.
func stringList(field string, raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, core.Invalid(field, "must be an array of asset ids")
	}
	out := make([]string, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it, &out[i]); err != nil || isNull(it) {
			return nil, core.Invalid(fmt.Sprintf("%s[%d]", field, i), "must be an asset id (a UUID string)")
		}
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// optionSchemas describes every order option of the catalog's table, each with the
// table's sentence on what it does.
func optionSchemas() Schema {
	props := Schema{}
	for _, p := range catalog.Params() {
		var s Schema
		switch p.Type {
		case catalog.TypeBoolean:
			s = Schema{"type": "boolean"}
		case catalog.TypeNumber:
			s = Schema{"type": "number"}
		case catalog.TypeInteger:
			s = Schema{"type": "integer"}
		case catalog.TypeEnum:
			enum := make([]any, len(p.Enum))
			for i, e := range p.Enum {
				enum[i] = e
			}
			s = Schema{"type": "string", "enum": enum}
		case catalog.TypeUUID:
			s = Schema{"type": "string", "format": "uuid"}
		case catalog.TypeArray:
			s = Schema{"type": "array", "items": Schema{"type": "string"}}
		default:
			s = Schema{"type": "string"}
		}
		if p.Min != nil {
			s["minimum"] = *p.Min
		}
		if p.Max != nil {
			s["maximum"] = *p.Max
		}
		if p.MaxLength > 0 {
			s["maxLength"] = p.MaxLength
		}
		if p.Default != nil {
			s["default"] = p.Default
		}
		s["description"] = p.Description
		props[p.Name] = s
	}
	return props
}

func inputsSchema(maxInputs int) Schema {
	return Schema{"type": "array", "minItems": 1, "maxItems": maxInputs,
		"items":       Schema{"type": "string", "format": "uuid"},
		"description": "ready uploads owned by the key: the exposure brackets of one scene"}
}

func orderRequestSchema(maxInputs int) Schema {
	props := optionSchemas()
	props["inputs"] = inputsSchema(maxInputs)
	return Schema{"type": "object", "required": []any{"inputs"}, "properties": props, "additionalProperties": false}
}
