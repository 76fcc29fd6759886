package catalog

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// Every field of core.Options and core.Resolved is an option of the table, and every
// option of the table is a field of both.
func TestTableCoversCoreOptions(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[core.Options](), reflect.TypeFor[core.Resolved]()} {
		tags := jsonFields(typ)
		if len(tags) != len(options) {
			t.Errorf("%s has %d json fields, table has %d options", typ, len(tags), len(options))
		}
		for name := range tags {
			if _, ok := byName[name]; !ok {
				t.Errorf("%s.%s is not in the option table", typ, name)
			}
		}
	}
	if _, ok := byName["inputs"]; ok {
		t.Error("inputs must not be an option")
	}
}

// Every option says what it does in one short sentence, which --help prints on the
// flag's line and the OpenAPI document gives as the property's description.
func TestEveryOptionIsDescribed(t *testing.T) {
	for _, p := range Params() {
		d := p.Description
		switch {
		case d == "":
			t.Errorf("%s: no description", p.Name)
		case strings.ContainsAny(d, "\n\t"):
			t.Errorf("%s: description spans lines: %q", p.Name, d)
		case !strings.HasSuffix(d, ".") || strings.Count(d, ". ") > 0:
			t.Errorf("%s: description is not one sentence: %q", p.Name, d)
		case len(d) > 220:
			t.Errorf("%s: description is %d characters, keep it short: %q", p.Name, len(d), d)
		}
	}
}

