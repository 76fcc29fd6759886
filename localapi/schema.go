package localapi

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
)

// Schema is a JSON Schema (2020-12, as OpenAPI 3.1 uses it). A route may give
// one directly where its body is not a plain Go type; otherwise the schema is
// derived from the Go value it names.
type Schema map[string]any

// knownSchemas are types whose JSON form reflection cannot see.
var knownSchemas = map[reflect.Type]Schema{
	reflect.TypeFor[time.Time]():       {"type": "string", "format": "date-time"},
	reflect.TypeFor[time.Duration]():   {"type": "integer", "description": "nanoseconds"},
	reflect.TypeFor[json.RawMessage](): {},
	reflect.TypeFor[core.Scope]():      {"type": "string", "enum": []any{string(core.ScopeStandard), string(core.ScopeAdmin)}},
	reflect.TypeFor[core.OrderStatus](): {"type": "string", "enum": []any{
		string(core.OrderPending), string(core.OrderRunning), string(core.OrderCompleted),
		string(core.OrderFailed), string(core.OrderCancelled), string(core.OrderExpired)}},
}

// schemaBuilder derives schemas from Go types; named structs become components
// referenced with $ref, so each type is described once.
type schemaBuilder struct {
	components map[string]Schema
	names      map[reflect.Type]string
}

func newSchemaBuilder() *schemaBuilder {
	return &schemaBuilder{components: map[string]Schema{}, names: map[reflect.Type]string{}}
}

// of returns the schema of v: v itself when it is a Schema, else its type's.
func (b *schemaBuilder) of(v any) (Schema, error) {
	if s, ok := v.(Schema); ok {
		return s, nil
	}
	if v == nil {
		return Schema{}, nil
	}
	return b.typ(reflect.TypeOf(v))
}

func (b *schemaBuilder) typ(t reflect.Type) (Schema, error) {
	if s, ok := knownSchemas[t]; ok {
		return clone(s), nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return b.typ(t.Elem())
	case reflect.Interface:
		return Schema{}, nil
	case reflect.Struct:
		if t.Name() == "" {
			return b.object(t)
		}
		name, ok := b.names[t]
		if !ok {
			name = b.componentName(t)
			b.names[t] = name
			b.components[name] = Schema{} // placeholder: recursive types refer to it
			s, err := b.object(t)
			if err != nil {
				return nil, err
			}
			b.components[name] = s
		}
		return Schema{"$ref": "#/components/schemas/" + name}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key type %s is not a string", t.Key())
		}
		elem, err := b.typ(t.Elem())
		if err != nil {
			return nil, err
		}
		return Schema{"type": "object", "additionalProperties": elem}, nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return Schema{"type": "string", "contentEncoding": "base64"}, nil
		}
		elem, err := b.typ(t.Elem())
		if err != nil {
			return nil, err
		}
		return Schema{"type": "array", "items": elem}, nil
	case reflect.String:
		return Schema{"type": "string"}, nil
	case reflect.Bool:
		return Schema{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return Schema{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return Schema{"type": "number"}, nil
	}
	return nil, fmt.Errorf("no JSON schema for Go type %s", t)
}

// object describes a struct: its JSON fields (embedded structs inlined), required
// where encoding/json always writes them. Field tags add detail: `doc:"..."` a
// description, `enum:"a,b"` the allowed values.
func (b *schemaBuilder) object(t reflect.Type) (Schema, error) {
	props := Schema{}
	var required []any
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					if err := walk(et); err != nil {
						return err
					}
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			s, err := b.typ(ft)
			if err != nil {
				return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
			}
			if d := f.Tag.Get("doc"); d != "" {
				s["description"] = d
			}
			if e := f.Tag.Get("enum"); e != "" {
				var vals []any
				for _, v := range strings.Split(e, ",") {
					vals = append(vals, v)
				}
				s["enum"] = vals
			}
			omitted := strings.Contains(opts, "omitempty") || strings.Contains(opts, "omitzero")
			switch ft.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
				if !omitted { // encoding/json writes a nil one as null
					s = nullable(s)
				}
			}
			props[name] = s
			if !omitted && ft.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
		return nil
	}
	if err := walk(t); err != nil {
		return nil, err
	}
	s := Schema{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s, nil
}

var nonIdent = regexp.MustCompile(`[^A-Za-z0-9_]+`)

func (b *schemaBuilder) componentName(t reflect.Type) string {
	name := nonIdent.ReplaceAllString(t.Name(), "_")
	if _, taken := b.components[name]; !taken {
		return name
	}
	pkg := t.PkgPath()
	pkg = pkg[strings.LastIndex(pkg, "/")+1:]
	base := nonIdent.ReplaceAllString(strings.ToUpper(pkg[:1])+pkg[1:]+t.Name(), "_")
	name = base
	for i := 2; ; i++ {
		if _, taken := b.components[name]; !taken {
			return name
		}
		name = fmt.Sprintf("%s%d", base, i)
	}
}

// nullable lets s also be null.
func nullable(s Schema) Schema {
	switch t := s["type"].(type) {
	case string:
		s["type"] = []any{t, "null"}
		return s
	case nil:
		if _, ref := s["$ref"]; ref {
			return Schema{"anyOf": []any{s, Schema{"type": "null"}}}
		}
		if len(s) == 0 {
			// Any JSON value. Spelled out rather than {} so validators that read
			// {} as "not null" (kin-openapi's legacy visitor) agree with the schema.
			return Schema{"type": []any{"string", "number", "boolean", "array", "object", "null"}}
		}
	}
	return s
}

func clone(s Schema) Schema {
	out := make(Schema, len(s))
	for k, v := range s {
		out[k] = v
	}
	return out
}
