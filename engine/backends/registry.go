package backends

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Type is one protocol: how to build a backend of it from its Spec.
type Type struct {
	Name string
	// Keys are the config keys of this type besides the common ones (type, url,
	// api_key, api_key_env, timeout, retries, backoff).
	Keys []string
	New  func(Spec) (Backend, error)
}

// Registry maps each feature to the backend the config chose for it.
type Registry struct {
	byName    map[string]Backend
	byFeature map[string]Backend
	rooms     RoomClassifier // nil when no room classifier is configured
	roomsName string
}

// featureAliases accepts the gen_edit spelling where it differs from the catalog key.
var featureAliases = map[string]string{"declutter_local": FeatureDeclutter}

// NewRegistry builds the backends of the config section `backends` (name -> keys)
// and maps the features of `features` (feature -> backend name) to them. Every
// mistake is reported with the config key it is in. Backends no feature names are
// still built (and checked) so the config fails early.
func NewRegistry(specs map[string]map[string]any, features map[string]string, types []Type) (*Registry, error) {
	r := &Registry{byName: map[string]Backend{}, byFeature: map[string]Backend{}}
	byType := map[string]Type{}
	var typeNames []string
	for _, t := range types {
		byType[t.Name] = t
		typeNames = append(typeNames, t.Name)
	}
	sort.Strings(typeNames)

	names := make([]string, 0, len(specs))
	for n := range specs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		name := strings.ToLower(n)
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("backends.%s: defined twice (names are not case-sensitive)", name)
		}
		spec, err := ParseSpec(name, specs[n])
		if err != nil {
			return nil, err
		}
		t, ok := byType[spec.Type]
		if !ok {
			return nil, fmt.Errorf("backends.%s.type: unknown type %q (one of %s)", name, spec.Type, strings.Join(typeNames, ", "))
		}
		if err := spec.checkExtra(t.Keys); err != nil {
			return nil, err
		}
		b, err := t.New(spec)
		if err != nil {
			return nil, fmt.Errorf("backends.%s: %w", name, err)
		}
		r.byName[name] = b
	}

	keys := make([]string, 0, len(features))
	for k := range features {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		feature := strings.ToLower(strings.TrimSpace(k))
		if a, ok := featureAliases[feature]; ok {
			feature = a
		}
		if !KnownFeature(feature) && feature != FeatureRoomClassifier {
			return nil, fmt.Errorf("features.%s: not a feature that runs on a model backend (one of %s, or %s)",
				k, strings.Join(Features, ", "), FeatureRoomClassifier)
		}
		if _, dup := r.byFeature[feature]; dup {
			return nil, fmt.Errorf("features.%s: %s is configured twice", k, feature)
		}
		name := strings.ToLower(strings.TrimSpace(features[k]))
		b, ok := r.byName[name]
		if !ok {
			known := make([]string, 0, len(r.byName))
			for n := range r.byName {
				known = append(known, n)
			}
			sort.Strings(known)
			if len(known) == 0 {
				return nil, fmt.Errorf("features.%s: names backend %q but no backend is defined under backends", k, features[k])
			}
			return nil, fmt.Errorf("features.%s: names backend %q, which is not defined under backends (defined: %s)",
				k, features[k], strings.Join(known, ", "))
		}
		if feature == FeatureRoomClassifier {
			rc, ok := b.(RoomClassifier)
			if !ok {
				return nil, fmt.Errorf("features.%s: backend %s (type %s) cannot classify rooms (a1111 can, through its interrogate endpoint)",
					k, name, b.Type())
			}
			r.rooms, r.roomsName = rc, name
			continue
		}
		if fc, ok := b.(FeatureChecker); ok {
			if err := fc.CheckFeature(feature); err != nil {
				return nil, fmt.Errorf("features.%s: backend %s cannot serve it: %w", k, name, err)
			}
		}
		r.byFeature[feature] = b
	}
	return r, nil
}

// RoomClassifier returns the configured room classifier, nil when none is.
func (r *Registry) RoomClassifier() RoomClassifier {
	if r == nil {
		return nil
	}
	return r.rooms
}

// SetRoomClassifier makes rc the registry's room classifier (for code that wires
// backends itself).
func (r *Registry) SetRoomClassifier(rc RoomClassifier) { r.rooms = rc }

// Static returns a registry of ready backends (feature -> backend), for code that
// wires backends itself.
func Static(features map[string]Backend) (*Registry, error) {
	r := &Registry{byName: map[string]Backend{}, byFeature: map[string]Backend{}}
	for f, b := range features {
		if a, ok := featureAliases[f]; ok {
			f = a
		}
		if !KnownFeature(f) {
			return nil, fmt.Errorf("backends: %q is not a feature that runs on a model backend", f)
		}
		if b == nil {
			return nil, fmt.Errorf("backends: no backend given for %s", f)
		}
		if fc, ok := b.(FeatureChecker); ok {
			if err := fc.CheckFeature(f); err != nil {
				return nil, fmt.Errorf("backends: %s cannot serve %s: %w", Label(b), f, err)
			}
		}
		r.byFeature[f] = b
		r.byName[b.Name()] = b
	}
	return r, nil
}

// Available reports whether a backend is configured for feature (a catalog key).
// A nil registry has none.
func (r *Registry) Available(feature string) bool {
	if r == nil {
		return false
	}
	_, ok := r.byFeature[feature]
	return ok
}

// For returns the backend of feature, or a *NotConfiguredError that says how to
// configure one.
func (r *Registry) For(feature string) (Backend, error) {
	if r != nil {
		if b, ok := r.byFeature[feature]; ok {
			return b, nil
		}
	}
	return nil, &NotConfiguredError{Feature: feature}
}

// Features returns the features that have a backend, sorted.
func (r *Registry) Features() []string {
	if r == nil {
		return nil
	}
	out := make([]string, 0, len(r.byFeature))
	for f := range r.byFeature {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

// Backends returns every configured backend, sorted by name.
func (r *Registry) Backends() []Backend {
	if r == nil {
		return nil
	}
	out := make([]Backend, 0, len(r.byName))
	for _, b := range r.byName {
		out = append(out, b)
	}
	slices.SortFunc(out, func(a, b Backend) int { return strings.Compare(a.Name(), b.Name()) })
	return out
}

// NotConfiguredError reports a feature that has no backend.
type NotConfiguredError struct {
	Feature string
}

func (e *NotConfiguredError) Error() string {
	return fmt.Sprintf("%s has no model backend configured. %s", e.Feature, ConfigureHint(e.Feature))
}

// ErrNotConfigured matches every *NotConfiguredError under errors.Is.
var ErrNotConfigured = errors.New("no model backend configured")

// Is makes errors.Is(err, ErrNotConfigured) match.
func (e *NotConfiguredError) Is(target error) bool { return target == ErrNotConfigured }

// ConfigureHint tells people how to give feature a backend: the config keys and a
// one-line example (valid YAML) for the config file.
func ConfigureHint(feature string) string {
	example := "backends: {gpu: {type: comfyui, url: \"http://127.0.0.1:8188\", workflows: {" + feature + ": /path/to/" + feature + ".json}}}"
	if feature == FeatureMagicEraser {
		example = "backends: {gpu: {type: iopaint, url: \"http://127.0.0.1:8080\"}}"
	}
	return fmt.Sprintf("Define a backend under `backends` (type comfyui, iopaint, a1111, openai or remote, with its url) "+
		"and name it under `features`, e.g. %s and features: {%s: gpu}", example, feature)
}
