package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/porchlight/porchlight/core"
)

// DecodeOptions reads order options from the fields of a request body. Every key must
// be an option of the table (callers remove `inputs`, `name`, `scenes` first); null
// counts as omitted. Values are type-checked and validated against the table (enum,
// bounds, length, UUID syntax, privacy concepts) and normalised (concepts to their
// canonical names, UUIDs to lower case). Cross-field rules and preset lookups belong
// to Resolve. Errors are core.Invalid naming the field. Keys are checked in sorted
// order so the same body always reports the same error.
func DecodeOptions(fields map[string]json.RawMessage) (core.Options, error) {
	var o core.Options
	for _, name := range sortedKeys(fields) {
		opt, ok := byName[name]
		if !ok {
			return core.Options{}, core.Invalid(fieldName(name), "unknown field")
		}
		v, err := opt.fromJSON(fields[name])
		if err != nil {
			return core.Options{}, err
		}
		if v == nil {
			continue
		}
		if v, err = opt.check(v); err != nil {
			return core.Options{}, err
		}
		opt.set(&o, v)
	}
	return o, nil
}

// DecodeStrings reads order options from text values, as command-line flags and
// config files give them: booleans as strconv.ParseBool reads them, numbers in Go
// syntax, arrays as comma-separated lists ("" is an empty list, which means the
// defaults). Names use the API spelling; "-" is accepted for "_" so flag names work
// as they are. Validation is the same as DecodeOptions'.
func DecodeStrings(values map[string]string) (core.Options, error) {
	var o core.Options
	for _, key := range sortedKeys(values) {
		name := strings.ReplaceAll(key, "-", "_")
		opt, ok := byName[name]
		if !ok {
			return core.Options{}, core.Invalid(fieldName(key), "unknown option")
		}
		v, err := opt.fromString(values[key])
		if err != nil {
			return core.Options{}, err
		}
		if v, err = opt.check(v); err != nil {
			return core.Options{}, err
		}
		opt.set(&o, v)
	}
	return o, nil
}

// Validate checks every value set in o as DecodeOptions would, for options that were
// built in Go rather than decoded (hot-folder entries, the window).
func Validate(o core.Options) error {
	_, err := normalized(o)
	return err
}

// normalized validates every value set in o and returns o with normalised values.
func normalized(o core.Options) (core.Options, error) {
	for i := range options {
		opt := &options[i]
		v, ok := opt.get(o)
		if !ok {
			continue
		}
		v, err := opt.check(v)
		if err != nil {
			return core.Options{}, err
		}
		opt.set(&o, v)
	}
	return o, nil
}

// fromJSON converts a JSON value to the Go value of the option's type, nil for null.
func (opt *option) fromJSON(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	switch opt.Type {
	case TypeBoolean:
		switch string(raw) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return nil, core.Invalid(opt.Name, "must be a boolean (true or false)")
	case TypeNumber, TypeInteger:
		var n json.Number
		if raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
			return nil, core.Invalid(opt.Name, "must be %s", kindWord(opt.Type))
		}
		return opt.number(n.String())
	case TypeString, TypeEnum, TypeUUID:
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil, core.Invalid(opt.Name, "must be a string")
		}
		return s, nil
	case TypeArray:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil, core.Invalid(opt.Name, "must be an array of strings")
		}
		out := make([]string, len(items))
		for i, it := range items {
			if json.Unmarshal(it, &out[i]) != nil {
				return nil, core.Invalid(fmt.Sprintf("%s[%d]", opt.Name, i), "must be a string")
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("catalog: option %s has unknown type %s", opt.Name, opt.Type)
}

// fromString converts a text value to the Go value of the option's type.
func (opt *option) fromString(s string) (any, error) {
	switch opt.Type {
	case TypeBoolean:
		b, err := strconv.ParseBool(strings.TrimSpace(s))
		if err != nil {
			return nil, core.Invalid(opt.Name, "must be a boolean (true or false), got %q", s)
		}
		return b, nil
	case TypeNumber, TypeInteger:
		return opt.number(strings.TrimSpace(s))
	case TypeArray:
		out := []string{}
		if strings.TrimSpace(s) == "" {
			return out, nil
		}
		for _, part := range strings.Split(s, ",") {
			out = append(out, strings.TrimSpace(part))
		}
		return out, nil
	}
	return s, nil
}

// number parses a numeric literal as a float64 or, for integer options, an int.
// Integer options accept whole values written with a fraction or exponent (92.0,
// 1e2); they refuse fractions and values beyond their bounds before converting, so
// nothing overflows.
func (opt *option) number(lit string) (any, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, core.Invalid(opt.Name, "must be %s", kindWord(opt.Type))
	}
	if opt.Type == TypeNumber {
		return f, nil
	}
	if f != math.Trunc(f) {
		return nil, core.Invalid(opt.Name, "must be an integer")
	}
	if err := opt.inBounds(f); err != nil {
		return nil, err
	}
	if math.Abs(f) > 1<<53 {
		return nil, core.Invalid(opt.Name, "is out of range")
	}
	return int(f), nil
}

