package catalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/porchlight/porchlight/core"
)

// UserPreset is a tone look of the photographer's own: a built-in tonecraft profile
// (Base) with develop settings on top (the sliders, the corrections, perspective).
// It is a tonecraft preset like the built-in ones: an order selects it with
// tonecraft_profile set to Key, through the window, the API or a hot folder. Its
// Options fill only what the order leaves unset, as every preset does; an explicit
// value wins.
//
// User presets belong to the installation, not to one API key: a studio's looks are
// the same whichever front door an order comes through. They live in the config file
// (key `presets`) and are installed with SetUserPresets when it is read or changed.
type UserPreset struct {
	Key         string       `json:"key" mapstructure:"key" yaml:"key"`
	Name        string       `json:"name" mapstructure:"name" yaml:"name"`
	Description string       `json:"description,omitempty" mapstructure:"description" yaml:"description,omitempty"`
	Base        string       `json:"base" mapstructure:"base" yaml:"base"`
	Options     core.Options `json:"options" mapstructure:"-" yaml:"-"`
}

// userPresetOptions are the options a user preset may carry: the develop settings a
// photographer tunes per look. Content edits (sky, staging, privacy) and delivery
// settings are the order's, not the look's.
var userPresetOptions = []string{
	"tonecraft_levels", "tonecraft_sharpen", "color_correction", "lens_correction",
	"perspective", "perspective_strength",
	"exposure", "temperature", "tint", "contrast", "highlights", "shadows",
	"whites", "blacks", "vibrance", "saturation",
}

// UserPresetOptions lists the options a user preset may carry.
func UserPresetOptions() []string { return slices.Clone(userPresetOptions) }

