package catalog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"

	"github.com/porchlight/porchlight/core"
)

// Preset features: the values of GET /v1/presets?feature=... that have presets.
const (
	PresetsTonecraft     = "tonecraft"
	PresetsIndoorStaging = "indoor_staging"
)

// Preset is a named look that an order selects by Key. Settings holds the look's
// values with snake_case keys; it is derived from the typed Look or Staging, so what
// the API shows is what Resolve and the pipeline apply.
type Preset struct {
	Key         string         `json:"key"`
	Name        string         `json:"name"`
	Feature     string         `json:"feature"`
	Description string         `json:"description"`
	Settings    map[string]any `json:"settings"`
}

// CurvePoint is a control point of a tone curve in display-referred (sRGB-encoded)
// values: X is the input level, Y the output level, both 0..1.
type CurvePoint struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// Look is a tonecraft profile as typed values. Sliders are -1..1 with 0 meaning "no
// change" (Exposure is in EV, -2..2). WhiteBalanceTemp and WhiteBalanceTint correct
// the light source (blue-amber and green-magenta axes, applied to the whole image
// before tone); Warmth is a stylistic amber lift of midtones and highlights applied
// after tone, so a look can neutralise a cast and still read warm. Clarity is local
// contrast (texture, the view through windows); CleanShadows (0..1) takes the colour
// cast out of the shadows. Curve is a
// monotone tone curve through its control points, applied after the sliders.
// AutoLevels stretches the result to the histogram's ends; Sharpen adds an
// unsharp-mask boost at the end.
type Look struct {
	WhiteBalanceTemp float64      `json:"white_balance_temp"`
	WhiteBalanceTint float64      `json:"white_balance_tint"`
	Exposure         float64      `json:"exposure"`
	Contrast         float64      `json:"contrast"`
	Highlights       float64      `json:"highlights"`
	Shadows          float64      `json:"shadows"`
	Whites           float64      `json:"whites"`
	Blacks           float64      `json:"blacks"`
	Vibrance         float64      `json:"vibrance"`
	Saturation       float64      `json:"saturation"`
	Warmth           float64      `json:"warmth"`
	Clarity          float64      `json:"clarity"`
	CleanShadows     float64      `json:"clean_shadows"`
	AutoLevels       bool         `json:"auto_levels"`
	Sharpen          bool         `json:"sharpen"`
	Curve            []CurvePoint `json:"curve"`
}

// Validate checks that every slider is within its range and that the curve starts
// at X 0, ends at X 1, rises strictly in X and never falls in Y.
func (l Look) Validate() error {
	sliders := []struct {
		name   string
		v, lim float64
	}{
		{"white_balance_temp", l.WhiteBalanceTemp, 1},
		{"white_balance_tint", l.WhiteBalanceTint, 1},
		{"exposure", l.Exposure, 2},
		{"contrast", l.Contrast, 1},
		{"highlights", l.Highlights, 1},
		{"shadows", l.Shadows, 1},
		{"whites", l.Whites, 1},
		{"blacks", l.Blacks, 1},
		{"vibrance", l.Vibrance, 1},
		{"saturation", l.Saturation, 1},
		{"warmth", l.Warmth, 1},
		{"clarity", l.Clarity, 1},
		{"clean_shadows", l.CleanShadows, 1},
	}
	for _, s := range sliders {
		if math.IsNaN(s.v) || s.v < -s.lim || s.v > s.lim {
			return core.Invalid(s.name, "must be between %g and %g", -s.lim, s.lim)
		}
	}
	if l.CleanShadows < 0 {
		return core.Invalid("clean_shadows", "must be between 0 and 1")
	}
	if len(l.Curve) < 2 {
		return core.Invalid("curve", "needs at least two control points")
	}
	for i, p := range l.Curve {
		field := fmt.Sprintf("curve[%d]", i)
		if math.IsNaN(p.X) || math.IsNaN(p.Y) || p.X < 0 || p.X > 1 || p.Y < 0 || p.Y > 1 {
			return core.Invalid(field, "x and y must be between 0 and 1")
		}
		if i > 0 && p.X <= l.Curve[i-1].X {
			return core.Invalid(field, "x must rise from point to point")
		}
		if i > 0 && p.Y < l.Curve[i-1].Y {
			return core.Invalid(field, "y must not fall (the curve is monotone)")
		}
	}
	if l.Curve[0].X != 0 || l.Curve[len(l.Curve)-1].X != 1 {
		return core.Invalid("curve", "must start at x 0 and end at x 1")
	}
	return nil
}

