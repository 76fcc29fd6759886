package catalog

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/porchlight/porchlight/core"
)

// Param types, as the feature catalog names them.
const (
	TypeBoolean = "boolean"
	TypeNumber  = "number"
	TypeInteger = "integer"
	TypeString  = "string"
	TypeEnum    = "enum"
	TypeArray   = "array" // of strings
	TypeUUID    = "uuid"
)

// Param is one order option as the feature catalog shows it. Default is nil where
// nothing fixed applies (a preset decides, or the option has no default). Features
// lists the catalog keys of the features the option belongs to; it is not part of
// the catalog's JSON because each feature lists its own parameters. Description says
// in one user-facing sentence what the option does, for --help and the OpenAPI
// document; the values, range and default are in the other fields, so it need not
// repeat them. The catalog's JSON leaves it out, keeping its record shape.
type Param struct {
	Name      string   `json:"name"`
	Type      string   `json:"type"`
	Default   any      `json:"default"`
	Enum      []string `json:"enum,omitempty"`
	Min       *float64 `json:"min,omitempty"`
	Max       *float64 `json:"max,omitempty"`
	MaxLength int      `json:"maxLength,omitempty"`
	Features  []string `json:"-"`

	Description string `json:"-"`
}

// option is a Param plus what only this package needs: the preset list a string
// option must name, and where the option lives in core.Options and core.Resolved.
type option struct {
	Param
	presetFeature string // non-empty: the value must be a preset key of this feature
	in, out       int    // field index in core.Options and core.Resolved
}

// Feature keys of the catalog.
const (
	FeatureEnhancer       = "enhancer"
	FeatureAutoHDR        = "auto_hdr"
	FeatureSkyReplacement = "sky_replacement"
	FeaturePrivacyBlur    = "privacy_blur"
	FeatureIndoorStaging  = "indoor_staging"
	FeatureOutdoorStaging = "outdoor_staging"
	FeatureMessCleaner    = "mess_cleaner"
	FeatureDeclutter      = "declutter"
	FeatureMagicEraser    = "magic_eraser"
)

// Values of gen_edit.
const (
	GenIndoorStaging  = "indoor_staging"
	GenOutdoorStaging = "outdoor_staging"
	GenMessCleaner    = "mess_cleaner"
	GenMagicEraser    = "magic_eraser"
	GenDeclutterLocal = "declutter_local"
)

// StyleKeep is the staging_style that changes finishes without restaging.
const StyleKeep = "keep"

// MaxStyleClause is the longest style_clause accepted, in characters.
const MaxStyleClause = 1500

// DefaultCategories are the privacy concepts used when categories is omitted or
// empty; they are also the only concepts the privacy step knows how to find.
var DefaultCategories = []string{"human face", "license plate", "photo or frame"}

func bound(v float64) *float64 { return &v }

var (
	enhancer    = []string{FeatureEnhancer}
	delivery    = []string{FeatureEnhancer, FeatureAutoHDR}
	sky         = []string{FeatureSkyReplacement}
	privacy     = []string{FeaturePrivacyBlur}
	indoor      = []string{FeatureIndoorStaging}
	generative  = []string{FeatureIndoorStaging, FeatureOutdoorStaging, FeatureMessCleaner}
	magicEraser = []string{FeatureMagicEraser}
)

