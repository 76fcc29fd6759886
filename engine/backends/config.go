package backends

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of a Spec.
const (
	DefaultTimeout = 10 * time.Minute
	DefaultRetries = 3
	DefaultBackoff = 500 * time.Millisecond
)

// commonKeys are the config keys every backend type reads.
var commonKeys = []string{"type", "url", "api_key", "api_key_env", "timeout", "retries", "backoff"}

// Spec is the configuration of one backend (`backends.NAME` in the config file).
type Spec struct {
	Name string
	Type string
	// URL is the server's base address.
	URL *url.URL
	// APIKey authenticates to the server (the remote's sk- key, OpenAI's bearer
	// token); api_key_env names an environment variable that holds it instead.
	APIKey string
	// Timeout bounds one whole job (upload, generation, download).
	Timeout time.Duration
	// Retries is how many times a request that failed with 5xx, 429 or a connection
	// error is tried again; Backoff is the first wait, doubled each time.
	Retries int
	Backoff time.Duration
	// Extra holds the type's own keys (workflows, model, sampler, ...).
	Extra map[string]any
}

// ParseSpec reads backends.NAME from the config. Keys are compared in lower case
// (the config loader lowers them).
func ParseSpec(name string, raw map[string]any) (Spec, error) {
	s := Spec{Name: name, Timeout: DefaultTimeout, Retries: DefaultRetries, Backoff: DefaultBackoff, Extra: map[string]any{}}
	field := func(k string) string { return "backends." + name + "." + k }
	for k, v := range raw {
		k = strings.ToLower(k)
		var err error
		switch k {
		case "type":
			s.Type, err = asString(v)
			s.Type = strings.ToLower(strings.TrimSpace(s.Type))
		case "url":
			var u string
			if u, err = asString(v); err == nil {
				s.URL, err = parseBaseURL(u)
			}
		case "api_key":
			s.APIKey, err = asString(v)
		case "api_key_env":
			var env string
			if env, err = asString(v); err == nil {
				if s.APIKey = os.Getenv(env); s.APIKey == "" {
					err = fmt.Errorf("environment variable %s is empty or not set", env)
				}
			}
		case "timeout":
			s.Timeout, err = asDuration(v)
			if err == nil && s.Timeout <= 0 {
				err = fmt.Errorf("must be positive")
			}
		case "retries":
			s.Retries, err = asInt(v)
			if err == nil && (s.Retries < 0 || s.Retries > 20) {
				err = fmt.Errorf("must be 0 to 20")
			}
		case "backoff":
			s.Backoff, err = asDuration(v)
			if err == nil && s.Backoff < 0 {
				err = fmt.Errorf("must not be negative")
			}
		default:
			s.Extra[k] = v
		}
		if err != nil {
			return Spec{}, fmt.Errorf("%s: %w", field(k), err)
		}
	}
	if s.Type == "" {
		return Spec{}, fmt.Errorf("%s is missing (one of comfyui, iopaint, a1111, openai, remote)", field("type"))
	}
	if s.URL == nil {
		return Spec{}, fmt.Errorf("%s is missing (the server's address, e.g. http://127.0.0.1:8188)", field("url"))
	}
	return s, nil
}

func parseBaseURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q is not an http or https address", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q has no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%q must not carry a query or fragment", s)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	return u, nil
}

// checkExtra refuses keys the type does not read, so typos surface at start.
func (s Spec) checkExtra(known []string) error {
	for k := range s.Extra {
		if !slices.Contains(known, k) {
			all := append(append([]string(nil), commonKeys...), known...)
			slices.Sort(all)
			return fmt.Errorf("backends.%s.%s: unknown key for type %s (known keys: %s)",
				s.Name, k, s.Type, strings.Join(all, ", "))
		}
	}
	return nil
}

// Field names a key of this backend in messages: "backends.gpu.model".
func (s Spec) Field(key string) string { return "backends." + s.Name + "." + key }