// Staging is an indoor-staging preset as typed values. Clause, when set, replaces the
// style's own furniture text.
type Staging struct {
	Style       string `json:"staging_style"`
	Clause      string `json:"style_clause,omitempty"`
	FloorFinish string `json:"floor_finish"`
	WallColor   string `json:"wall_color"`
}

// Validate checks the values against the option table and staging rules 3 and 4.
func (s Staging) Validate() error {
	for _, c := range []struct{ name, v string }{
		{"staging_style", s.Style}, {"floor_finish", s.FloorFinish}, {"wall_color", s.WallColor},
	} {
		if !byName[c.name].hasEnum(c.v) {
			return core.Invalid(c.name, "unknown value %q", c.v)
		}
	}
	if len([]rune(s.Clause)) > MaxStyleClause {
		return core.Invalid("style_clause", "longer than %d characters", MaxStyleClause)
	}
	if s.Style == StyleKeep && s.Clause != "" {
		return core.Invalid("style_clause", "a style clause needs a staging_style other than keep")
	}
	if s.Style == StyleKeep && s.FloorFinish == "keep" && s.WallColor == "keep" {
		return core.Invalid("staging_style", "keep needs floor_finish or wall_color other than keep")
	}
	return nil
}

type lookPreset struct {
	key, name, description string
	look                   Look
}

type stagingPreset struct {
	key, name, description string
	staging                Staging
}

// tonecraftPresets are the built-in tone looks; signature is the default.
var tonecraftPresets = []lookPreset{
	{
		key: "signature", name: "Signature",
		description: "The house look: a dim room made bright, clean and true, with opened and neutral shadows, windows held with their view, a gentle S-curve and a crisp finish.",
		look: Look{
			Exposure: 0.65, Contrast: 0.12,
			Highlights: -0.65, Shadows: 0.70, Whites: 0.05, Blacks: -0.05,
			Vibrance: 0.15, Warmth: 0.03, Clarity: 0.45, CleanShadows: 0.8, AutoLevels: true, Sharpen: true,
			Curve: []CurvePoint{{0, 0}, {0.25, 0.30}, {0.5, 0.59}, {0.75, 0.82}, {1, 1}},
		},
	},
	{
		key: "natural", name: "Natural",
		description: "Minimal intervention: as-shot colour, a light highlight recovery and shadow lift, straight curve, no sharpening.",
		look: Look{
			Exposure: 0.05, Highlights: -0.20, Shadows: 0.15, Vibrance: 0.08,
			AutoLevels: true,
			Curve:      []CurvePoint{{0, 0}, {1, 1}},
		},
	},
	{
		key: "bright_airy", name: "Bright & airy",
		description: "High-key and soft: a full stop brighter with lifted blacks, low contrast and soft texture, slightly cool and desaturated whites for white-walled interiors.",
		look: Look{
			WhiteBalanceTemp: -0.06, WhiteBalanceTint: 0.02, Exposure: 0.85, Contrast: -0.20,
			Highlights: -0.55, Shadows: 0.70, Whites: 0.15, Blacks: 0.15,
			Vibrance: 0.05, Saturation: -0.18, Warmth: -0.03, Clarity: -0.10, CleanShadows: 0.6, Sharpen: true,
			Curve: []CurvePoint{{0, 0.05}, {0.25, 0.35}, {0.5, 0.63}, {0.75, 0.86}, {1, 1}},
		},
	},
	{
		key: "warm_inviting", name: "Warm & inviting",
		description: "Golden-hour warmth: amber white balance and midtones, soft contrast, rolled-off highlights for wood and textiles.",
		look: Look{
			WhiteBalanceTemp: 0.18, WhiteBalanceTint: 0.03, Exposure: 0.35, Contrast: 0.08,
			Highlights: -0.40, Shadows: 0.45, Whites: 0.05, Blacks: -0.05,
			Vibrance: 0.12, Saturation: 0.05, Warmth: 0.32, CleanShadows: 0.3, AutoLevels: true,
			Curve: []CurvePoint{{0, 0}, {0.25, 0.24}, {0.5, 0.53}, {0.75, 0.79}, {1, 0.98}},
		},
	},
	{
		key: "crisp_modern", name: "Crisp modern",
		description: "Architectural clarity: cool-neutral balance, strong S-curve and local contrast, deep clean blacks and punchy vibrance for contemporary spaces.",
		look: Look{
			WhiteBalanceTemp: -0.10, Exposure: 0.25, Contrast: 0.35,
			Highlights: -0.45, Shadows: 0.35, Whites: 0.20, Blacks: -0.20,
			Vibrance: 0.25, Saturation: -0.08, Warmth: -0.08, Clarity: 0.60, CleanShadows: 1, AutoLevels: true, Sharpen: true,
			Curve: []CurvePoint{{0, 0}, {0.25, 0.19}, {0.5, 0.50}, {0.75, 0.82}, {1, 1}},
		},
	},
	{
		key: "twilight", name: "Twilight",
		description: "Dramatic dusk exteriors: cool blue-hour balance with warm glowing windows, strong highlight recovery and local contrast, rich colour and no level stretch.",
		look: Look{
			WhiteBalanceTemp: -0.22, WhiteBalanceTint: 0.05, Exposure: -0.15, Contrast: 0.25,
			Highlights: -0.60, Shadows: 0.35, Whites: 0.05, Blacks: -0.12,
			Vibrance: 0.40, Saturation: 0.10, Warmth: 0.25, Clarity: 0.35, Sharpen: true,
			Curve: []CurvePoint{{0, 0}, {0.2, 0.16}, {0.5, 0.50}, {0.8, 0.86}, {1, 1}},
		},
	},
}