// The option names, types, defaults, enums and bounds, as the spec's Order options
// table gives them.
func TestTableMatchesSpec(t *testing.T) {
	type row struct {
		typ      string
		def      any
		enum     string // comma-separated
		min, max any
		maxLen   int
	}
	spec := map[string]row{
		"gen_edit":             {typ: "enum", enum: "indoor_staging,outdoor_staging,mess_cleaner,magic_eraser,declutter_local"},
		"perspective":          {typ: "boolean", def: false},
		"perspective_strength": {typ: "number", def: 1.0, min: 0.0, max: 1.0},
		"tonecraft":            {typ: "boolean", def: false},
		"tonecraft_profile":    {typ: "string", def: "signature"},
		"tonecraft_levels":     {typ: "boolean"},
		"tonecraft_sharpen":    {typ: "boolean"},
		"align":                {typ: "boolean", def: true},
		"format":               {typ: "enum", def: "jpeg", enum: "jpeg,png,webp"},
		"quality":              {typ: "integer", def: 92, min: 1.0, max: 100.0},
		"sky":                  {typ: "boolean", def: false},
		"sky_style":            {typ: "enum", def: "high_cloud", enum: "clear,low_cloud,neutral,high_cloud"},
		"privacy":              {typ: "boolean", def: false},
		"categories":           {typ: "array", def: []string{"human face", "license plate", "photo or frame"}},
		"threshold":            {typ: "number", def: 0.3, min: 0.0, max: 1.0},
		"gen_quality":          {typ: "enum", def: "balanced", enum: "fast,balanced,best"},
		"staging_preset":       {typ: "string"},
		"staging_style":        {typ: "enum", def: "contemporary", enum: "keep,contemporary,modern,scandinavian,luxury,ikea,industrial"},
		"style_clause":         {typ: "string", maxLen: 1500},
		"room_type":            {typ: "enum", def: "auto", enum: "auto,bathroom,bedroom,child_room,dining_room,kitchen,living_room,office,terrace"},
		"floor_finish":         {typ: "enum", def: "keep", enum: "keep,carpet_dark_blue,carpet_grey,concrete_light_grey,hardwood_aria,hardwood_light_brown,tiles_grey,tiles_white"},
		"wall_color":           {typ: "enum", def: "keep", enum: "keep,white,warm_white,cream,greige,light_grey,sand,taupe,sage_green,olive,powder_blue,terracotta,charcoal"},
		"mask":                 {typ: "uuid"},
		"color_correction":     {typ: "boolean"},
		"lens_correction":      {typ: "boolean"},
		"flambient":            {typ: "boolean"},
		"shoot_consistency":    {typ: "boolean", def: true},
		"exposure":             {typ: "number", def: 0.0, min: -5.0, max: 5.0},
		"temperature":          {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"tint":                 {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"contrast":             {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"highlights":           {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"shadows":              {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"whites":               {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"blacks":               {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"vibrance":             {typ: "number", def: 0.0, min: -100.0, max: 100.0},
		"saturation":           {typ: "number", def: 0.0, min: -100.0, max: 100.0},
	}
	params := Params()
	if len(params) != len(spec) {
		t.Fatalf("table has %d options, spec %d", len(params), len(spec))
	}
	for _, p := range params {
		want, ok := spec[p.Name]
		if !ok {
			t.Errorf("%s is not a spec option", p.Name)
			continue
		}
		if p.Type != want.typ {
			t.Errorf("%s: type %s, want %s", p.Name, p.Type, want.typ)
		}
		if !reflect.DeepEqual(p.Default, want.def) {
			t.Errorf("%s: default %#v, want %#v", p.Name, p.Default, want.def)
		}
		if got := strings.Join(p.Enum, ","); got != want.enum {
			t.Errorf("%s: enum %s, want %s", p.Name, got, want.enum)
		}
		if (p.Min == nil) != (want.min == nil) || p.Min != nil && *p.Min != want.min.(float64) {
			t.Errorf("%s: min %v, want %v", p.Name, p.Min, want.min)
		}
		if (p.Max == nil) != (want.max == nil) || p.Max != nil && *p.Max != want.max.(float64) {
			t.Errorf("%s: max %v, want %v", p.Name, p.Max, want.max)
		}
		if p.MaxLength != want.maxLen {
			t.Errorf("%s: maxLength %d, want %d", p.Name, p.MaxLength, want.maxLen)
		}
	}
}

// Every default passes the validation of its own option, through JSON as a client
// would send it.
func TestDefaultsPassTheirOwnValidation(t *testing.T) {
	for _, p := range Params() {
		if p.Default == nil {
			continue
		}
		raw, err := json.Marshal(p.Default)
		if err != nil {
			t.Fatal(err)
		}
		o, err := DecodeOptions(map[string]json.RawMessage{p.Name: raw})
		if err != nil {
			t.Errorf("%s: default %s refused: %v", p.Name, raw, err)
			continue
		}
		if _, err := Resolve(o, false); err != nil {
			t.Errorf("%s: default %s does not resolve: %v", p.Name, raw, err)
		}
		if _, err := DecodeStrings(map[string]string{p.Name: flagText(p.Default)}); err != nil {
			t.Errorf("%s: default as text refused: %v", p.Name, err)
		}
	}
}

func flagText(v any) string {
	if s, ok := v.([]string); ok {
		return strings.Join(s, ",")
	}
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// The catalog's parameters per feature are exactly the spec's feature-to-option
// mapping.
func TestFeatureParametersAreTheMapping(t *testing.T) {
	mapping := map[string][]string{
		"enhancer":        {"perspective", "perspective_strength", "tonecraft", "tonecraft_profile", "tonecraft_levels", "tonecraft_sharpen", "align", "format", "quality", "color_correction", "lens_correction", "flambient", "shoot_consistency", "exposure", "temperature", "tint", "contrast", "highlights", "shadows", "whites", "blacks", "vibrance", "saturation"},
		"auto_hdr":        {"align", "format", "quality", "color_correction", "lens_correction", "flambient", "shoot_consistency", "exposure", "temperature", "tint", "contrast", "highlights", "shadows", "whites", "blacks", "vibrance", "saturation"},
		"sky_replacement": {"sky", "sky_style"},
		"privacy_blur":    {"privacy", "categories", "threshold"},
		"indoor_staging":  {"gen_quality", "staging_preset", "staging_style", "style_clause", "room_type", "floor_finish", "wall_color"},
		"outdoor_staging": {"gen_quality"},
		"mess_cleaner":    {"gen_quality"},
		"declutter":       {},
		"magic_eraser":    {"mask"},
	}
	fs := Features(nil)
	var keys []string
	for _, f := range fs {
		keys = append(keys, f.Key)
		var names []string
		for _, p := range f.Parameters {
			names = append(names, p.Name)
			if tp, _ := LookupParam(p.Name); !reflect.DeepEqual(tp, p) {
				t.Errorf("%s.%s differs from the table: %+v vs %+v", f.Key, p.Name, p, tp)
			}
		}
		if !slices.Equal(names, mapping[f.Key]) {
			t.Errorf("%s parameters %v, want %v", f.Key, names, mapping[f.Key])
		}
	}
	want := []string{"enhancer", "auto_hdr", "sky_replacement", "privacy_blur", "indoor_staging", "outdoor_staging", "mess_cleaner", "declutter", "magic_eraser"}
	if !slices.Equal(keys, want) || !slices.Equal(FeatureKeys(), want) {
		t.Errorf("features %v, want %v", keys, want)
	}
}

func TestFeaturesRecipesCategoriesAvailability(t *testing.T) {
	want := map[string][4]string{ // category, recipe, version, available without backends
		"enhancer":        {"enhancement", "develop", "1.3.0", "true"},
		"auto_hdr":        {"enhancement", "develop", "1.3.0", "true"},
		"sky_replacement": {"enhancement", "sky", "4.1.0", "true"},
		"privacy_blur":    {"enhancement", "privacy", "1.1.0", "true"},
		"indoor_staging":  {"staging", "indoor_staging", "1.18.0", "false"},
		"outdoor_staging": {"staging", "outdoor_staging", "1.9.0", "false"},
		"mess_cleaner":    {"enhancement", "mess_cleaner", "1.8.0", "false"},
		"declutter":       {"enhancement", "declutter_local", "2.2.0", "false"},
		"magic_eraser":    {"inpainting", "magic_eraser", "4.2.0", "true"},
	}
	for _, f := range Features(nil) {
		w := want[f.Key]
		got := [4]string{f.Category, f.Recipe, f.Version, map[bool]string{true: "true", false: "false"}[f.Available]}
		if got != w {
			t.Errorf("%s: %v, want %v", f.Key, got, w)
		}
		if f.NeedsBackend == f.Available {
			t.Errorf("%s: NeedsBackend %v with nil available func", f.Key, f.NeedsBackend)
		}
	}
	// An available func decides for every feature, backend or not.
	for _, f := range Features(func(k string) bool { return k == "declutter" }) {
		if f.Available != (f.Key == "declutter") {
			t.Errorf("%s: available %v", f.Key, f.Available)
		}
	}
}

func TestFeatureJSONShape(t *testing.T) {
	b, err := json.Marshal(Features(nil))
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if keys := sortedKeys(f); !slices.Equal(keys, []string{"available", "category", "key", "parameters", "recipe", "version"}) {
			t.Fatalf("feature keys %v", keys)
		}
		params := f["parameters"].([]any)
		if f["key"] == "declutter" && len(params) != 0 {
			t.Errorf("declutter parameters %v", params)
		}
		for _, p := range params {
			pm := p.(map[string]any)
			for _, k := range sortedKeys(pm) {
				if !slices.Contains([]string{"name", "type", "default", "enum", "min", "max", "maxLength"}, k) {
					t.Errorf("%s: unexpected param key %s", pm["name"], k)
				}
			}
			if _, ok := pm["default"]; !ok {
				t.Errorf("%s: no default member", pm["name"])
			}
		}
	}
	// Bounds of 0 still show (a pointer, not omitempty on zero).
	var strength map[string]any
	for _, p := range got[0]["parameters"].([]any) {
		if pm := p.(map[string]any); pm["name"] == "perspective_strength" {
			strength = pm
		}
	}
	if strength["min"] != 0.0 || strength["max"] != 1.0 || strength["default"] != 1.0 {
		t.Errorf("perspective_strength JSON %v", strength)
	}
}

// Callers get copies: changing what they receive does not change the table.
func TestParamsAreCopies(t *testing.T) {
	p := Params()
	p[8].Enum[0] = "tiff"
	*p[2].Max = 7
	p[13].Default.([]string)[0] = "cat"
	f := Features(nil)
	f[0].Parameters[1].Name = "x"
	q, _ := LookupParam("format")
	if q.Enum[0] != "jpeg" {
		t.Error("format enum changed through Params")
	}
	if s, _ := LookupParam("perspective_strength"); *s.Max != 1 {
		t.Error("bound changed through Params")
	}
	if DefaultCategories[0] != "human face" {
		t.Error("default categories changed through Params")
	}
	r, err := Resolve(core.Options{}, false)
	if err != nil || r.Categories[0] != "human face" {
		t.Errorf("resolve after mutation: %v %v", r.Categories, err)
	}
	r.Categories[0] = "dog"
	if DefaultCategories[0] != "human face" {
		t.Error("default categories changed through Resolve")
	}
}

func TestGenEditFeatureAndRecipes(t *testing.T) {
	for ge, want := range map[string]string{
		"indoor_staging": "indoor_staging", "outdoor_staging": "outdoor_staging",
		"mess_cleaner": "mess_cleaner", "magic_eraser": "magic_eraser", "declutter_local": "declutter",
	} {
		if got, ok := GenEditFeature(ge); !ok || got != want {
			t.Errorf("GenEditFeature(%s) = %s %v", ge, got, ok)
		}
	}
	if _, ok := GenEditFeature("sky"); ok {
		t.Error("sky is not a gen_edit value")
	}
	// Every gen_edit enum value selects a feature.
	ge, _ := LookupParam("gen_edit")
	for _, v := range ge.Enum {
		if _, ok := GenEditFeature(v); !ok {
			t.Errorf("gen_edit %s selects no feature", v)
		}
	}
	rs := Recipes()
	if len(rs) != 8 || rs["develop"] != "1.3.0" || rs["declutter_local"] != "2.2.0" {
		t.Errorf("recipes %v", rs)
	}
	rs["develop"] = "9"
	if v, _ := RecipeVersion("develop"); v != "1.3.0" {
		t.Error("Recipes returned the table itself")
	}
}
