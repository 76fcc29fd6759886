package catalog

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// wantInvalid fails unless err is core.Invalid naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) || e.Kind != core.KindInvalid {
		t.Fatalf("want core.Invalid naming %s, got %v", field, err)
	}
	if e.Field != field {
		t.Fatalf("error names %q, want %q (%v)", e.Field, field, err)
	}
	if e.Reason == "" {
		t.Fatalf("error for %s has no reason", field)
	}
}

func decode1(name, raw string) (core.Options, error) {
	return DecodeOptions(map[string]json.RawMessage{name: json.RawMessage(raw)})
}

func TestDecodeOneOption(t *testing.T) {
	const uuid = "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b"
	cases := []struct {
		name, raw string
		ok        bool
		errField  string // when not ok; default name
	}{
		// booleans
		{"perspective", "true", true, ""},
		{"perspective", "false", true, ""},
		{"perspective", `"true"`, false, ""},
		{"perspective", "1", false, ""},
		{"perspective", "0", false, ""},
		{"perspective", "[]", false, ""},
		{"align", "false", true, ""},
		{"align", "tru", false, ""},
		{"sky", "true", true, ""},
		{"privacy", "{}", false, ""},
		{"tonecraft", "true", true, ""},
		{"tonecraft_levels", "false", true, ""},
		{"tonecraft_sharpen", `"no"`, false, ""},
		// numbers, both sides of each bound
		{"perspective_strength", "0", true, ""},
		{"perspective_strength", "1", true, ""},
		{"perspective_strength", "0.5", true, ""},
		{"perspective_strength", "-0.0001", false, ""},
		{"perspective_strength", "1.0001", false, ""},
		{"perspective_strength", `"0.5"`, false, ""},
		{"perspective_strength", "1e400", false, ""},
		{"perspective_strength", "true", false, ""},
		{"threshold", "0", true, ""},
		{"threshold", "1", true, ""},
		{"threshold", "0.3", true, ""},
		{"threshold", "-0.01", false, ""},
		{"threshold", "1.01", false, ""},
		{"threshold", "-0", true, ""},
		// integers
		{"quality", "1", true, ""},
		{"quality", "100", true, ""},
		{"quality", "0", false, ""},
		{"quality", "101", false, ""},
		{"quality", "-5", false, ""},
		{"quality", "92.5", false, ""},
		{"quality", "92.0", true, ""},
		{"quality", "1e2", true, ""},
		{"quality", "1e300", false, ""},
		{"quality", "99999999999999999999999", false, ""},
		{"quality", `"92"`, false, ""},
		// strings
		{"tonecraft_profile", `"signature"`, true, ""},
		{"tonecraft_profile", `"twilight"`, true, ""},
		{"tonecraft_profile", `"Signature"`, false, ""},
		{"tonecraft_profile", `"nope"`, false, ""},
		{"tonecraft_profile", `""`, false, ""},
		{"tonecraft_profile", "5", false, ""},
		{"staging_preset", `"modern_family"`, true, ""},
		{"staging_preset", `"Modern family"`, false, ""},
		{"style_clause", `"velvet sofas"`, true, ""},
		{"style_clause", `""`, true, ""},
		{"style_clause", `"` + strings.Repeat("a", 1500) + `"`, true, ""},
		{"style_clause", `"` + strings.Repeat("a", 1501) + `"`, false, ""},
		{"style_clause", `"` + strings.Repeat("é", 1500) + `"`, true, ""}, // characters, not bytes
		{"style_clause", `"` + strings.Repeat("é", 1501) + `"`, false, ""},
		{"style_clause", "[]", false, ""},
		// enums: wrong case and wrong type
		{"format", `"JPEG"`, false, ""},
		{"format", `"tiff"`, false, ""},
		{"format", "1", false, ""},
		{"gen_edit", `"declutter"`, false, ""},
		{"gen_edit", `""`, false, ""},
		{"sky_style", `"overcast"`, false, ""},
		{"room_type", `"garage"`, false, ""},
		// uuid
		{"mask", `"` + uuid + `"`, true, ""},
		{"mask", `"` + strings.ToUpper(uuid) + `"`, true, ""},
		{"mask", `"` + uuid[:35] + `"`, false, ""},
		{"mask", `"` + strings.ReplaceAll(uuid, "-", "") + `"`, false, ""},
		{"mask", `"{` + uuid + `}"`, false, ""},
		{"mask", `"urn:uuid:` + uuid + `"`, false, ""},
		{"mask", `"3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7g"`, false, ""},
		{"mask", `"mask.png"`, false, ""},
		{"mask", "12", false, ""},
		// arrays
		{"categories", `[]`, true, ""},
		{"categories", `["human face"]`, true, ""},
		{"categories", `["human face","license plate","photo or frame"]`, true, ""},
		{"categories", `"human face"`, false, ""},
		{"categories", `[""]`, false, "categories[0]"},
		{"categories", `["human face","  "]`, false, "categories[1]"},
		{"categories", `["human face",3]`, false, "categories[1]"},
		{"categories", `["human face",null]`, false, "categories[1]"},
		{"categories", `["license plate","dog"]`, false, "categories[1]"},
		{"categories", `{"a":1}`, false, ""},
		// unknown fields, including inputs
		{"inputs", `["` + uuid + `"]`, false, ""},
		{"Format", `"png"`, false, ""},
		{"max_edge", "100", false, ""},
	}
	for _, c := range cases {
		o, err := decode1(c.name, c.raw)
		label := c.name + "=" + c.raw
		if len(label) > 80 {
			label = label[:80]
		}
		if c.ok {
			if err != nil {
				t.Errorf("%s: %v", label, err)
				continue
			}
			if _, given := byName[c.name].get(o); !given {
				t.Errorf("%s: decoded but not set", label)
			}
			continue
		}
		field := c.errField
		if field == "" {
			field = c.name
		}
		t.Run(label, func(t *testing.T) { wantInvalid(t, err, field) })
	}
}

