// Package localapi serves the /v1 control plane over HTTP: authentication by API
// key, the JSON envelope and error mapping, request budgets, loopback hygiene and
// the OpenAPI document.
//
// Adding a route: write its handler as a method of Server next to its group
// (routes_<group>.go),
//
//	func (s *Server) submitOrder(r *http.Request) (int, any, error) {
//		var req orderRequest
//		if err := DecodeJSON(r, &req); err != nil { return 0, nil, err }
//		... Owner(r) is the calling key's uuid ...
//	}
//
// give it its row in the one table of routes (routeTable in routes.go),
//
//	{
//		Method: http.MethodPost, Path: "/v1/orders", Status: http.StatusCreated,
//		Summary: "Submit an order", Request: orderRequest{}, Response: orderCreated{},
//		Handle: s.submitOrder,
//	},
//
// and add the services it needs as fields of Deps. The wrapper (route.go) does the
// rest in one place: Host check, key lookup (401), scope (403), the budget and
// its X-RateLimit-* headers (429 with Retry-After), the 1 MiB body cap (413),
// {"data": ...} on success and {"error": {"status", "reason"}} for errors by their
// core kind, panics as logged 500s. Budget defaults to the spec's rule (GET/HEAD
// reads, mutations under /v1/assets uploads, other mutations writes); event
// streams (StreamType "text/event-stream") spend none. Stream routes (SSE,
// WebSocket, /storage/ bytes) write their own answer and get no request deadline:
// they set their own with http.ResponseController and end when Stopping closes.
// Every route of the table is part of /openapi.json; tests fail when the router and
// the document disagree, and every test answer is validated against it.
package localapi
