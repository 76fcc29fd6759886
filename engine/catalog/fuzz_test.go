package catalog

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/porchlight/porchlight/core"
)

// FuzzDecodeOptions feeds arbitrary request bodies through DecodeOptions and
// Resolve. Neither may panic; every refusal is core.Invalid naming a field; and an
// accepted body, encoded again and decoded, resolves to the same settings.
func FuzzDecodeOptions(f *testing.F) {
	for _, seed := range []string{
		`{}`,
		`{"perspective":true,"perspective_strength":0.5,"quality":92}`,
		`{"quality":1e2,"threshold":-0,"format":"webp"}`,
		`{"categories":["Human_Face","licence plates"],"privacy":true}`,
		`{"categories":[]}`,
		`{"gen_edit":"indoor_staging","staging_preset":"modern_family","staging_style":"keep","wall_color":"white"}`,
		`{"staging_preset":"finishes_refresh","style_clause":"  "}`,
		`{"gen_edit":"magic_eraser","mask":"3F2B8C1E-9A4D-4E6F-8B1A-2C3D4E5F6A7B"}`,
		`{"tonecraft":true,"tonecraft_profile":"twilight","tonecraft_levels":false}`,
		`{"sky":null,"mask":"x","inputs":[]}`,
		`{"quality":"92","align":1}`,
		`{"style_clause":"\u00e9\u00e9","staging_style":"luxury"}`,
	} {
		f.Add([]byte(seed), false)
	}
	f.Fuzz(func(t *testing.T, data []byte, inBatch bool) {
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) != nil {
			return
		}
		o, err := DecodeOptions(fields)
		if err != nil {
			mustBeInvalid(t, err)
			return
		}
		if err := Validate(o); err != nil {
			t.Fatalf("decoded options fail Validate: %v", err)
		}
		r, err := Resolve(o, inBatch)
		if err != nil {
			mustBeInvalid(t, err)
			return
		}
		RecipesFor(r, 1)
		// Round trip: encoding the decoded options and decoding again is stable.
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var again map[string]json.RawMessage
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatal(err)
		}
		o2, err := DecodeOptions(again)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", b, err)
		}
		r2, err := Resolve(o2, inBatch)
		if err != nil {
			t.Fatalf("re-resolving %s: %v", b, err)
		}
		if !reflect.DeepEqual(r, r2) {
			t.Fatalf("round trip changed the settings:\n%+v\n%+v", r, r2)
		}
		// Merging over itself changes nothing.
		if r3, err := Resolve(Merge(o, o), inBatch); err != nil || !reflect.DeepEqual(r, r3) {
			t.Fatalf("Merge(o, o) resolved differently: %v", err)
		}
	})
}

func mustBeInvalid(t *testing.T, err error) {
	t.Helper()
	var e *core.Error
	if !errors.As(err, &e) || e.Kind != core.KindInvalid || e.Field == "" || e.Reason == "" {
		t.Fatalf("refusal is not core.Invalid with a field and a reason: %#v", err)
	}
}
