package localapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// OpenAPIVersion is the version of the OpenAPI specification the document follows.
const OpenAPIVersion = "3.1.0"

// APIVersion is the interface's version as the document states it.
const APIVersion = "1.0.0"

var pathVarRe = regexp.MustCompile(`\{([^}:]+)(:[^}]*)?\}`)

// docPath turns a mux template into an OpenAPI path ("{id:[0-9]+}" -> "{id}").
func docPath(p string) string { return pathVarRe.ReplaceAllString(p, "{$1}") }

func pathVars(p string) []string {
	var out []string
	for _, m := range pathVarRe.FindAllStringSubmatch(p, -1) {
		out = append(out, m[1])
	}
	return out
}

// buildOpenAPI writes the document from the registered routes.
func (s *Server) buildOpenAPI() ([]byte, error) {
	b := newSchemaBuilder()
	paths := map[string]map[string]any{}
	opIDs := map[string]bool{}
	for _, rt := range s.routes {
		p := docPath(rt.Path)
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		op, err := operation(b, rt, false)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", rt.Method, rt.Path, err)
		}
		id := op["operationId"].(string)
		if opIDs[id] {
			return nil, fmt.Errorf("%s %s: operationId %s is not unique", rt.Method, rt.Path, id)
		}
		opIDs[id] = true
		paths[p][strings.ToLower(rt.Method)] = op
		if answersHEAD(rt) {
			head, err := operation(b, rt, true)
			if err != nil {
				return nil, err
			}
			paths[p]["head"] = head
		}
	}
	b.components["ErrorEnvelope"] = Schema{
		"type":     "object",
		"required": []any{"error"},
		"properties": Schema{"error": Schema{
			"type":     "object",
			"required": []any{"status", "reason"},
			"properties": Schema{
				"status": Schema{"type": "integer", "description": "the HTTP status, repeated"},
				"reason": Schema{"type": "string", "description": "what went wrong, naming the offending field when there is one"},
			},
		}},
	}
	doc := map[string]any{
		"openapi": OpenAPIVersion,
		"info": map[string]any{
			"title":   "Porchlight API",
			"version": APIVersion,
			"description": "Local control plane of Porchlight, the real-estate photo editor. " +
				"Successful answers are {\"data\": ...}; failures are {\"error\": {\"status\", \"reason\"}}. " +
				"Requests must name this server in the Host header (localhost, 127.0.0.1 or [::1] on its port), " +
				"otherwise they answer 403. Authenticated requests are limited per key: reads 300 a minute, " +
				"writes 60 a minute (fixed 60-second windows), uploads a bucket of 200 tokens refilling 10 a second. " +
				fmt.Sprintf("A key also holds at most %d event streams open at once (SSE and WebSocket together) and "+
					"sends at most %d upload bodies at once; beyond that the answer is 429 with Retry-After.",
					s.cfg.MaxStreams, s.cfg.MaxConcurrentUploads),
		},
		"security": []any{map[string]any{"apiKey": []any{}}},
		"paths":    paths,
		"components": map[string]any{
			"schemas": b.components,
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "apiKey", "in": "header", "name": HeaderAPIKey,
					"description": "A secret starting with sk-."},
			},
			"headers": map[string]any{
				HeaderRateLimit: map[string]any{"description": "the window limit, or the upload bucket's capacity",
					"schema": Schema{"type": "integer"}},
				HeaderRateRemaining: map[string]any{"description": "requests, or whole upload tokens, left",
					"schema": Schema{"type": "integer"}},
				HeaderRateReset: map[string]any{"description": "Unix time in seconds when the window resets, or when the upload bucket would be full",
					"schema": Schema{"type": "integer"}},
				"Retry-After": map[string]any{"description": "seconds to wait before retrying (at least 1)",
					"schema": Schema{"type": "integer", "minimum": 1}},
			},
		},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// operation describes one route (its HEAD twin when head is set).