// options is the table, in the order of the spec's "Order options" table, then
// the options added since. gen_edit
// selects a feature rather than belonging to one, so no feature lists it.
var options = []option{
	{Param: Param{Name: "gen_edit", Type: TypeEnum,
		Enum:        []string{GenIndoorStaging, GenOutdoorStaging, GenMessCleaner, GenMagicEraser, GenDeclutterLocal},
		Description: "Selects one generative feature: indoor or outdoor staging, mess cleaner (clutter removed, furniture stays), magic eraser (the area a mask marks) or declutter (furniture, decorations, loose objects and people removed)."}},
	{Param: Param{Name: "perspective", Type: TypeBoolean, Default: false, Features: enhancer,
		Description: "Straightens converging verticals and small camera roll, cropping to the source's aspect ratio."}},
	{Param: Param{Name: "perspective_strength", Type: TypeNumber, Default: 1.0, Min: bound(0), Max: bound(1), Features: enhancer,
		Description: "How far perspective correction goes toward level verticals: 0 leaves the photo as shot, 1 corrects fully."}},
	{Param: Param{Name: "tonecraft", Type: TypeBoolean, Default: false, Features: enhancer,
		Description: "Applies the tone look that tonecraft_profile selects."}},
	{Param: Param{Name: "tonecraft_profile", Type: TypeString, Default: "signature", Features: enhancer,
		Description: "The tone look tonecraft applies, a preset key from GET /v1/presets?feature=tonecraft."}, presetFeature: PresetsTonecraft},
	{Param: Param{Name: "tonecraft_levels", Type: TypeBoolean, Features: enhancer,
		Description: "Turns the look's auto-levels finishing on or off; when omitted the preset decides."}},
	{Param: Param{Name: "tonecraft_sharpen", Type: TypeBoolean, Features: enhancer,
		Description: "Turns the look's sharpness boost on or off; when omitted the preset decides."}},
	{Param: Param{Name: "align", Type: TypeBoolean, Default: true, Features: delivery,
		Description: "Aligns the brackets to each other before they are merged into one HDR photo."}},
	{Param: Param{Name: "format", Type: TypeEnum, Default: "jpeg", Enum: []string{"jpeg", "png", "webp"}, Features: delivery,
		Description: "The file format of the delivered photo."}},
	{Param: Param{Name: "quality", Type: TypeInteger, Default: 92, Min: bound(1), Max: bound(100), Features: delivery,
		Description: "JPEG and WebP compression quality of the delivered photo; it does not change its dimensions."}},
	{Param: Param{Name: "sky", Type: TypeBoolean, Default: false, Features: sky,
		Description: "Replaces the sky of an exterior photo."}},
	{Param: Param{Name: "sky_style", Type: TypeEnum, Default: "high_cloud",
		Enum: []string{"clear", "low_cloud", "neutral", "high_cloud"}, Features: sky,
		Description: "The kind of sky that sky replacement puts in."}},
	{Param: Param{Name: "privacy", Type: TypeBoolean, Default: false, Features: privacy,
		Description: "Blurs what categories selects (faces, license plates, framed photos) so that people cannot be identified."}},
	{Param: Param{Name: "categories", Type: TypeArray, Default: DefaultCategories, Features: privacy,
		Description: "The concepts privacy blur finds and blurs, a subset of the defaults; omitted or empty means all of them."}},
	{Param: Param{Name: "threshold", Type: TypeNumber, Default: 0.3, Min: bound(0), Max: bound(1), Features: privacy,
		Description: "The detection confidence from which privacy blur blurs a find: lower blurs more, higher only surer finds."}},
	{Param: Param{Name: "gen_quality", Type: TypeEnum, Default: "balanced",
		Enum: []string{"fast", "balanced", "best"}, Features: generative,
		Description: "The generation tier of indoor staging, outdoor staging and mess cleaner, trading speed for quality; it does not change the output's dimensions."}},
	{Param: Param{Name: "staging_preset", Type: TypeString, Features: indoor,
		Description: "A named staging look (style, style text and finishes) from GET /v1/presets?feature=indoor_staging, which the explicit staging options override."}, presetFeature: PresetsIndoorStaging},
	{Param: Param{Name: "staging_style", Type: TypeEnum, Default: "contemporary",
		Enum: []string{StyleKeep, "contemporary", "modern", "scandinavian", "luxury", "ikea", "industrial"}, Features: indoor,
		Description: "The furniture style indoor staging stages the room in; keep leaves the furniture and changes only floor and walls."}},
	{Param: Param{Name: "style_clause", Type: TypeString, MaxLength: MaxStyleClause, Features: indoor,
		Description: "Custom furniture style text that replaces the selected look's style text (single orders only)."}},
	{Param: Param{Name: "room_type", Type: TypeEnum, Default: "auto",
		Enum: []string{"auto", "bathroom", "bedroom", "child_room", "dining_room", "kitchen", "living_room", "office", "terrace"}, Features: indoor,
		Description: "The room indoor staging furnishes: auto keeps the kind of room the photo shows, another type converts it within the same walls."}},
	{Param: Param{Name: "floor_finish", Type: TypeEnum, Default: "keep",
		Enum: []string{"keep", "carpet_dark_blue", "carpet_grey", "concrete_light_grey", "hardwood_aria", "hardwood_light_brown", "tiles_grey", "tiles_white"}, Features: indoor,
		Description: "The floor indoor staging lays; keep leaves the floor as it is."}},
	{Param: Param{Name: "wall_color", Type: TypeEnum, Default: "keep",
		Enum: []string{"keep", "white", "warm_white", "cream", "greige", "light_grey", "sand", "taupe", "sage_green", "olive", "powder_blue", "terracotta", "charcoal"}, Features: indoor,
		Description: "The colour indoor staging paints the walls; keep leaves the walls as they are."}},
	{Param: Param{Name: "mask", Type: TypeUUID, Features: magicEraser,
		Description: "The mask of magic eraser, required with gen_edit magic_eraser: a PNG whose white marks what to erase."}},
	// The second round's options. Neither correction has a fixed default: it follows
	// the order (Resolve and ResolveScene), on for enhancement orders and off for
	// the rest.
	{Param: Param{Name: "color_correction", Type: TypeBoolean, Features: delivery,
		Description: "Makes whites, ceilings and greys neutral under mixed daylight and lamp light; when omitted it is on for enhancement orders (tonecraft on, or brackets to merge) and off otherwise."}},
	{Param: Param{Name: "lens_correction", Type: TypeBoolean, Features: delivery,
		Description: "Corrects lens distortion, colour fringing and vignetting for the camera and lens in the photo's metadata; when omitted it is on for enhancement orders (tonecraft on, or brackets to merge) and off otherwise."}},
	// flambient: on unless set false; the pipeline blends only a scene that has a
	// flash frame, which only the decoded inputs tell (see Resolve).
	{Param: Param{Name: "flambient", Type: TypeBoolean, Features: delivery,
		Description: "Blends a flash frame into the scene's ambient exposure, keeping the flash's colour and the ambient light; on unless set false, it acts only on a scene with a flash frame."}},
	// shoot_consistency is a batch's: after each scene's own correction, the white
	// balance and exposure of every scene are brought to one common target.
	{Param: Param{Name: "shoot_consistency", Type: TypeBoolean, Default: true, Features: delivery,
		Description: "Brings the white balance and exposure of the scenes of one batch to a common target so that the rooms of a listing match; it has no effect on a single order (extension)."}},
	// The sliders: adjustments of the developed photo that the window applies to a
	// cached merge, and that the API and hot folders take as options too.
	{Param: Param{Name: "exposure", Type: TypeNumber, Default: 0.0, Min: bound(-5), Max: bound(5), Features: delivery,
		Description: "Brightens (positive) or darkens (negative) the developed photo by this many stops, applied to the merged result before the look."}},
	{Param: Param{Name: "temperature", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Warms (positive) or cools (negative) the white balance of the developed photo; 0 keeps the balance the colour step chose."}},
	{Param: Param{Name: "tint", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Shifts the white balance toward magenta (positive) or green (negative); 0 keeps it as developed."}},
	{Param: Param{Name: "contrast", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Raises (positive) or lowers (negative) the mid-tone contrast of the developed photo."}},
	{Param: Param{Name: "highlights", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Brightens (positive) or recovers (negative) the bright areas, such as windows and lamps, without moving the mid-tones."}},
	{Param: Param{Name: "shadows", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Lifts (positive) or deepens (negative) the dark areas without moving the mid-tones."}},
	{Param: Param{Name: "whites", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Moves the white point: positive makes the brightest tones brighter, negative pulls them down."}},
	{Param: Param{Name: "blacks", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Moves the black point: positive lifts the darkest tones, negative makes them deeper."}},
	{Param: Param{Name: "vibrance", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Raises (positive) or lowers (negative) the saturation of muted colours more than that of saturated ones and skin."}},
	{Param: Param{Name: "saturation", Type: TypeNumber, Default: 0.0, Min: bound(-100), Max: bound(100), Features: delivery,
		Description: "Raises (positive) or lowers (negative) the saturation of every colour alike; -100 gives black and white."}},
}

// byName indexes options by JSON name.
var byName = map[string]*option{}

// The table is bound to core.Options and core.Resolved by json tag when the package
// loads. A mismatch is a programming error in this table, not bad input, so it stops
// the program before anything can be decoded wrongly. A row without a description
// stops it too: --help and the OpenAPI document would leave that option unexplained.
func init() {
	in := jsonFields(reflect.TypeFor[core.Options]())
	out := jsonFields(reflect.TypeFor[core.Resolved]())
	if len(in) != len(options) {
		panic(fmt.Sprintf("catalog: table has %d options, core.Options has %d fields", len(options), len(in)))
	}
	for i := range options {
		o := &options[i]
		if strings.TrimSpace(o.Description) == "" {
			panic("catalog: option " + o.Name + " has no description")
		}
		fi, ok := in[o.Name]
		if !ok {
			panic("catalog: core.Options has no field tagged " + o.Name)
		}
		fo, ok := out[o.Name]
		if !ok {
			panic("catalog: core.Resolved has no field tagged " + o.Name)
		}
		want := goType(o.Type)
		if fi.Type != reflect.PointerTo(want) && !(fi.Type.Kind() == reflect.Slice && fi.Type == want) {
			panic(fmt.Sprintf("catalog: core.Options.%s is %s, table type %s needs %s", fi.Name, fi.Type, o.Type, want))
		}
		if fo.Type != want {
			panic(fmt.Sprintf("catalog: core.Resolved.%s is %s, table type %s needs %s", fo.Name, fo.Type, o.Type, want))
		}
		o.in, o.out = fi.Index[0], fo.Index[0]
		byName[o.Name] = o
	}
}

// goType is the Go type holding a value of a table type (behind a pointer in
// core.Options, except for arrays, whose nil slice means "not given").
func goType(t string) reflect.Type {
	switch t {
	case TypeBoolean:
		return reflect.TypeFor[bool]()
	case TypeNumber:
		return reflect.TypeFor[float64]()
	case TypeInteger:
		return reflect.TypeFor[int]()
	case TypeString, TypeEnum, TypeUUID:
		return reflect.TypeFor[string]()
	case TypeArray:
		return reflect.TypeFor[[]string]()
	}
	panic("catalog: unknown param type " + t)
}

func jsonFields(t reflect.Type) map[string]reflect.StructField {
	m := map[string]reflect.StructField{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = f
		}
	}
	return m
}

// Params returns every order option of the table, in table order, for callers that
// describe the whole request (openapi.json, CLI flags, config validation).
func Params() []Param {
	out := make([]Param, len(options))
	for i := range options {
		out[i] = options[i].clone()
	}
	return out
}

// LookupParam returns the option called name.
func LookupParam(name string) (Param, bool) {
	o, ok := byName[name]
	if !ok {
		return Param{}, false
	}
	return o.clone(), true
}

// clone copies a Param deeply so callers cannot change the table.
func (o *option) clone() Param {
	p := o.Param
	p.Enum = append([]string(nil), p.Enum...)
	p.Features = append([]string(nil), p.Features...)
	if p.Min != nil {
		p.Min = bound(*p.Min)
	}
	if p.Max != nil {
		p.Max = bound(*p.Max)
	}
	if s, ok := p.Default.([]string); ok {
		p.Default = append([]string(nil), s...)
	}
	return p
}

// hasEnum reports whether v is one of o's enum values.
func (o *option) hasEnum(v string) bool {
	for _, e := range o.Enum {
		if e == v {
			return true
		}
	}
	return false
}
