package ui

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// cloneOptions copies o deeply, so a form can change its copy freely.
func cloneOptions(o core.Options) core.Options {
	var out core.Options
	src := reflect.ValueOf(o)
	dst := reflect.ValueOf(&out).Elem()
	for i := range src.NumField() {
		f := src.Field(i)
		switch {
		case f.Kind() == reflect.Pointer && !f.IsNil():
			p := reflect.New(f.Type().Elem())
			p.Elem().Set(f.Elem())
			dst.Field(i).Set(p)
		case f.Kind() == reflect.Slice && !f.IsNil():
			dst.Field(i).Set(reflect.ValueOf(slices.Clone(f.Interface().([]string))))
		}
	}
	return out
}

// optionsToMap turns options into the map the config file keeps (API names, only
// the options that were set).
func optionsToMap(o core.Options) map[string]any {
	b, err := json.Marshal(o)
	if err != nil {
		return map[string]any{}
	}
	m := map[string]any{}
	if err := json.Unmarshal(b, &m); err != nil {
		return map[string]any{}
	}
	return m
}

// optionsFromConfig reads options saved by optionsToMap (or written by hand in the
// config file) through the catalog's decoder; values that no longer validate are
// dropped one by one rather than losing everything.
func optionsFromConfig(v any) core.Options {
	m, ok := v.(map[string]any)
	if !ok {
		return core.Options{}
	}
	fields := map[string]json.RawMessage{}
	for k, val := range m {
		if _, known := catalog.LookupParam(k); !known {
			continue
		}
		b, err := json.Marshal(val)
		if err != nil {
			continue
		}
		if _, err := catalog.DecodeOptions(map[string]json.RawMessage{k: b}); err != nil {
			continue
		}
		fields[k] = b
	}
	o, err := catalog.DecodeOptions(fields)
	if err != nil {
		return core.Options{}
	}
	return o
}