// stagingPresets are the built-in indoor-staging looks. room_type and gen_quality are
// never part of a preset (staging rule 2).
var stagingPresets = []stagingPreset{
	{
		key: "modern_family", name: "Modern family",
		description: "Practical modern furniture for family homes, existing finishes kept.",
		staging: Staging{Style: "modern", FloorFinish: "keep", WallColor: "keep",
			Clause: "Family-friendly modern furniture: a deep sectional sofa in washable light grey fabric, " +
				"a round oak coffee table with soft edges, a large low-pile wool rug, simple black pendant lights, " +
				"a sturdy dining table with upholstered chairs, a few green plants and neatly shelved books."},
	},
	{
		key: "scandi_minimal", name: "Scandi minimal",
		description: "Pale wood and linen Scandinavian staging on freshly white walls.",
		staging: Staging{Style: "scandinavian", FloorFinish: "keep", WallColor: "white",
			Clause: "Pared-back Scandinavian interior: pale ash and birch furniture with tapered legs, " +
				"off-white boucle upholstery, natural linen textiles, one sculptural paper lamp, " +
				"sparse ceramic accents and plenty of open floor."},
	},
	{
		key: "luxury_penthouse", name: "Luxury penthouse",
		description: "High-end staging with marble, brass and velvet on greige walls.",
		staging: Staging{Style: "luxury", FloorFinish: "keep", WallColor: "greige",
			Clause: "Luxury penthouse staging: a curved velvet sofa in deep emerald, marble and brass side tables, " +
				"a large abstract canvas, a statement chandelier, silk area rug, designer lounge chairs " +
				"and a styled bar cart with crystal glassware."},
	},
	{
		key: "cozy_rental", name: "Cozy rental",
		description: "Affordable flat-pack furnishing that makes a rental feel lived-in, on warm white walls.",
		staging: Staging{Style: "ikea", FloorFinish: "keep", WallColor: "warm_white",
			Clause: "Budget-friendly cozy rental: a compact two-seat fabric sofa, white flat-pack shelving with baskets, " +
				"a birch veneer desk, a soft throw and cushions, a striped cotton rug, floor lamp with a paper shade " +
				"and potted pothos."},
	},
	{
		key: "industrial_loft", name: "Industrial loft",
		description: "Leather, steel and reclaimed wood over a polished light concrete floor.",
		staging: Staging{Style: "industrial", FloorFinish: "concrete_light_grey", WallColor: "keep",
			Clause: "Industrial loft staging: a cognac leather chesterfield, reclaimed timber and black steel tables, " +
				"metal-frame open shelving, Edison-bulb pendants, a vintage kilim rug and large-leaf plants."},
	},
	{
		key: "contemporary_neutral", name: "Contemporary neutral",
		description: "The contemporary style's own furniture, finishes kept; a safe default for any room.",
		staging:     Staging{Style: "contemporary", FloorFinish: "keep", WallColor: "keep"},
	},
	{
		key: "finishes_refresh", name: "Finishes refresh",
		description: "No restaging: the room keeps its furniture and gets light wood floors and warm white walls.",
		staging:     Staging{Style: StyleKeep, FloorFinish: "hardwood_light_brown", WallColor: "warm_white"},
	},
}

// presetFeatures are the feature values GET /v1/presets accepts: the two preset
// features, the catalog keys and the gen_edit values. Only tonecraft and
// indoor_staging have presets; the others answer an empty list.
func knownPresetFeature(feature string) bool {
	if feature == PresetsTonecraft || feature == PresetsIndoorStaging {
		return true
	}
	if _, ok := GenEditFeature(feature); ok {
		return true
	}
	for _, f := range features {
		if f.key == feature {
			return true
		}
	}
	return false
}