func operation(b *schemaBuilder, rt *Route, head bool) (map[string]any, error) {
	method := rt.Method
	if head {
		method = http.MethodHead
	}
	op := map[string]any{
		"operationId": operationID(method, rt.Path),
		"summary":     rt.Summary,
		"tags":        []any{tagOf(rt.Path)},
	}
	if head {
		op["summary"] = rt.Summary + " (headers only)"
	}
	if rt.Description != "" {
		op["description"] = rt.Description
	}
	if rt.Access == AccessPublic {
		op["security"] = []any{}
	}
	var params []any
	for _, v := range pathVars(rt.Path) {
		params = append(params, map[string]any{"name": v, "in": "path", "required": true, "schema": Schema{"type": "string"}})
	}
	for _, q := range rt.Query {
		p := map[string]any{"name": q.Name, "in": "query", "required": q.Required, "schema": q.Schema}
		if q.Schema == nil {
			p["schema"] = Schema{"type": "string"}
		}
		if q.Description != "" {
			p["description"] = q.Description
		}
		params = append(params, p)
	}
	for _, h := range rt.Headers {
		p := map[string]any{"name": h.Name, "in": "header", "required": h.Required, "schema": h.Schema}
		if h.Schema == nil {
			p["schema"] = Schema{"type": "string"}
		}
		if h.Description != "" {
			p["description"] = h.Description
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}
	if rt.Request != nil && !head {
		rs, err := b.of(rt.Request)
		if err != nil {
			return nil, fmt.Errorf("request: %w", err)
		}
		op["requestBody"] = map[string]any{
			"required":    true,
			"description": "JSON; unknown fields are refused with 400",
			"content":     map[string]any{"application/json": map[string]any{"schema": rs}},
		}
	}

	limited := rt.Budget != BudgetNone
	responses := map[string]any{}
	success := map[string]any{"description": http.StatusText(rt.Status)}
	if limited {
		success["headers"] = rateHeaders(false)
	}
	switch {
	case head:
	case rt.Stream != nil:
		ct := rt.StreamType
		if ct == "" {
			ct = "application/octet-stream"
		}
		if rt.StreamDoc != "" {
			success["description"] = rt.StreamDoc
		}
		body := Schema{"type": "string"}
		if strings.Contains(ct, "json") {
			body = Schema{"type": "object"}
		}
		if rt.StreamSchema != nil {
			ms, err := b.of(rt.StreamSchema)
			if err != nil {
				return nil, fmt.Errorf("stream message: %w", err)
			}
			// Each message is JSON text; the extension names its schema.
			body["contentMediaType"] = "application/json"
			body["x-message-schema"] = ms
		}
		success["content"] = map[string]any{ct: map[string]any{"schema": body}}
	default:
		ds, err := b.of(rt.Response)
		if err != nil {
			return nil, fmt.Errorf("response: %w", err)
		}
		success["content"] = map[string]any{"application/json": map[string]any{"schema": Schema{
			"type": "object", "required": []any{"data"}, "properties": Schema{"data": ds},
		}}}
	}
	responses[strconv.Itoa(rt.Status)] = success
	for _, c := range rt.AlsoStatus {
		also := clone(success)
		also["description"] = http.StatusText(c)
		responses[strconv.Itoa(c)] = also
	}

	codes := map[int]string{
		http.StatusForbidden:           "the Host header does not name this server, or the key lacks the scope",
		http.StatusInternalServerError: "server-side failure",
	}
	if rt.Access != AccessPublic {
		codes[http.StatusUnauthorized] = "missing, invalid or rotated-away API key"
	}
	if rt.Request != nil {
		codes[http.StatusBadRequest] = "invalid body; the reason names the field"
		codes[http.StatusRequestEntityTooLarge] = "body over the limit"
		codes[http.StatusUnsupportedMediaType] = "Content-Type is not application/json"
	}
	if len(rt.Query) > 0 {
		codes[http.StatusBadRequest] = "invalid query parameter; the reason names it"
	}
	if limited {
		codes[http.StatusTooManyRequests] = "rate limit exceeded; wait Retry-After seconds"
	} else if slices.Contains(rt.Errors, http.StatusTooManyRequests) {
		codes[http.StatusTooManyRequests] = "the key holds as many of these open as it may; wait Retry-After seconds"
	}
	if slices.Contains(rt.Errors, http.StatusInsufficientStorage) {
		codes[http.StatusInsufficientStorage] = "no disk space left on the server; nothing was kept"
	}
	for _, c := range rt.Errors {
		if _, ok := codes[c]; !ok {
			codes[c] = http.StatusText(c)
		}
	}
	for c, desc := range codes {
		r := map[string]any{"description": desc}
		if !head {
			r["content"] = map[string]any{"application/json": map[string]any{
				"schema": Schema{"$ref": "#/components/schemas/ErrorEnvelope"}}}
		}
		// Answers refused before the limiter (auth, scope, host) carry no rate headers.
		if limited && c != http.StatusUnauthorized && c != http.StatusForbidden {
			r["headers"] = rateHeaders(c == http.StatusTooManyRequests)
		} else if c == http.StatusTooManyRequests {
			r["headers"] = map[string]any{"Retry-After": map[string]any{"$ref": "#/components/headers/Retry-After"}}
		}
		responses[strconv.Itoa(c)] = r
	}
	op["responses"] = responses
	return op, nil
}

func rateHeaders(retry bool) map[string]any {
	h := map[string]any{}
	for _, n := range []string{HeaderRateLimit, HeaderRateRemaining, HeaderRateReset} {
		h[n] = map[string]any{"$ref": "#/components/headers/" + n}
	}
	if retry {
		h["Retry-After"] = map[string]any{"$ref": "#/components/headers/Retry-After"}
	}
	return h
}

// operationID is camelCase of the method and path: "deleteV1ApiKeysByUuid".
func operationID(method, path string) string {
	var sb strings.Builder
	sb.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(path, "/") {
		if seg == "" {
			continue
		}
		if m := pathVarRe.FindStringSubmatch(seg); m != nil {
			sb.WriteString("By")
			seg = m[1]
		}
		for _, w := range strings.FieldsFunc(seg, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			sb.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return sb.String()
}

// tagOf groups operations by their first segment after /v1.
func tagOf(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) > 1 && segs[0] == "v1" {
		return segs[1]
	}
	return segs[0]
}