func TestDecodeEveryEnumValue(t *testing.T) {
	for _, p := range Params() {
		for _, v := range p.Enum {
			o, err := decode1(p.Name, `"`+v+`"`)
			if err != nil {
				t.Errorf("%s=%s: %v", p.Name, v, err)
				continue
			}
			if got, _ := byName[p.Name].get(o); got != v {
				t.Errorf("%s=%s decoded as %v", p.Name, v, got)
			}
		}
	}
}

func TestDecodeValuesAndNormalisation(t *testing.T) {
	o, err := DecodeOptions(map[string]json.RawMessage{
		"perspective":          json.RawMessage(" false "),
		"perspective_strength": json.RawMessage("0.25"),
		"quality":              json.RawMessage("75.0"),
		"categories":           json.RawMessage(`["License_Plate", " human  FACE ", "faces", "Photos or Frames"]`),
		"mask":                 json.RawMessage(`"3F2B8C1E-9A4D-4E6F-8B1A-2C3D4E5F6A7B"`),
		"sky":                  json.RawMessage("null"),
		"gen_edit":             json.RawMessage(`"magic_eraser"`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if o.Perspective == nil || *o.Perspective {
		t.Error("explicit false lost")
	}
	if *o.PerspectiveStrength != 0.25 || *o.Quality != 75 {
		t.Errorf("numbers %v %v", *o.PerspectiveStrength, *o.Quality)
	}
	if want := []string{"license plate", "human face", "photo or frame"}; !reflect.DeepEqual(o.Categories, want) {
		t.Errorf("categories %q, want %q (canonical, deduplicated, in order)", o.Categories, want)
	}
	if *o.Mask != "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b" {
		t.Errorf("mask %s", *o.Mask)
	}
	if o.Sky != nil {
		t.Error("null must count as omitted")
	}
	// An empty array is explicit (it asks for the defaults), not omitted.
	o, err = decode1("categories", "[]")
	if err != nil || o.Categories == nil || len(o.Categories) != 0 {
		t.Errorf("empty categories: %#v %v", o.Categories, err)
	}
	// Nothing at all decodes to nothing given.
	if o, err := DecodeOptions(nil); err != nil || !reflect.DeepEqual(o, core.Options{}) {
		t.Errorf("empty body: %+v %v", o, err)
	}
}

// With several bad fields the error is the same on every run.
func TestDecodeReportsFirstErrorDeterministically(t *testing.T) {
	body := map[string]json.RawMessage{
		"zeta":      json.RawMessage("1"),
		"quality":   json.RawMessage("0"),
		"format":    json.RawMessage(`"bmp"`),
		"threshold": json.RawMessage("2"),
	}
	for range 20 {
		_, err := DecodeOptions(body)
		wantInvalid(t, err, "format")
	}
}

func TestDecodeStrings(t *testing.T) {
	o, err := DecodeStrings(map[string]string{
		"perspective":          "true",
		"perspective-strength": "0.8",
		"sky":                  "1",
		"sky-style":            "clear",
		"quality":              "80",
		"categories":           "human face, license plate",
		"gen-edit":             "magic_eraser",
		"mask":                 "3f2b8c1e-9a4d-4e6f-8b1a-2c3d4e5f6a7b",
		"tonecraft_sharpen":    "false",
	})
	if err != nil {
		t.Fatal(err)
	}
	if !*o.Perspective || *o.PerspectiveStrength != 0.8 || !*o.Sky || *o.SkyStyle != "clear" || *o.Quality != 80 ||
		*o.GenEdit != "magic_eraser" || *o.TonecraftSharpen {
		t.Errorf("decoded %+v", o)
	}
	if !reflect.DeepEqual(o.Categories, []string{"human face", "license plate"}) {
		t.Errorf("categories %q", o.Categories)
	}
	if o, err := DecodeStrings(map[string]string{"categories": ""}); err != nil || o.Categories == nil || len(o.Categories) != 0 {
		t.Errorf("empty categories flag: %#v %v", o.Categories, err)
	}
	for _, c := range []struct{ key, val, field string }{
		{"perspective", "maybe", "perspective"},
		{"quality", "0", "quality"},
		{"quality", "9x", "quality"},
		{"quality", "50.5", "quality"},
		{"threshold", "NaN", "threshold"},
		{"threshold", "Inf", "threshold"},
		{"categories", "human face,,license plate", "categories[1]"},
		{"categories", "cats", "categories[0]"},
		{"format", "gif", "format"},
		{"mask", "nope", "mask"},
		{"style-clause", strings.Repeat("x", 1501), "style_clause"},
		{"output", "x.jpg", "output"},
	} {
		_, err := DecodeStrings(map[string]string{c.key: c.val})
		t.Run(c.key+"="+c.val[:min(len(c.val), 20)], func(t *testing.T) { wantInvalid(t, err, c.field) })
	}
}

// Validate catches bad values built in Go, which never went through decoding.
func TestValidateGoBuiltOptions(t *testing.T) {
	nan := 0.0
	nan = nan / nan
	q := 0
	bad := "sepia"
	cases := []struct {
		o     core.Options
		field string
	}{
		{core.Options{Threshold: &nan}, "threshold"},
		{core.Options{Quality: &q}, "quality"},
		{core.Options{Format: &bad}, "format"},
		{core.Options{TonecraftProfile: &bad}, "tonecraft_profile"},
		{core.Options{Categories: []string{"human face", ""}}, "categories[1]"},
		{core.Options{Mask: &bad}, "mask"},
	}
	for _, c := range cases {
		wantInvalid(t, Validate(c.o), c.field)
		_, err := Resolve(c.o, false)
		wantInvalid(t, err, c.field)
	}
	invalidUTF8 := "a\xffb"
	wantInvalid(t, Validate(core.Options{StyleClause: &invalidUTF8}), "style_clause")
	if err := Validate(core.Options{}); err != nil {
		t.Error(err)
	}
}

func TestConcept(t *testing.T) {
	for in, want := range map[string]string{
		"human face": "human face", "HUMAN FACE": "human face", "human_face": "human face",
		"Human-Face": "human face", "  human\tface ": "human face", "faces": "human face",
		"licence plate": "license plate", "license-plates": "license plate",
		"photo or frame": "photo or frame", "Picture frame": "photo or frame",
	} {
		if got, ok := Concept(in); !ok || got != want {
			t.Errorf("Concept(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "dog", "street sign", "human", "plate", "humanface", "photo or frame or dog"} {
		if got, ok := Concept(in); ok {
			t.Errorf("Concept(%q) accepted as %q", in, got)
		}
	}
}
