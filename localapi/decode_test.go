package localapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
)

// orderBody has the shape of an order or batch request: inputs, the options
// inlined, and scenes that repeat them.
type orderBody struct {
	Inputs []string `json:"inputs"`
	Name   string   `json:"name,omitempty"`
	core.Options
	Scenes []struct {
		Inputs []string `json:"inputs"`
		core.Options
	} `json:"scenes,omitempty"`
}

func TestDecodeJSONBytes(t *testing.T) {
	var ok orderBody
	err := DecodeJSONBytes([]byte(`{"inputs": ["a"], "quality": 90, "sky": true, "categories": ["human face"],
		"scenes": [{"inputs": ["b"], "format": "png"}]}`), &ok)
	if err != nil {
		t.Fatal(err)
	}
	if *ok.Quality != 90 || !*ok.Sky || ok.Scenes[0].Inputs[0] != "b" || *ok.Scenes[0].Format != "png" {
		t.Fatalf("decoded %+v", ok)
	}
	for body, field := range map[string]string{
		`{"inputs": ["a"], "brightness_boost": 2}`:           "brightness_boost",
		`{"inputs": "a"}`:                                    "inputs",
		`{"inputs": ["a", 3]}`:                               "inputs[1]",
		`{"quality": "92"}`:                                  "quality",
		`{"quality": 92.5}`:                                  "quality",
		`{"quality": 99999999999999999999}`:                  "quality",
		`{"perspective_strength": "1"}`:                      "perspective_strength",
		`{"scenes": [{}, {"inputs": ["x"], "sky": "yes"}]}`:  "scenes[1].sky",
		`{"scenes": [{"inputs": ["x"], "teleport": true}]}`:  "scenes[0].teleport",
		`{"scenes": {"inputs": []}}`:                         "scenes",
		`{"inputs": ["a"]} trailing`:                         "body",
		`{"inputs": [}`:                                      "body",
		`"just a string"`:                                    "body",
		`null`:                                               "body",
		`   `:                                                "body",
		`{"Inputs": ["a"]}`:                                  "Inputs",
		`{"inputs": ["a"], "inputs": ["b"], "gen_edit": 1}`:  "gen_edit",
		`{"scenes": [{"inputs": ["x"], "categories": [1]}]}`: "scenes[0].categories[0]",
	} {
		var dst orderBody
		err := DecodeJSONBytes([]byte(body), &dst)
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Kind != core.KindInvalid {
			t.Errorf("%s: error %v, want core.Invalid", body, err)
			continue
		}
		if ce.Field != field {
			t.Errorf("%s: field %q (%v), want %q", body, ce.Field, err, field)
		}
	}
	if err := DecodeJSONBytes([]byte(`{}`), orderBody{}); err == nil || core.KindOf(err) != core.KindInternal {
		t.Errorf("non-pointer destination: %v", err)
	}
}

func TestDecodeJSONRequest(t *testing.T) {
	req := func(ct, body string) *http.Request {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		if ct != "" {
			r.Header.Set("Content-Type", ct)
		}
		return r
	}
	var dst orderBody
	for _, tc := range []struct {
		ct, body string
		status   int
	}{
		{"application/json", `{"inputs": ["a"]}`, 0},
		{"application/json; charset=utf-8", `{"inputs": ["a"]}`, 0},
		{"", `{"inputs": ["a"]}`, 415},
		{"text/plain", `{"inputs": ["a"]}`, 415},
		{"application/jsonx", `{"inputs": ["a"]}`, 415},
		{"application/json", ``, 400},
		{"application/json", `{"inputs": ["a"], "x": 1}`, 400},
	} {
		err := DecodeJSON(req(tc.ct, tc.body), &dst)
		got := 0
		if err != nil {
			got = StatusOf(err)
		}
		if got != tc.status {
			t.Errorf("%q %q: status %d (%v), want %d", tc.ct, tc.body, got, err, tc.status)
		}
	}
	// Over the limit the route wrapper sets: 413.
	rec := httptest.NewRecorder()
	r := req("application/json", `{"inputs": ["`+strings.Repeat("a", 200)+`"]}`)
	r.Body = http.MaxBytesReader(rec, r.Body, 100)
	if err := DecodeJSON(r, &dst); StatusOf(err) != 413 || !strings.Contains(err.Error(), "body") {
		t.Errorf("oversized body: %v", err)
	}
}

// FuzzDecodeBody feeds arbitrary bytes through the body decoder and the order
// option decoder. Neither may panic; every refusal is a typed 400 naming a
// field; what is accepted survives a round trip unchanged.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"inputs": ["6f1c1b8e-3f4a-4c2e-9b7a-1a2b3c4d5e6f"], "perspective": true, "perspective_strength": 0.5}`,
		`{"inputs": [], "quality": 101, "format": "gif"}`,
		`{"inputs": ["a"], "gen_edit": "indoor_staging", "staging_style": "keep", "style_clause": "oak"}`,
		`{"name": "b", "scenes": [{"inputs": ["a"], "format": "png"}, {"inputs": ["b"], "sky": false}]}`,
		`{"categories": ["human face", "license plate"], "threshold": 1e-9}`,
		`{"quality": -0, "threshold": 1E+2, "mask": null}`,
		`{"inputs": ["a"]}{"inputs": ["b"]}`,
		`{"\u0000": 1}`, `[1,2,3]`, `{"scenes": [[]]}`, `{"inputs": [1.5e308]}`, "{\"name\": \"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		watchdog := time.AfterFunc(3*time.Second, func() { panic(fmt.Sprintf("WATCHDOG slow input %q", data)) })
		defer watchdog.Stop()
		var body orderBody
		err := DecodeJSONBytes(data, &body)
		if err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Field == "" || ce.Reason == "" {
				t.Fatalf("refusal %v (%T) is not a core.Invalid naming a field", err, err)
			}
		} else {
			again, err := json.Marshal(body)
			if err != nil {
				t.Fatalf("accepted value does not encode: %v", err)
			}
			var back orderBody
			if err := DecodeJSONBytes(again, &back); err != nil {
				t.Fatalf("re-encoded body %s refused: %v", again, err)
			}
			if !reflect.DeepEqual(normal(t, body), normal(t, back)) {
				t.Fatalf("round trip changed the value:\n%+v\n%+v", body, back)
			}
		}

		// The order path: fields as raw JSON, then the option table.
		var fields map[string]json.RawMessage
		if err := DecodeJSONBytes(data, &fields); err != nil {
			if core.KindOf(err) != core.KindInvalid {
				t.Fatalf("raw fields refusal %v is not core.Invalid", err)
			}
			return
		}
		delete(fields, "inputs")
		delete(fields, "name")
		delete(fields, "scenes")
		if _, err := catalog.DecodeOptions(fields); err != nil {
			var ce *core.Error
			if !errors.As(err, &ce) || ce.Kind != core.KindInvalid || ce.Field == "" {
				t.Fatalf("option refusal %v is not a core.Invalid naming a field", err)
			}
		}
	})
}

// normal re-encodes a value so nil and empty slices compare alike.
func normal(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(b, &out)
	return out
}