// Presets returns the presets of feature: the built-in ones as the table lists them,
// then the user presets (tonecraft only) in their configured order.
// feature "" returns every preset. Features that exist but have no presets (for
// example sky_replacement or outdoor_staging) answer an empty list; an unknown
// feature is core.Invalid naming "feature".
func Presets(feature string) ([]Preset, error) {
	if feature != "" && !knownPresetFeature(feature) {
		return nil, core.Invalid("feature", "unknown feature %q; presets exist for %s and %s",
			feature, PresetsTonecraft, PresetsIndoorStaging)
	}
	out := []Preset{}
	if feature == "" || feature == PresetsTonecraft {
		for _, p := range tonecraftPresets {
			out = append(out, p.preset())
		}
		for _, p := range UserPresets() {
			out = append(out, p.preset())
		}
	}
	if feature == "" || feature == PresetsIndoorStaging {
		for _, p := range stagingPresets {
			out = append(out, p.preset())
		}
	}
	return out, nil
}

// LookupPreset returns the preset of feature called key.
func LookupPreset(feature, key string) (Preset, bool) {
	switch feature {
	case PresetsTonecraft:
		if p, ok := findLook(key); ok {
			return p.preset(), true
		}
		if p, ok := findUser(key); ok {
			return p.preset(), true
		}
	case PresetsIndoorStaging:
		if p, ok := findStaging(key); ok {
			return p.preset(), true
		}
	}
	return Preset{}, false
}

// PresetKeys returns the keys of feature's presets in table order.
func PresetKeys(feature string) []string {
	var keys []string
	switch feature {
	case PresetsTonecraft:
		keys = builtinLookKeys()
		for _, p := range UserPresets() {
			keys = append(keys, p.Key)
		}
	case PresetsIndoorStaging:
		for _, p := range stagingPresets {
			keys = append(keys, p.key)
		}
	}
	return keys
}

// TonecraftLook returns the typed settings of a tonecraft profile; a user preset's
// are those of its base look (its own settings are order options, see Resolve).
func TonecraftLook(profile string) (Look, bool) {
	if u, ok := findUser(profile); ok {
		profile = u.Base
	}
	p, ok := findLook(profile)
	if !ok {
		return Look{}, false
	}
	l := p.look
	l.Curve = append([]CurvePoint(nil), l.Curve...)
	return l, true
}

// StagingPreset returns the typed settings of an indoor-staging preset.
func StagingPreset(key string) (Staging, bool) {
	p, ok := findStaging(key)
	return p.staging, ok
}

// LookFromSettings reads a Look from preset settings (user presets from the config
// file or the window), refusing unknown keys and out-of-range values.
func LookFromSettings(settings map[string]any) (Look, error) {
	var l Look
	if err := fromSettings(settings, &l); err != nil {
		return Look{}, err
	}
	return l, l.Validate()
}

// StagingFromSettings reads a Staging from preset settings, refusing unknown keys and
// values the option table does not accept.
func StagingFromSettings(settings map[string]any) (Staging, error) {
	var s Staging
	if err := fromSettings(settings, &s); err != nil {
		return Staging{}, err
	}
	return s, s.Validate()
}

func fromSettings(settings map[string]any, v any) error {
	b, err := json.Marshal(settings)
	if err != nil {
		return core.Invalid("settings", "not representable as JSON: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return core.Invalid("settings", "%v", err)
	}
	return nil
}

func findLook(key string) (lookPreset, bool) {
	for _, p := range tonecraftPresets {
		if p.key == key {
			return p, true
		}
	}
	return lookPreset{}, false
}

func findStaging(key string) (stagingPreset, bool) {
	for _, p := range stagingPresets {
		if p.key == key {
			return p, true
		}
	}
	return stagingPreset{}, false
}

func (p lookPreset) preset() Preset {
	return Preset{Key: p.key, Name: p.name, Feature: PresetsTonecraft,
		Description: p.description, Settings: settingsOf(p.look)}
}

func (p stagingPreset) preset() Preset {
	return Preset{Key: p.key, Name: p.name, Feature: PresetsIndoorStaging,
		Description: p.description, Settings: settingsOf(p.staging)}
}

// settingsOf turns a typed look into its JSON settings map through its json tags, so
// the two spellings cannot drift apart. The values are plain structs of numbers,
// strings and booleans; marshalling them cannot fail.
func settingsOf(v any) map[string]any {
	b, err := json.Marshal(v)
	if err != nil {
		panic("catalog: preset settings: " + err.Error())
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic("catalog: preset settings: " + err.Error())
	}
	return m
}

// sortedKeys returns the keys of m in order, for deterministic error reports.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
