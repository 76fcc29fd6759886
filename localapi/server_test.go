package localapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/catalog"
	"github.com/porchlight/porchlight/engine/keys"
	"github.com/porchlight/porchlight/engine/store"
)

func TestPublicEndpoints(t *testing.T) {
	e := startServer(t)
	r := e.do("GET", "/healthz", "", nil)
	e.want(r, 200)
	if string(r.Body) != `{"data":{"status":"ok"}}`+"\n" {
		t.Errorf("healthz body %s", r.Body)
	}
	r = e.do("GET", "/v1/features", "", nil)
	e.want(r, 200)
	feats, _ := r.data()["features"].([]any)
	if len(feats) != len(catalog.FeatureKeys()) || len(feats) != 9 {
		t.Fatalf("features: %d entries", len(feats))
	}
	avail := map[string]bool{}
	for _, f := range feats {
		m := f.(map[string]any)
		avail[m["key"].(string)] = m["available"].(bool)
	}
	if !avail["enhancer"] || avail["indoor_staging"] {
		t.Errorf("with no Available func: %v", avail)
	}
	r = e.do("GET", "/openapi.json", "", nil)
	e.want(r, 200)
	if r.JSON["openapi"] != OpenAPIVersion {
		t.Errorf("openapi.json: openapi %v", r.JSON["openapi"])
	}
	for _, p := range []string{"/healthz", "/v1/features", "/openapi.json"} {
		for _, key := range []string{"", "sk-not-a-real-key-at-all"} {
			r := e.do("GET", p, key, nil)
			if r.Code != 200 || hasRateHeaders(r.Header) {
				t.Errorf("GET %s (key %q): %d, rate headers %v", p, key, r.Code, hasRateHeaders(r.Header))
			}
		}
	}
}