var userPresetKey = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,47}$`)

var (
	userMu      sync.RWMutex
	userPresets []UserPreset
)

// SetUserPresets replaces the installed user presets after checking every one: a key
// of lower-case letters, digits, '-' and '_' that no built-in preset and no other user
// preset has, a name, a built-in base profile, and options from UserPresetOptions
// within the option table's ranges. On error nothing changes.
func SetUserPresets(list []UserPreset) error {
	out, err := checkedUserPresets(list)
	if err != nil {
		return err
	}
	userMu.Lock()
	userPresets = out
	userMu.Unlock()
	return nil
}

func checkUserPresets(list []UserPreset) error {
	_, err := checkedUserPresets(list)
	return err
}

// checkedUserPresets returns list checked and normalised (names filled in, options
// copied), or the first problem.
func checkedUserPresets(list []UserPreset) ([]UserPreset, error) {
	seen := map[string]bool{}
	out := make([]UserPreset, 0, len(list))
	for i, p := range list {
		field := fmt.Sprintf("presets[%d]", i)
		if !userPresetKey.MatchString(p.Key) {
			return nil, core.Invalid(field+".key", "%q must be 1 to 48 lower-case letters, digits, '-' or '_', starting with a letter or digit", clip(p.Key))
		}
		if _, builtin := findLook(p.Key); builtin {
			return nil, core.Invalid(field+".key", "%q is a built-in look; choose another key", p.Key)
		}
		if seen[p.Key] {
			return nil, core.Invalid(field+".key", "%q is used twice", p.Key)
		}
		seen[p.Key] = true
		if p.Name == "" {
			p.Name = p.Key
		}
		if _, ok := findLook(p.Base); !ok {
			return nil, core.Invalid(field+".base", "unknown look %q; one of %s", clip(p.Base), joinKeys(builtinLookKeys()))
		}
		opts, err := checkUserOptions(p.Options)
		if err != nil {
			return nil, core.Invalid(field+".options", "%v", err)
		}
		p.Options = opts
		out = append(out, p)
	}
	return out, nil
}

// UserPresets returns the installed user presets.
func UserPresets() []UserPreset {
	userMu.RLock()
	defer userMu.RUnlock()
	out := make([]UserPreset, len(userPresets))
	for i, p := range userPresets {
		p.Options = cloneOptions(p.Options)
		out[i] = p
	}
	return out
}

// UserPresetFromOptions makes a user preset of the develop settings in o (anything
// else in o is left out), based on o's tonecraft profile, or on that profile's own
// base when o names a user preset.
func UserPresetFromOptions(key, name string, o core.Options) UserPreset {
	base := "signature"
	if o.TonecraftProfile != nil {
		base = *o.TonecraftProfile
		if u, ok := findUser(base); ok {
			base = u.Base
			o = Merge(u.Options, o)
		}
	}
	var kept core.Options
	src, dst := reflect.ValueOf(o), reflect.ValueOf(&kept).Elem()
	for _, n := range userPresetOptions {
		opt := byName[n]
		dst.Field(opt.in).Set(src.Field(opt.in))
	}
	return UserPreset{Key: key, Name: name, Base: base, Options: cloneOptions(kept)}
}

// checkUserOptions refuses options a user preset may not carry and values the table
// does not accept.
func checkUserOptions(o core.Options) (core.Options, error) {
	v := reflect.ValueOf(o)
	for i := range options {
		opt := &options[i]
		f := v.Field(opt.in)
		if f.IsZero() {
			continue
		}
		if !slices.Contains(userPresetOptions, opt.Name) {
			return core.Options{}, fmt.Errorf("%s cannot be part of a look; a look carries %s", opt.Name, joinKeys(userPresetOptions))
		}
	}
	norm, err := normalized(o)
	if err != nil {
		return core.Options{}, err
	}
	return cloneOptions(norm), nil
}

func findUser(key string) (UserPreset, bool) {
	userMu.RLock()
	defer userMu.RUnlock()
	for _, p := range userPresets {
		if p.Key == key {
			p.Options = cloneOptions(p.Options)
			return p, true
		}
	}
	return UserPreset{}, false
}

func (p UserPreset) preset() Preset {
	base, _ := findLook(p.Base)
	settings := settingsOf(base.look)
	settings["base"] = p.Base
	for k, val := range optionsMap(p.Options) {
		settings[k] = val
	}
	desc := p.Description
	if desc == "" {
		desc = "A look of this studio's own, based on " + base.name + "."
	}
	return Preset{Key: p.Key, Name: p.Name, Feature: PresetsTonecraft, Description: desc, Settings: settings}
}

// optionsMap returns the options o sets, by JSON name.
func optionsMap(o core.Options) map[string]any {
	out := map[string]any{}
	v := reflect.ValueOf(o)
	for i := range options {
		f := v.Field(options[i].in)
		if f.IsZero() {
			continue
		}
		if f.Kind() == reflect.Pointer {
			f = f.Elem()
		}
		out[options[i].Name] = f.Interface()
	}
	return out
}

// cloneOptions copies o deeply, so a stored preset never shares a pointer with a
// caller's options.
func cloneOptions(o core.Options) core.Options {
	var out core.Options
	for i := range options {
		if v, ok := options[i].get(o); ok {
			options[i].set(&out, v)
		}
	}
	return out
}

func builtinLookKeys() []string {
	keys := make([]string, 0, len(tonecraftPresets))
	for _, p := range tonecraftPresets {
		keys = append(keys, p.key)
	}
	return keys
}

func joinKeys(keys []string) string { return strings.Join(keys, ", ") }

// DecodeUserPresets reads the config file's `presets` entries (key, name,
// description, base, and options as order options by their JSON names) and checks
// them as SetUserPresets does, without installing them.
func DecodeUserPresets(entries []map[string]any) ([]UserPreset, error) {
	out := make([]UserPreset, 0, len(entries))
	for i, e := range entries {
		field := fmt.Sprintf("presets[%d]", i)
		var p UserPreset
		for k, v := range e {
			switch k {
			case "key", "name", "description", "base":
				s, ok := v.(string)
				if !ok {
					return nil, core.Invalid(field+"."+k, "must be text")
				}
				switch k {
				case "key":
					p.Key = s
				case "name":
					p.Name = s
				case "description":
					p.Description = s
				default:
					p.Base = s
				}
			case "options":
				raw, err := json.Marshal(v)
				if err != nil {
					return nil, core.Invalid(field+".options", "not representable as JSON: %v", err)
				}
				var fields map[string]json.RawMessage
				if err := json.Unmarshal(raw, &fields); err != nil {
					return nil, core.Invalid(field+".options", "must be a map of order options")
				}
				if p.Options, err = DecodeOptions(fields); err != nil {
					return nil, core.Invalid(field+".options", "%v", err)
				}
			default:
				return nil, core.Invalid(field+"."+k, "unknown field; a preset has key, name, description, base and options")
			}
		}
		out = append(out, p)
	}
	if err := checkUserPresets(out); err != nil {
		return nil, err
	}
	return out, nil
}

// Map is the preset as a config-file entry, the inverse of DecodeUserPresets.
func (p UserPreset) Map() map[string]any {
	m := map[string]any{"key": p.Key, "name": p.Name, "base": p.Base, "options": optionsMap(p.Options)}
	if p.Description != "" {
		m["description"] = p.Description
	}
	return m
}
