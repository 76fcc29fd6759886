package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/gorilla/mux"

	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

func loadDoc(t *testing.T, raw []byte) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatalf("kin-openapi cannot load openapi.json: %v", err)
	}
	return doc
}

func newOfflineServer(t *testing.T) *Server {
	t.Helper()
	db, err := store.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s, err := newServer(Config{Listen: "127.0.0.1:0"}, Deps{Keys: keys.New(db)}, (*Server).testRoutes)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestOpenAPIDocumentValidates(t *testing.T) {
	s := newOfflineServer(t)
	doc := loadDoc(t, s.openapiJSON)
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("document version %q", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.json does not validate: %v", err)
	}
	// Spot checks of what the document must say.
	keysOp := doc.Paths.Find("/v1/api-keys").Post
	if keysOp.Responses.Status(201) == nil || keysOp.Responses.Status(403) == nil || keysOp.Responses.Status(429) == nil {
		t.Error("POST /v1/api-keys lacks 201, 403 or 429")
	}
	if h := keysOp.Responses.Status(429).Value.Headers; h["Retry-After"] == nil || h[HeaderRateReset] == nil {
		t.Errorf("429 headers %v", h)
	}
	if keysOp.Responses.Status(401).Value.Headers[HeaderRateLimit] != nil {
		t.Error("401 documents rate headers it never carries")
	}
	feat := doc.Paths.Find("/v1/features").Get
	if feat.Security == nil || len(*feat.Security) != 0 {
		t.Error("/v1/features is not documented as public")
	}
	if feat.Responses.Status(200).Value.Headers[HeaderRateLimit] != nil {
		t.Error("a public route documents rate headers")
	}
	if doc.Components.SecuritySchemes["apiKey"].Value.Name != HeaderAPIKey {
		t.Error("security scheme")
	}
	for _, name := range []string{"Key", "Feature", "Preset", "ErrorEnvelope"} {
		if doc.Components.Schemas[name] == nil {
			t.Errorf("component schema %s missing", name)
		}
	}
}

// Every order option in the order and batch request bodies carries the table's
// description, so a client generated from the document explains each option.
func TestOpenAPIDescribesEveryOption(t *testing.T) {
	doc := loadDoc(t, startFull(t).srv.openapiJSON)
	body := func(path string) *openapi3.Schema {
		op := doc.Paths.Find(path).Post
		if op == nil || op.RequestBody == nil {
			t.Fatalf("POST %s has no request body", path)
		}
		return op.RequestBody.Value.Content.Get("application/json").Schema.Value
	}
	order, batch := body("/v1/orders"), body("/v1/batches")
	scene := batch.Properties["scenes"].Value.Items.Value
	for _, p := range catalog.Params() {
		for where, props := range map[string]openapi3.Schemas{
			"order": order.Properties, "batch": batch.Properties, "batch scene": scene.Properties,
		} {
			ref, ok := props[p.Name]
			if !ok {
				if p.Name != "style_clause" || where == "order" {
					t.Errorf("%s: %s missing", where, p.Name)
				}
				continue
			}
			if got := ref.Value.Description; got == "" || got != p.Description {
				t.Errorf("%s: %s description %q, want %q", where, p.Name, got, p.Description)
			}
		}
	}
}

// routerOperations lists "METHOD /path" of every route the mux serves.
func routerOperations(t *testing.T, r *mux.Router) []string {
	t.Helper()
	var out []string
	err := r.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil {
			return err
		}
		methods, err := route.GetMethods()
		if err != nil {
			return err
		}
		for _, m := range methods {
			out = append(out, m+" "+docPath(tpl))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// documentedOperations lists "METHOD /path" of every operation in the document.
func documentedOperations(t *testing.T, raw []byte) []string {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for p, ops := range doc.Paths {
		for m := range ops {
			out = append(out, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(out)
	return out
}

// drift reports operations on one side only.
func drift(served, documented []string) (undocumented, phantom []string) {
	for _, op := range served {
		if !slices.Contains(documented, op) {
			undocumented = append(undocumented, op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(served, op) {
			phantom = append(phantom, op)
		}
	}
	return
}

func TestOpenAPIMatchesTheRouter(t *testing.T) {
	s := newOfflineServer(t)
	served, documented := routerOperations(t, s.router), documentedOperations(t, s.openapiJSON)
	undoc, phantom := drift(served, documented)
	if len(undoc) > 0 {
		t.Errorf("routes missing from openapi.json: %q", undoc)
	}
	if len(phantom) > 0 {
		t.Errorf("openapi.json names routes that do not exist: %q", phantom)
	}
	for _, want := range []string{"GET /v1/features", "POST /v1/api-keys", "DELETE /v1/api-keys/{uuid}", "POST /v1/api-keys/rotate", "HEAD /v1/presets"} {
		if !slices.Contains(documented, want) {
			t.Errorf("%s not documented", want)
		}
	}

	if slices.Contains(served, "HEAD /v1/test/stream") {
		t.Error("an event stream answers HEAD")
	}

	// The check itself catches both directions of drift.
	s.router.HandleFunc("/v1/sneaky", func(http.ResponseWriter, *http.Request) {}).Methods("GET")
	var doc map[string]any
	json.Unmarshal(s.openapiJSON, &doc)
	delete(doc["paths"].(map[string]any), "/healthz")
	doc["paths"].(map[string]any)["/v1/ghost"] = map[string]any{"get": map[string]any{}}
	edited, _ := json.Marshal(doc)
	undoc, phantom = drift(routerOperations(t, s.router), documentedOperations(t, edited))
	if !slices.Contains(undoc, "GET /v1/sneaky") || !slices.Contains(undoc, "GET /healthz") || !slices.Contains(phantom, "GET /v1/ghost") {
		t.Errorf("drift not detected: undocumented %q, phantom %q", undoc, phantom)
	}
}

func TestOperationIDsAndPaths(t *testing.T) {
	if got := operationID("DELETE", "/v1/api-keys/{uuid}"); got != "deleteV1ApiKeysByUuid" {
		t.Errorf("operationID %q", got)
	}
	if got := docPath("/v1/assets/{id:[0-9a-f-]+}/status"); got != "/v1/assets/{id}/status" {
		t.Errorf("docPath %q", got)
	}
	if !pathBefore("/v1/api-keys/rotate", "/v1/api-keys/{uuid}") || pathBefore("/v1/api-keys/{uuid}", "/v1/api-keys/rotate") {
		t.Error("literal segments must sort before variables")
	}
}

// docValidator checks real answers against the document the server serves.
type docValidator struct {
	once   sync.Once
	router routers.Router
	err    error
}

func (v *docValidator) check(t *testing.T, raw []byte, req *http.Request, r *resp) {
	t.Helper()
	v.once.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromData(raw)
		if err != nil {
			v.err = err
			return
		}
		v.router, v.err = gorillamux.NewRouter(doc)
	})
	if v.err != nil {
		t.Fatalf("document router: %v", v.err)
	}
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return // unknown path or method: the 404/405 answers, checked by the envelope
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 r.Code,
		Header:                 r.Header,
		Body:                   io.NopCloser(bytes.NewReader(r.Body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s answered %d, which the document does not describe: %v", req.Method, req.URL.Path, r.Code, err)
	}
}