// String returns the type's string key, def when absent.
func (s Spec) String(key, def string) (string, error) {
	v, ok := s.Extra[key]
	if !ok {
		return def, nil
	}
	str, err := asString(v)
	if err != nil {
		return "", fmt.Errorf("%s: %w", s.Field(key), err)
	}
	return str, nil
}

// Int returns the type's integer key, def when absent.
func (s Spec) Int(key string, def int) (int, error) {
	v, ok := s.Extra[key]
	if !ok {
		return def, nil
	}
	n, err := asInt(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Field(key), err)
	}
	return n, nil
}

// Float returns the type's number key, def when absent.
func (s Spec) Float(key string, def float64) (float64, error) {
	v, ok := s.Extra[key]
	if !ok {
		return def, nil
	}
	f, err := asFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Field(key), err)
	}
	return f, nil
}

// Duration returns the type's duration key ("500ms", or seconds), def when absent.
func (s Spec) Duration(key string, def time.Duration) (time.Duration, error) {
	v, ok := s.Extra[key]
	if !ok {
		return def, nil
	}
	d, err := asDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.Field(key), err)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s: must be positive", s.Field(key))
	}
	return d, nil
}

// Bool returns the type's boolean key, def when absent.
func (s Spec) Bool(key string, def bool) (bool, error) {
	v, ok := s.Extra[key]
	if !ok {
		return def, nil
	}
	switch b := v.(type) {
	case bool:
		return b, nil
	case string:
		p, err := strconv.ParseBool(strings.TrimSpace(b))
		if err != nil {
			return false, fmt.Errorf("%s: %q is not true or false", s.Field(key), b)
		}
		return p, nil
	}
	return false, fmt.Errorf("%s: %v is not true or false", s.Field(key), v)
}

// StringMap returns the type's map key (workflows: {feature: path}), keys lowered.
func (s Spec) StringMap(key string) (map[string]string, error) {
	v, ok := s.Extra[key]
	if !ok {
		return map[string]string{}, nil
	}
	out := map[string]string{}
	add := func(k string, v any) error {
		str, err := asString(v)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", s.Field(key), k, err)
		}
		out[strings.ToLower(k)] = str
		return nil
	}
	switch m := v.(type) {
	case map[string]any:
		for k, v := range m {
			if err := add(k, v); err != nil {
				return nil, err
			}
		}
	case map[string]string:
		for k, v := range m {
			if err := add(k, v); err != nil {
				return nil, err
			}
		}
	case map[any]any:
		for k, v := range m {
			if err := add(fmt.Sprint(k), v); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%s: must be a map of feature to value", s.Field(key))
	}
	return out, nil
}

func asString(v any) (string, error) {
	switch s := v.(type) {
	case string:
		return s, nil
	case fmt.Stringer:
		return s.String(), nil
	}
	return "", fmt.Errorf("%v is not a string", v)
}

func asInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n != float64(int(n)) {
			return 0, fmt.Errorf("%v is not a whole number", n)
		}
		return int(n), nil
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", n)
		}
		return i, nil
	}
	return 0, fmt.Errorf("%v is not a whole number", v)
}

func asFloat(v any) (float64, error) {
	switch n := v.(type) {
	case int:
		return float64(n), nil
	case int64:
		return float64(n), nil
	case float64:
		return n, nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", n)
		}
		return f, nil
	}
	return 0, fmt.Errorf("%v is not a number", v)
}

// asDuration reads "90s", "10m" or a number of seconds.
func asDuration(v any) (time.Duration, error) {
	switch d := v.(type) {
	case time.Duration:
		return d, nil
	case string:
		s := strings.TrimSpace(d)
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return time.Duration(f * float64(time.Second)), nil
		}
		p, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 90s, 10m)", d)
		}
		return p, nil
	}
	f, err := asFloat(v)
	if err != nil {
		return 0, fmt.Errorf("%v is not a duration (e.g. 90s, 10m)", v)
	}
	return time.Duration(f * float64(time.Second)), nil
}
