package localapi

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/porchlight/porchlight/core"
)

// DecodeJSON reads a JSON request body into dst (a pointer). It answers with
// typed errors the envelope maps: 415 when Content-Type is not application/json,
// 413 over the body limit, 400 for an empty or malformed body, a value of the
// wrong type or an unknown field, each naming the offending field by its JSON
// path ("scenes[2].quality: want an integer, got a string").
func DecodeJSON(r *http.Request, dst any) error {
	if err := requireJSON(r); err != nil {
		return err
	}
	if r.Body == nil {
		return core.Invalid("body", "required: a JSON object")
	}
	// The route wrapper caps the body (Config.MaxBodyBytes), so ReadAll is bounded.
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return tooLarge(mbe.Limit)
		}
		return core.Invalid("body", "could not be read: %v", err)
	}
	return DecodeJSONBytes(data, dst)
}

func tooLarge(limit int64) error {
	return &core.Error{Kind: core.KindTooLarge, Field: "body", Reason: fmt.Sprintf("larger than the limit of %d bytes", limit)}
}

// requireJSON checks the Content-Type of a request with a body.
func requireJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return &core.Error{Kind: core.KindUnsupported, Field: "Content-Type", Reason: "missing; want application/json"}
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" {
		return &core.Error{Kind: core.KindUnsupported, Field: "Content-Type", Reason: fmt.Sprintf("%q is not supported; want application/json", ct)}
	}
	return nil
}

// DecodeJSONBytes decodes one JSON value into dst after checking it against
// dst's type, so that unknown fields and wrong types are reported with their
// full path. Fields match their JSON names exactly (encoding/json alone would
// also accept "Inputs" for "inputs").
func DecodeJSONBytes(data []byte, dst any) error {
	rv := reflect.ValueOf(dst)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("localapi: DecodeJSONBytes needs a non-nil pointer, got %T", dst)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return core.Invalid("body", "required: a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return syntaxError(data, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return core.Invalid("body", "unexpected data after the JSON value")
	}
	t := rv.Type().Elem()
	if v == nil && wantsObject(t) {
		return core.Invalid("body", "want a JSON object, got null")
	}
	if err := check(v, t, ""); err != nil {
		return err
	}
	if err := json.Unmarshal(data, dst); err != nil {
		// check accepted it, so what is left are values a type's own decoder
		// refuses (a malformed time, for example).
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return core.Invalid(ute.Field, "want %s", ute.Type)
		}
		return core.Invalid("body", "%v", strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

func wantsObject(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return core.Invalid("body", "malformed JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return core.Invalid("body", "malformed JSON: unexpected end after %d bytes", len(data))
	}
	return core.Invalid("body", "malformed JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// check walks a decoded value alongside the Go type it will be decoded into.
func check(v any, t reflect.Type, path string) error {
	if v == nil {
		return nil // null leaves the field as it is, as encoding/json does
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return nil // the type decodes itself (json.RawMessage, time.Time)
	}
	switch t.Kind() {
	case reflect.Interface:
		return nil
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(path, "an object", v)
		}
		fields := structFields(t)
		for _, name := range sortedNames(obj) {
			f, ok := fields[name]
			if !ok {
				return core.Invalid(join(path, name), "unknown field")
			}
			if err := check(obj[name], f.typ, join(path, name)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return mismatch(path, "an object", v)
		}
		kt := t.Key()
		if kt.Kind() != reflect.String && !reflect.PointerTo(kt).Implements(textUnmarshaler) {
			for _, name := range sortedNames(obj) {
				if _, err := strconv.ParseInt(name, 10, 64); err != nil {
					return core.Invalid(join(path, name), "want an integer key")
				}
			}
		}
		for _, name := range sortedNames(obj) {
			if err := check(obj[name], t.Elem(), join(path, name)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			if _, ok := v.(string); !ok {
				return mismatch(path, "a base64 string", v)
			}
			return nil
		}
		arr, ok := v.([]any)
		if !ok {
			return mismatch(path, "an array", v)
		}
		if t.Kind() == reflect.Array && len(arr) > t.Len() {
			return core.Invalid(path, "want at most %d items, got %d", t.Len(), len(arr))
		}
		for i, e := range arr {
			if err := check(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if _, ok := v.(string); !ok {
			return mismatch(path, "a string", v)
		}
		return nil
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return mismatch(path, "a boolean", v)
		}
		return nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(path, "an integer", v)
		}
		i, err := strconv.ParseInt(n.String(), 10, 64)
		switch {
		case err != nil && !isIntRange(err):
			return core.Invalid(path, "want an integer, got %s", n)
		case err != nil || reflect.Zero(t).OverflowInt(i):
			return core.Invalid(path, "integer %s out of range", n)
		}
		return nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(path, "a non-negative integer", v)
		}
		u, err := strconv.ParseUint(n.String(), 10, 64)
		if err != nil || reflect.Zero(t).OverflowUint(u) {
			return core.Invalid(path, "want a non-negative integer in range, got %s", n)
		}
		return nil
	case reflect.Float32, reflect.Float64:
		n, ok := v.(json.Number)
		if !ok {
			return mismatch(path, "a number", v)
		}
		f, err := strconv.ParseFloat(n.String(), 64)
		if err != nil || math.IsInf(f, 0) || reflect.Zero(t).OverflowFloat(f) {
			return core.Invalid(path, "number %s out of range", n)
		}
		return nil
	}
	return fmt.Errorf("localapi: cannot decode into %s", t)
}

func isIntRange(err error) bool {
	var ne *strconv.NumError
	return errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange)
}

func mismatch(path, want string, v any) error {
	if path == "" {
		path = "body"
	}
	return core.Invalid(path, "want %s, got %s", want, jsonKind(v))
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// join appends a member name to a JSON path; names that are not plain words are
// quoted so an empty or odd key still reads as a field.
func join(path, name string) string {
	if name == "" || strings.IndexFunc(name, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		name = strconv.Quote(name)
	}
	if path == "" {
		return name
	}
	return path + "." + name
}

func sortedNames(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

type fieldInfo struct{ typ reflect.Type }

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

// structFields lists the JSON names of t's fields, embedded structs inlined, as
// encoding/json sees them (the shallower field wins a name clash).
func structFields(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	out := map[string]fieldInfo{}
	depth := map[string]int{}
	var walk func(t reflect.Type, d int, seen map[reflect.Type]bool)
	walk = func(t reflect.Type, d int, seen map[reflect.Type]bool) {
		if seen[t] {
			return
		}
		seen[t] = true
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			ft := f.Type
			if f.Anonymous && name == "" {
				et := ft
				if et.Kind() == reflect.Pointer {
					et = et.Elem()
				}
				if et.Kind() == reflect.Struct {
					walk(et, d+1, seen)
					continue
				}
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if old, ok := depth[name]; ok && old <= d {
				continue
			}
			depth[name] = d
			out[name] = fieldInfo{typ: ft}
		}
	}
	walk(t, 0, map[reflect.Type]bool{})
	fieldCache.Store(t, out)
	return out
}

// onlyQuery refuses query parameters other than allowed, as unknown body fields
// are refused.
func onlyQuery(q url.Values, allowed ...string) error {
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if !slices.Contains(allowed, k) {
			return core.Invalid(k, "unknown query parameter")
		}
	}
	return nil
}