func TestFeaturesAvailabilityFromDeps(t *testing.T) {
	db := startServer(t) // only for its keys service
	srv, err := New(Config{Listen: "127.0.0.1:0"}, Deps{Keys: db.keys, Available: func(k string) bool { return k == "indoor_staging" }})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "http://127.0.0.1:1234/v1/features", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"key":"indoor_staging","category":"staging","recipe":"indoor_staging","version":"1.18.0"`) ||
		!strings.Contains(rec.Body.String(), `"available":true`) {
		t.Fatalf("%d %s", rec.Code, rec.Body.String())
	}
	for _, f := range catalog.Features(srv.deps.Available) {
		if f.Available != (f.Key == "indoor_staging") {
			t.Errorf("%s available=%v", f.Key, f.Available)
		}
	}
}

func TestAuthentication(t *testing.T) {
	e := startServer(t)
	_, std := e.newKey("standard", core.ScopeStandard)
	flipped := []byte(std)
	flipped[len(flipped)-1] ^= 1
	for _, key := range []string{"", "pk-" + strings.Repeat("a", 40), strings.TrimPrefix(std, "sk-"), string(flipped), "sk-" + strings.Repeat("z", 43)} {
		for _, rq := range [][2]string{{"GET", "/v1/presets?feature=tonecraft"}, {"POST", "/v1/api-keys/rotate"}, {"GET", "/v1/api-keys"}} {
			r := e.do(rq[0], rq[1], key, nil)
			e.want(r, 401)
			if hasRateHeaders(r.Header) {
				t.Errorf("%s %s with key %q: 401 carries rate headers", rq[0], rq[1], key)
			}
		}
	}
	if r := e.do("GET", "/v1/presets?feature=tonecraft", "", nil); !strings.Contains(r.reason(), "missing") {
		t.Errorf("missing key reason %q", r.reason())
	}

	// A standard key on admin endpoints: 403, nothing done, no budget spent.
	victim, victimSecret := e.newKey("victim", core.ScopeStandard)
	for _, rq := range []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/api-keys", nil},
		{"POST", "/v1/api-keys", map[string]any{"name": "x", "scope": "admin"}},
		{"DELETE", "/v1/api-keys/" + victim.UUID, nil},
	} {
		r := e.do(rq.method, rq.path, std, rq.body)
		e.want(r, 403, "admin")
		if hasRateHeaders(r.Header) {
			t.Errorf("%s %s: 403 carries rate headers", rq.method, rq.path)
		}
	}
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", victimSecret, nil), 200)
	if list, _ := e.keys.List(); len(list) != 3 {
		t.Errorf("%d keys after refused admin calls, want 3", len(list))
	}
	// The first accepted write still sees a full budget.
	r := e.do("POST", "/v1/test/echo", std, map[string]any{"name": "a"})
	e.want(r, 200)
	if r.Header.Get(HeaderRateRemaining) != "59" {
		t.Errorf("remaining %q after refused calls, want 59", r.Header.Get(HeaderRateRemaining))
	}
}

func TestKeyManagement(t *testing.T) {
	e := startServer(t)

	// Create.
	r := e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "laptop", "scope": "standard"})
	e.want(r, 201)
	d := r.data()
	id, secret := d["uuid"].(string), d["key"].(string)
	if !strings.HasPrefix(secret, "sk-") || len(secret) != 46 || d["name"] != "laptop" || d["scope"] != "standard" ||
		d["prefix"] != secret[:8] || d["createdAt"] == nil {
		t.Fatalf("created %v", d)
	}
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", secret, nil), 200)
	// Scope defaults to standard.
	r = e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "no scope"})
	e.want(r, 201)
	if r.data()["scope"] != "standard" {
		t.Errorf("default scope %v", r.data()["scope"])
	}
	r = e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "second admin", "scope": "admin"})
	e.want(r, 201)
	admin2 := r.data()["key"].(string)
	e.want(e.do("GET", "/v1/api-keys", admin2, nil), 200)

	// Refusals name the field.
	e.want(e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "x", "scope": "root"}), 400, "scope")
	e.want(e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": ""}), 400, "name")
	e.want(e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "x", "colour": "red"}), 400, "colour", "unknown field")
	e.want(e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": 7}), 400, "name")
	e.want(e.do("POST", "/v1/api-keys", e.admin, `{"name": "x"`), 400, "malformed")
	e.want(e.do("POST", "/v1/api-keys", e.admin, []byte(`{"name": "x"}`), withHeader("Content-Type", "text/plain")), 415, "application/json")
	e.want(e.do("POST", "/v1/api-keys", e.admin, []byte(`{"name": "x"}`)), 415)

	// List: records, no secrets, oldest first, the bootstrap key among them.
	r = e.do("GET", "/v1/api-keys", e.admin, nil)
	e.want(r, 200)
	list, ok := r.JSON["data"].([]any)
	if !ok || len(list) != 4 {
		t.Fatalf("list %s", r.Body)
	}
	if strings.Contains(string(r.Body), secret) || strings.Contains(string(r.Body), e.admin) || strings.Contains(string(r.Body), `"key"`) {
		t.Fatalf("list shows a secret: %s", r.Body)
	}
	first := list[0].(map[string]any)
	if first["name"] != "bootstrap" || first["scope"] != "admin" || first["lastUsedAt"] == nil {
		t.Errorf("first listed %v", first)
	}

	// Rotate: same record, new secret; the old one is dead at once.
	r = e.do("POST", "/v1/api-keys/rotate", secret, nil)
	e.want(r, 200)
	rd := r.data()
	newSecret := rd["key"].(string)
	if rd["uuid"] != id || rd["name"] != "laptop" || newSecret == secret || !strings.HasPrefix(newSecret, "sk-") {
		t.Fatalf("rotated %v", rd)
	}
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", secret, nil), 401)
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", newSecret, nil), 200)
	if k, _ := e.keys.Get(id); k.Name != "laptop" || k.Prefix != newSecret[:8] {
		t.Errorf("after rotation %+v", k)
	}

	// Delete.
	r = e.do("DELETE", "/v1/api-keys/"+id, e.admin, nil)
	e.want(r, 200)
	if r.data()["uuid"] != id {
		t.Errorf("delete answered %s", r.Body)
	}
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", newSecret, nil), 401)
	e.want(e.do("DELETE", "/v1/api-keys/"+id, e.admin, nil), 404)
	e.want(e.do("DELETE", "/v1/api-keys/not-a-uuid", e.admin, nil), 404)
}

func TestPresets(t *testing.T) {
	e := startServer(t)
	_, key := e.newKey("p", core.ScopeStandard)
	r := e.do("GET", "/v1/presets?feature=tonecraft", key, nil)
	e.want(r, 200)
	seen := map[string]bool{}
	for _, p := range r.data()["presets"].([]any) {
		seen[p.(map[string]any)["key"].(string)] = true
	}
	if !seen["signature"] {
		t.Errorf("tonecraft presets %v lack signature", seen)
	}
	e.want(e.do("GET", "/v1/presets?feature=indoor_staging", key, nil), 200)
	e.want(e.do("GET", "/v1/presets?feature=teleport", key, nil), 400, "feature")
	e.want(e.do("GET", "/v1/presets?feature=tonecraft&colour=red", key, nil), 400, "colour")
}

func TestEnvelopeStatuses(t *testing.T) {
	e := startServer(t)
	_, key := e.newKey("env", core.ScopeStandard)
	e.want(e.do("GET", "/v1/nothing-here", key, nil), 404, "no route")
	e.want(e.do("PUT", "/v1/api-keys", e.admin, nil), 405)
	e.want(e.do("POST", "/v1/test/conflict/abc", key, nil), 409, "abc")
	r := e.do("GET", "/v1/test/internal", key, nil)
	e.want(r, 500)
	if r.reason() != "internal server error" {
		t.Errorf("internal reason leaks detail: %q", r.reason())
	}
	if !strings.Contains(e.logs.String(), "disk on fire") {
		t.Errorf("internal error not logged: %s", e.logs.String())
	}
	// Body limit: 1 MiB.
	big := `{"name": "` + strings.Repeat("a", 1<<20) + `"}`
	e.want(e.do("POST", "/v1/test/echo", key, big), 413)
	ok := `{"name": "` + strings.Repeat("a", 1<<20-20) + `"}`
	e.want(e.do("POST", "/v1/test/echo", key, ok), 200)
}

func TestBodyErrorsNameTheField(t *testing.T) {
	e := startServer(t)
	_, key := e.newKey("body", core.ScopeStandard)
	for _, tc := range []struct{ body, mention string }{
		{``, "body"},
		{`null`, "body"},
		{`[]`, "body"},
		{`{"name": "a"} {"name": "b"}`, "after the JSON value"},
		{`{"name": "a", "brightness_boost": 2}`, "brightness_boost: unknown field"},
		{`{"Name": "a"}`, "Name: unknown field"},
		{`{"count": 1.5}`, "count: want an integer"},
		{`{"count": "3"}`, "count: want an integer, got a string"},
		{`{"count": 1e400}`, "count"},
		{`{"ratio": 1e999}`, "ratio: number 1e999 out of range"},
		{`{"Tags": ["a", 2]}`, "Tags[1]: want a string, got a number"},
		{`{"scenes": [{"inputs": []}, {"inputs": [], "quality": "high"}]}`, "scenes[1].quality: want an integer"},
		{`{"scenes": [{"inputs": [], "sky": true}]}`, "scenes[0].sky: unknown field"},
		{`{"name": "a",}`, "malformed JSON at byte"},
	} {
		r := e.do("POST", "/v1/test/echo", key, tc.body)
		if r.Code != 400 || !strings.Contains(r.reason(), tc.mention) {
			t.Errorf("body %q: %d %q, want 400 mentioning %q", tc.body, r.Code, r.reason(), tc.mention)
		}
	}
	r := e.do("POST", "/v1/test/echo", key, `{"name": "ok", "count": 3, "Tags": ["x"], "scenes": [{"inputs": ["a"], "quality": null}]}`)
	e.want(r, 200)
	if r.data()["count"].(float64) != 3 {
		t.Errorf("echo %s", r.Body)
	}
	e.want(e.do("POST", "/v1/test/echo", key, []byte(`{"name":"x"}`), withHeader("Content-Type", "application/json; charset=utf-8")), 200)
}

func TestPanicAnswers500AndServerKeepsServing(t *testing.T) {
	e := startServer(t)
	_, key := e.newKey("panic", core.ScopeStandard)
	for range 3 {
		r := e.do("GET", "/v1/test/panic", key, nil)
		e.want(r, 500)
		if r.reason() != "internal server error" {
			t.Errorf("panic reason %q", r.reason())
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "boom in handler") || !strings.Contains(logs, "goroutine") {
		t.Errorf("panic not logged with its stack: %s", logs)
	}
	e.want(e.do("GET", "/healthz", "", nil), 200)
}

func TestHEADOnReads(t *testing.T) {
	e := startServer(t)
	_, key := e.newKey("head", core.ScopeStandard)
	r := e.do("HEAD", "/v1/presets?feature=tonecraft", key, nil)
	if r.Code != 200 || len(r.Body) != 0 || r.Header.Get(HeaderRateLimit) != "300" || r.Header.Get(HeaderRateRemaining) != "299" {
		t.Fatalf("HEAD: %d %v %q", r.Code, r.Header, r.Body)
	}
}

// rate reads the three headers as integers.
func rate(t *testing.T, r *resp) (limit, remaining, reset int64) {
	t.Helper()
	var err error
	vals := make([]int64, 3)
	for i, h := range []string{HeaderRateLimit, HeaderRateRemaining, HeaderRateReset} {
		if vals[i], err = strconv.ParseInt(r.Header.Get(h), 10, 64); err != nil {
			t.Fatalf("header %s = %q (HTTP %d)", h, r.Header.Get(h), r.Code)
		}
	}
	return vals[0], vals[1], vals[2]
}

func TestRateLimitReadsWindowRollover(t *testing.T) {
	e := startServer(t)
	_, a := e.newKey("reader-a", core.ScopeStandard)
	_, b := e.newKey("reader-b", core.ScopeStandard)
	windowEnd := time.Date(2025, 6, 1, 9, 1, 0, 0, time.UTC).Unix()
	for i := 1; i <= 300; i++ {
		r := e.do("GET", "/v1/presets?feature=tonecraft", a, nil)
		e.want(r, 200)
		lim, rem, reset := rate(t, r)
		if lim != 300 || rem != int64(300-i) || reset != windowEnd {
			t.Fatalf("read %d: limit %d remaining %d reset %d (want reset %d)", i, lim, rem, reset, windowEnd)
		}
	}
	r := e.do("GET", "/v1/presets?feature=tonecraft", a, nil)
	e.want(r, 429, "rate limit")
	if _, rem, _ := rate(t, r); rem != 0 {
		t.Errorf("429 remaining %d", rem)
	}
	if ra := r.Header.Get("Retry-After"); ra != "50" { // clock at 09:00:10, window ends 09:01:00
		t.Errorf("Retry-After %q, want 50", ra)
	}
	// Another key's budget is independent; so is the same key's write budget.
	e.want(e.do("GET", "/v1/presets?feature=tonecraft", b, nil), 200)
	e.want(e.do("POST", "/v1/test/echo", a, map[string]any{"name": "w"}), 200)

	e.clock.Add(49*time.Second + 999*time.Millisecond)
	r = e.do("GET", "/v1/presets?feature=tonecraft", a, nil)
	e.want(r, 429)
	if ra := r.Header.Get("Retry-After"); ra != "1" {
		t.Errorf("Retry-After %q a millisecond before rollover, want 1", ra)
	}
	e.clock.Add(time.Millisecond)
	r = e.do("GET", "/v1/presets?feature=tonecraft", a, nil)
	e.want(r, 200)
	if _, rem, reset := rate(t, r); rem != 299 || reset != windowEnd+60 {
		t.Errorf("after rollover: remaining %d reset %d", rem, reset)
	}
}

func TestRateLimitWrites(t *testing.T) {
	e := startServer(t)
	_, k := e.newKey("writer", core.ScopeStandard)
	for i := 1; i <= 60; i++ {
		r := e.do("POST", "/v1/test/echo", k, map[string]any{"name": "w"})
		e.want(r, 200)
		if lim, rem, _ := rate(t, r); lim != 60 || rem != int64(60-i) {
			t.Fatalf("write %d: %d/%d", i, rem, lim)
		}
	}
	// Key management counts as writes too.
	r := e.do("POST", "/v1/api-keys/rotate", k, nil)
	e.want(r, 429)
	if ra, _ := strconv.Atoi(r.Header.Get("Retry-After")); ra < 1 || ra > 60 {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	// A refused write did nothing: the secret still works.
	r = e.do("GET", "/v1/presets?feature=tonecraft", k, nil)
	e.want(r, 200)
	if lim, _, _ := rate(t, r); lim != 300 {
		t.Errorf("read limit %d", lim)
	}
	// Admin key management spends the admin key's writes.
	r = e.do("POST", "/v1/api-keys", e.admin, map[string]any{"name": "n"})
	e.want(r, 201)
	if lim, rem, _ := rate(t, r); lim != 60 || rem != 59 {
		t.Errorf("create key: %d/%d", rem, lim)
	}
}

func TestRateLimitUploadBucketRefill(t *testing.T) {
	e := startServer(t)
	_, k := e.newKey("uploader", core.ScopeStandard)
	start := e.clock.Now()
	for i := 1; i <= 200; i++ {
		r := e.do("POST", "/v1/test/upload", k, nil)
		e.want(r, 202)
		lim, rem, reset := rate(t, r)
		// Full again i/10 s from now, rounded up to the second.
		wantReset := start.Add(time.Duration(i) * 100 * time.Millisecond)
		wr := wantReset.Unix()
		if wantReset.Nanosecond() > 0 {
			wr++
		}
		if lim != 200 || rem != int64(200-i) || reset != wr {
			t.Fatalf("upload %d: limit %d remaining %d reset %d (want %d)", i, lim, rem, reset, wr)
		}
	}
	r := e.do("POST", "/v1/test/upload", k, nil)
	e.want(r, 429)
	if r.Header.Get("Retry-After") != "1" {
		t.Errorf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if _, rem, _ := rate(t, r); rem != 0 {
		t.Errorf("remaining %d", rem)
	}
	e.clock.Add(99 * time.Millisecond)
	e.want(e.do("POST", "/v1/test/upload", k, nil), 429)
	e.clock.Add(time.Millisecond)
	e.want(e.do("POST", "/v1/test/upload", k, nil), 202)
	e.want(e.do("POST", "/v1/test/upload", k, nil), 429)
	e.clock.Add(time.Second) // ten tokens
	for i := 1; i <= 10; i++ {
		r := e.do("POST", "/v1/test/upload", k, nil)
		e.want(r, 202)
		if _, rem, _ := rate(t, r); rem != int64(10-i) {
			t.Fatalf("refill %d: remaining %d", i, rem)
		}
	}
	e.want(e.do("POST", "/v1/test/upload", k, nil), 429)
	// Uploads and writes are separate budgets.
	e.want(e.do("POST", "/v1/test/echo", k, map[string]any{"name": "w"}), 200)
}

func TestRateLimitsCanBeDisabled(t *testing.T) {
	e := startServer(t, func(c *Config) { c.RateLimits.Disabled = true })
	_, k := e.newKey("free", core.ScopeStandard)
	for range 70 {
		r := e.do("POST", "/v1/test/echo", k, map[string]any{"name": "w"})
		e.want(r, 200)
		if hasRateHeaders(r.Header) {
			t.Fatal("rate headers with limits disabled")
		}
	}
}

func TestStreamsAreNotLimitedNorCutByTheRequestTimeout(t *testing.T) {
	e := startServer(t, func(c *Config) { c.RequestTimeout = 200 * time.Millisecond })
	_, k := e.newKey("stream", core.ScopeStandard)
	req, _ := http.NewRequest("GET", e.base+"/v1/test/stream", nil)
	req.Header.Set(HeaderAPIKey, k)
	res, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if hasRateHeaders(res.Header) {
		t.Error("the stream carries rate headers")
	}
	body, err := io.ReadAll(res.Body) // 4 events over ~600 ms, three times the request timeout
	if err != nil {
		t.Fatalf("stream cut: %v after %q", err, body)
	}
	if n := strings.Count(string(body), "event: ping"); n != 4 {
		t.Fatalf("%d events: %q", n, body)
	}
	// A stream without a key is still refused.
	e.want(e.do("GET", "/v1/test/stream", "", nil), 401)
}

func TestHostHeaderChecks(t *testing.T) {
	e := startServer(t, func(c *Config) { c.AllowedHosts = []string{"studio.lan:8787"} })
	_, port, _ := net.SplitHostPort(e.addr)
	for host, want := range map[string]int{
		"127.0.0.1:" + port:      200,
		"localhost:" + port:      200,
		"LOCALHOST:" + port:      200,
		"[::1]:" + port:          200,
		"studio.lan:8787":        200,
		"evil.example:" + port:   403,
		"127.0.0.1:1":            403,
		"localhost":              403,
		"attacker.localhost.com": 403,
		"10.1.2.3:" + port:       403,
	} {
		r := e.do("GET", "/healthz", "", nil, withHost(host))
		if r.Code != want {
			t.Errorf("Host %q: %d, want %d (%s)", host, r.Code, want, r.Body)
		}
	}
	// The check comes before authentication and carries the envelope.
	r := e.do("GET", "/v1/api-keys", e.admin, nil, withHost("rebind.example:"+port))
	e.want(r, 403, "Host")
}

func TestHostCheckRules(t *testing.T) {
	h, _ := newHostCheck("0.0.0.0:8787", nil)
	for host, want := range map[string]bool{"192.168.1.5:8787": true, "localhost:8787": true, "nas.lan:8787": false, "192.168.1.5:80": false} {
		if h.allowed(host) != want {
			t.Errorf("wildcard bind, Host %q: %v", host, !want)
		}
	}
	h, _ = newHostCheck("127.0.0.1:0", nil) // not bound yet: any port on loopback names
	if !h.allowed("127.0.0.1:40000") || h.allowed("evil.example:40000") {
		t.Error("unbound port-0 check")
	}
	h.bind("127.0.0.1:41000")
	if h.allowed("127.0.0.1:40000") || !h.allowed("localhost:41000") {
		t.Error("after bind")
	}
	if _, err := newHostCheck("no-port", nil); err == nil {
		t.Error("listen address without port accepted")
	}
}

func TestCORS(t *testing.T) {
	// Off by default: no CORS headers, preflight not answered.
	e := startServer(t)
	r := e.do("GET", "/v1/features", "", nil, withHeader("Origin", "http://localhost:3000"))
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("CORS header without configured origins")
	}
	r = e.do("OPTIONS", "/v1/features", "", nil, withHeader("Origin", "http://localhost:3000"), withHeader("Access-Control-Request-Method", "GET"))
	if r.Code == 204 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("preflight answered %d with %v", r.Code, r.Header)
	}

	e = startServer(t, func(c *Config) { c.CORSOrigins = []string{"http://localhost:3000"} })
	r = e.do("OPTIONS", "/v1/api-keys", "", nil, withHeader("Origin", "http://localhost:3000"), withHeader("Access-Control-Request-Method", "POST"))
	if r.Code != 204 || r.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" ||
		!strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), "X-API-Key") {
		t.Errorf("allowed preflight: %d %v", r.Code, r.Header)
	}
	r = e.do("OPTIONS", "/v1/api-keys", "", nil, withHeader("Origin", "http://evil.example"), withHeader("Access-Control-Request-Method", "POST"))
	if r.Code != 403 || r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("foreign preflight: %d %v", r.Code, r.Header)
	}
	r = e.do("GET", "/v1/features", "", nil, withHeader("Origin", "http://localhost:3000"))
	if r.Header.Get("Access-Control-Allow-Origin") != "http://localhost:3000" || !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("allowed origin: %v", r.Header)
	}
	r = e.do("GET", "/v1/features", "", nil, withHeader("Origin", "http://evil.example"))
	if r.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Error("foreign origin got CORS headers")
	}
	if _, err := New(Config{CORSOrigins: []string{"localhost:3000"}}, Deps{Keys: e.keys}); err == nil {
		t.Error("origin without scheme accepted")
	}
}

func TestServeLifecycle(t *testing.T) {
	e := startServer(t, func(c *Config) { c.ShutdownTimeout = 5 * time.Second })
	_, k := e.newKey("slow", core.ScopeStandard)
	got := make(chan *resp, 1)
	go func() {
		req, _ := http.NewRequest("GET", e.base+"/v1/test/slow", nil)
		req.Header.Set(HeaderAPIKey, k)
		res, err := e.client.Do(req)
		if err != nil {
			got <- &resp{Code: -1, Body: []byte(err.Error())}
			return
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		got <- &resp{Code: res.StatusCode, Body: b}
	}()
	select {
	case <-testEntered: // the request is in the handler
	case r := <-got:
		t.Fatalf("the slow request ended early: %d %s", r.Code, r.Body)
	case <-time.After(time.Minute):
		t.Fatal("the slow request did not reach its handler within a minute")
	}
	stopped := make(chan error, 1)
	go func() { stopped <- e.stop() }()
	select {
	case <-e.srv.Stopping():
	case <-time.After(2 * time.Second):
		t.Fatal("Stopping not closed on shutdown")
	}
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) while a request was in flight", err)
	case <-time.After(100 * time.Millisecond):
	}
	testRelease <- struct{}{}
	if r := <-got; r.Code != 200 {
		t.Fatalf("in-flight request: %d %s", r.Code, r.Body)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", e.addr, time.Second); err == nil {
		t.Error("still accepting after shutdown")
	}
}

func TestServeReportsListenErrors(t *testing.T) {
	e := startServer(t)
	srv, err := New(Config{Listen: e.addr}, Deps{Keys: e.keys}) // port taken
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(context.Background()); err == nil || !strings.Contains(err.Error(), e.addr) {
		t.Fatalf("Serve on a taken port: %v", err)
	}
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Error("New without Keys accepted")
	}
}

func TestSlowHeadersAreCut(t *testing.T) {
	e := startServer(t, func(c *Config) { c.ReadHeaderTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n", e.addr) // never finishes the headers
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	_, err = bufio.NewReader(conn).ReadString('\n')
	if err == nil {
		// The server may answer 408 before closing; either way it must not wait.
		t.Logf("server answered before closing")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("slow headers held the connection for %v", time.Since(start))
	}
}

// BenchmarkAuthenticatedRead is the whole wrapper on a cheap route: Host check,
// key lookup in bbolt, read budget, handler and envelope.
func BenchmarkAuthenticatedRead(b *testing.B) {
	db, err := store.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ks := keys.New(db)
	_, secret, _ := ks.Create("bench", core.ScopeStandard)
	srv, err := New(Config{Listen: "127.0.0.1:8787", RateLimits: RateLimits{ReadsPerWindow: 1 << 30}}, Deps{Keys: ks})
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	req := httptest.NewRequest("GET", "http://127.0.0.1:8787/v1/presets?feature=tonecraft", nil)
	req.Header.Set(HeaderAPIKey, secret)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("%d %s", rec.Code, rec.Body)
		}
	}
}