// kindWord names a numeric type with its article, for "must be ..." reasons.
func kindWord(t string) string {
	if t == TypeInteger {
		return "an integer"
	}
	return "a number"
}

// check validates a Go value of the option's type and returns it normalised.
func (opt *option) check(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, core.Invalid(opt.Name, "must be a finite number")
		}
		return x, opt.inBounds(x)
	case int:
		return x, opt.inBounds(float64(x))
	case string:
		return opt.checkString(x)
	case []string:
		return opt.checkArray(x)
	}
	return nil, fmt.Errorf("catalog: option %s: unexpected value type %T", opt.Name, v)
}

func (opt *option) inBounds(f float64) error {
	lo, hi := opt.Min, opt.Max
	switch {
	case lo != nil && hi != nil && (f < *lo || f > *hi):
		return core.Invalid(opt.Name, "must be between %g and %g, got %g", *lo, *hi, f)
	case lo != nil && f < *lo:
		return core.Invalid(opt.Name, "must be at least %g, got %g", *lo, f)
	case hi != nil && f > *hi:
		return core.Invalid(opt.Name, "must be at most %g, got %g", *hi, f)
	}
	return nil
}

func (opt *option) checkString(s string) (any, error) {
	if !utf8.ValidString(s) {
		return nil, core.Invalid(opt.Name, "must be valid UTF-8 text")
	}
	switch opt.Type {
	case TypeEnum:
		if !opt.hasEnum(s) {
			return nil, core.Invalid(opt.Name, "unknown value %q; one of %s", clip(s), strings.Join(opt.Enum, ", "))
		}
	case TypeUUID:
		if !isUUID(s) {
			return nil, core.Invalid(opt.Name, "must be an asset id (a UUID), got %q", clip(s))
		}
		return strings.ToLower(s), nil
	case TypeString:
		if opt.MaxLength > 0 {
			if n := utf8.RuneCountInString(s); n > opt.MaxLength {
				return nil, core.Invalid(opt.Name, "is %d characters long; at most %d are accepted", n, opt.MaxLength)
			}
		}
		if opt.presetFeature != "" {
			if _, ok := LookupPreset(opt.presetFeature, s); !ok {
				return nil, core.Invalid(opt.Name, "unknown preset %q; see GET /v1/presets?feature=%s (one of %s)",
					clip(s), opt.presetFeature, strings.Join(PresetKeys(opt.presetFeature), ", "))
			}
		}
	}
	return s, nil
}

func (opt *option) checkArray(items []string) (any, error) {
	out := make([]string, 0, len(items))
	seen := map[string]bool{}
	for i, it := range items {
		field := fmt.Sprintf("%s[%d]", opt.Name, i)
		if strings.TrimSpace(it) == "" {
			return nil, core.Invalid(field, "must be a non-empty string")
		}
		c, ok := Concept(it)
		if !ok {
			return nil, core.Invalid(field, "unknown concept %q; accepted: %s", clip(it), strings.Join(DefaultCategories, ", "))
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// fieldName is how an error names a request key: as it is, or `""` for the empty
// key, so the error still points somewhere.
func fieldName(key string) string {
	if key == "" {
		return `""`
	}
	return clip(key)
}

// clip shortens a value quoted in an error so a long body does not echo back whole.
func clip(s string) string {
	const max = 64
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max]) + "..."
}

// isUUID reports whether s is a UUID in the canonical 8-4-4-4-12 hex form.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// get returns the option's value in o, false when it is not given.
func (opt *option) get(o core.Options) (any, bool) {
	f := reflect.ValueOf(o).Field(opt.in)
	if f.IsNil() {
		return nil, false
	}
	if f.Kind() == reflect.Slice {
		src := f.Interface().([]string)
		return append(make([]string, 0, len(src)), src...), true
	}
	return f.Elem().Interface(), true
}

// set stores v, a value of the option's Go type, in o.
func (opt *option) set(o *core.Options, v any) {
	f := reflect.ValueOf(o).Elem().Field(opt.in)
	if f.Kind() == reflect.Slice {
		f.Set(reflect.ValueOf(v))
		return
	}
	p := reflect.New(f.Type().Elem())
	p.Elem().Set(reflect.ValueOf(v))
	f.Set(p)
}
