package localapi

import (
	"fmt"
	"net/http"

	"github.com/porchlight/porchlight/core"
)

// routeTable is every route the server answers, in one table: method, path, who may
// call it, its handler and how the OpenAPI document describes it. The handlers live
// with their group (routes_<group>.go, ws.go). Routes whose service is not wired
// (Deps.Assets, Deps.Engine nil) are left out. New mounts exactly these routes.
func (s *Server) routeTable() []Route {
	// Public and catalog routes: health, the OpenAPI document, the feature catalog
	// and the presets. API key management: admins issue, list and revoke keys;
	// every key can rotate itself.
	rs := []Route{
		{
			Method: http.MethodGet, Path: "/healthz", Access: AccessPublic,
			Summary:  "Health check",
			Response: healthAnswer{},
			Handle:   s.health,
		},
		{
			Method: http.MethodGet, Path: "/openapi.json", Access: AccessPublic,
			Summary:    "This document",
			StreamType: "application/json",
			StreamDoc:  "the OpenAPI 3.1 description of this interface",
			Stream:     s.serveOpenAPI,
		},
		{
			Method: http.MethodGet, Path: "/v1/features", Access: AccessPublic,
			Summary: "The feature catalog",
			Description: "Every feature with its recipe, the recipe's version and the order options it reads. " +
				"available is false when the feature needs a model backend and none is configured.",
			Response: featuresAnswer{},
			Handle:   s.features,
		},
		{
			Method: http.MethodGet, Path: "/v1/presets",
			Summary: "Presets of a feature",
			Description: "Named looks that an order selects by key (tonecraft_profile, staging_preset). " +
				"Without feature, the presets of every feature.",
			Query: []Param{{
				Name: "feature", Description: "the feature whose presets to list: tonecraft or indoor_staging",
				Schema: Schema{"type": "string"},
			}},
			Response: presetsAnswer{},
			Handle:   s.presets,
		},
		{
			Method: http.MethodPost, Path: "/v1/api-keys", Access: AccessAdmin, Status: http.StatusCreated,
			Summary:  "Issue an API key",
			Request:  createKeyRequest{},
			Response: issuedKey{},
			Handle:   s.createKey,
		},
		{
			Method: http.MethodGet, Path: "/v1/api-keys", Access: AccessAdmin,
			Summary:  "List API keys",
			Response: []core.Key{},
			Handle:   s.listKeys,
		},
		{
			Method: http.MethodDelete, Path: "/v1/api-keys/{uuid}", Access: AccessAdmin,
			Summary:  "Revoke an API key",
			Response: revokedKey{},
			// 400: Porchlight's own owners of hot-folder and window work cannot be revoked.
			Errors: []int{http.StatusBadRequest, http.StatusNotFound},
			Handle: s.revokeKey,
		},
		{
			Method: http.MethodPost, Path: "/v1/api-keys/rotate",
			Summary:     "Rotate the calling key",
			Description: "Gives the calling key a new secret, shown once. The old secret stops working at once; the key keeps its uuid, name, scope and resources.",
			Response:    rotatedKey{},
			Handle:      s.rotateKey,
		},
	}

	if s.deps.Assets != nil {
		// Assets: declaration, upload confirmation, ingest status, signed download
		// addresses, exports and deletion, plus the signed /storage/ addresses the
		// bytes travel through (no key, no budget: the signature is the
		// authorisation).
		storage := s.storage()
		rs = append(rs, []Route{
			{
				Method: http.MethodPost, Path: "/v1/assets", Status: http.StatusCreated,
				Summary: "Declare an upload",
				Description: "Records a pending asset and answers a signed upload address. PUT the bytes there, " +
					"then confirm with POST /v1/assets/{id}/uploaded. An upload not confirmed by the time its address " +
					"expires fails with code upload_expired; POST /v1/assets/{id}/upload-url re-issues the address " +
					"of a pending asset.",
				Request:  declareRequest{},
				Response: declared{},
				Handle:   s.declareAsset,
			},
			{
				Method: http.MethodPost, Path: "/v1/assets/{id}/upload-url",
				Summary: "Re-issue the upload address of a pending asset",
				Description: "Answers a new signed upload address, valid expiresIn seconds (15 minutes), and gives the " +
					"asset as long to live: a declared upload not confirmed by the time its address expires fails with " +
					"code upload_expired (a finished PUT also leaves 15 minutes to confirm). Only a pending upload " +
					"takes a new address; any other asset, an expired one included, answers 409. Spends an upload " +
					"token. An extension of the interface.",
				Response: declared{},
				Errors:   []int{http.StatusNotFound, http.StatusConflict},
				Handle:   s.reissueUploadURL,
			},
			{
				Method: http.MethodPost, Path: "/v1/assets/{id}/uploaded", Status: http.StatusAccepted,
				Summary: "Confirm an upload",
				Description: "Tells the store the bytes are complete; ingest then validates and normalises them in the " +
					"background (poll GET /v1/assets/{id}/status). Confirming again answers the asset as it is, and so " +
					"does confirming after the upload address expired (failed, code upload_expired).",
				Response: assetStatus{},
				Errors:   []int{http.StatusNotFound, http.StatusConflict},
				Handle:   s.confirmUpload,
			},
			{
				Method: http.MethodGet, Path: "/v1/assets/{id}/status",
				Summary:  "Ingest status of an asset",
				Response: ingestStatus{},
				Errors:   []int{http.StatusNotFound},
				Handle:   s.assetIngestStatus,
			},
			{
				Method: http.MethodGet, Path: "/v1/assets/{id}",
				Summary: "An asset with its signed download address",
				Description: "Answers the record of a ready asset and a signed address that serves its bytes without " +
					"an API key until expiresIn seconds have passed. An asset that is not ready answers 409.",
				Response: assetView{},
				Errors:   []int{http.StatusNotFound, http.StatusConflict},
				Handle:   s.showAsset,
			},
			{
				Method: http.MethodPost, Path: "/v1/assets/{id}/exports",
				Summary: "Export an asset to another format or size",
				Description: "Repackages a ready image upload or an order output; no editing feature runs again. " +
					"A new export answers 202 and is made in the background; repeating the same request answers " +
					"the same export (200) with its status, a ready one is reused, and a failed one is tried again " +
					"(202). Camera RAW uploads must first be developed through an order.",
				Status:     http.StatusAccepted,
				Request:    exportRequest{},
				Response:   exportAnswer{},
				AlsoStatus: []int{http.StatusOK},
				Errors:     []int{http.StatusNotFound, http.StatusConflict},
				Handle:     s.exportAsset,
			},
			{
				Method: http.MethodDelete, Path: "/v1/assets/{id}",
				Summary: "Delete an asset",
				Description: "Removes the asset and its bytes (bytes other assets share stay). Orders still pending " +
					"that name it as an input expire; exports made from it stay.",
				Response: deletedAsset{},
				Errors:   []int{http.StatusNotFound},
				Handle:   s.deleteAsset,
			},
			{
				Method: http.MethodPut, Path: "/storage/upload/{id}", Access: AccessPublic,
				Summary: "Upload the bytes of a declared asset (signed address)",
				Description: "The raw file as the body, with Content-Type equal to the declared contentType. " +
					"Needs no API key and spends no budget. A tampered or expired address answers 403, a file over " +
					"the upload limit 413, another Content-Type 415. A body that sends nothing for 30 seconds " +
					"(api.upload_idle_timeout) answers 408 and nothing of it is kept. A key sends at most 8 bodies at " +
					"once (api.max_concurrent_uploads), counted for the key that declared the asset; the next answers " +
					"429 with Retry-After. A server out of disk space answers 507.",
				Query:      signedParams,
				StreamType: "application/json",
				StreamDoc:  "the bytes were stored: {\"data\": {assetId, size, sha256, status}}",
				Errors: []int{http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusRequestTimeout,
					http.StatusConflict, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
					http.StatusTooManyRequests, http.StatusInsufficientStorage},
				Stream: storage.ServeHTTP,
			},
			{
				Method: http.MethodGet, Path: "/storage/download/{id}", Access: AccessPublic,
				Summary: "Download the bytes of a ready asset (signed address)",
				Description: "Needs no API key and spends no budget; supports Range and ETag. A tampered or expired " +
					"address answers 403.",
				Query:      signedParams,
				StreamType: "image/*",
				StreamDoc:  "the image bytes",
				Errors:     []int{http.StatusNotFound, http.StatusConflict},
				Stream:     storage.ServeHTTP,
			},
		}...)
	}

	if s.deps.Engine != nil {
		// Orders: submission (with an optional Idempotency-Key), the summary and
		// cancellation. Batches: atomic submission of up to 100 scenes, the
		// aggregate and batch cancellation. Event streams: one order, one batch or
		// the whole account, over SSE or the WebSocket (a ticket first).
		rs = append(rs, []Route{
			{
				Method: http.MethodPost, Path: "/v1/orders", Status: http.StatusCreated,
				Summary: "Submit an order",
				Description: fmt.Sprintf("One scene: 1 to %d ready uploads (the exposure brackets) and the options of any features. ", s.cfg.MaxInputs) +
					"The order runs in the background; follow it with GET /v1/orders/{id} or its event stream.",
				Headers:  []Param{idempotencyHeader},
				Request:  orderRequestSchema(s.cfg.MaxInputs),
				Response: orderCreated{},
				Errors:   []int{http.StatusConflict},
				Handle:   s.submitOrder,
			},
			{
				Method: http.MethodGet, Path: "/v1/orders/{id}",
				Summary:  "An order's summary",
				Response: core.OrderSummary{},
				Errors:   []int{http.StatusNotFound},
				Handle:   s.order,
			},
			{
				Method: http.MethodPost, Path: "/v1/orders/{id}/cancel",
				Summary: "Cancel an order",
				Description: "A pending or running order becomes cancelled; repeating answers the same summary. " +
					"A completed, failed or expired order answers 409, also when completion won a race with the cancel.",
				Response: core.OrderSummary{},
				Errors:   []int{http.StatusNotFound, http.StatusConflict},
				Handle:   s.cancelOrder,
			},
			{
				Method: http.MethodPost, Path: "/v1/batches", Status: http.StatusCreated,
				Summary: "Submit a batch of scenes",
				Description: "Shared option fields at the top level, scenes (1 to 100) each with its inputs and any " +
					"option it overrides (an explicit value wins, even false). The batch is validated as a whole: one " +
					"invalid scene refuses everything with 400 naming it (scenes[i].field). Each scene becomes an order. " +
					"style_clause is not accepted in batches. Counts as one write.",
				Headers:  []Param{idempotencyHeader},
				Request:  batchRequestSchema(s.cfg.MaxInputs),
				Response: core.BatchAggregate{},
				Errors:   []int{http.StatusConflict},
				Handle:   s.submitBatch,
			},
			{
				Method: http.MethodGet, Path: "/v1/batches/{id}",
				Summary:     "A batch's aggregate",
				Description: "Counters (failed counts failed, cancelled and expired scenes; done means every scene settled) and the scene summaries in scene order.",
				Response:    core.BatchAggregate{},
				Errors:      []int{http.StatusNotFound},
				Handle:      s.batch,
			},
			{
				Method: http.MethodPost, Path: "/v1/batches/{id}/cancel",
				Summary: "Cancel a batch",
				Description: "Pending and running scenes become cancelled; settled scenes keep their state and a scene " +
					"that completes meanwhile keeps its result. Repeating answers the aggregate again.",
				Response: core.BatchAggregate{},
				Errors:   []int{http.StatusNotFound},
				Handle:   s.cancelBatch,
			},
			{
				Method: http.MethodGet, Path: "/v1/orders/{id}/events",
				Summary:      "Follow one order",
				Description:  "Opens with a snapshot of the order (terminal included), then its progress, then its terminal state, and closes. Pings every 15 seconds.",
				StreamType:   "text/event-stream",
				StreamDoc:    sseFrames + "order frames carry the order summary.",
				StreamSchema: eventMessage{},
				Headers:      []Param{lastEventIDHeader},
				Errors:       []int{http.StatusNotFound, http.StatusTooManyRequests},
				Stream:       s.orderEvents,
			},
			{
				Method: http.MethodGet, Path: "/v1/batches/{id}/events",
				Summary: "Follow one batch",
				Description: "Opens with a snapshot (an order frame per scene, then a batch frame with the counters), then " +
					"every scene's order events and the batch's counters, and closes once every scene has settled.",
				StreamType:   "text/event-stream",
				StreamDoc:    sseFrames + "order frames carry scene summaries, batch frames the aggregate without orders.",
				StreamSchema: eventMessage{},
				Headers:      []Param{lastEventIDHeader},
				Errors:       []int{http.StatusNotFound, http.StatusTooManyRequests},
				Stream:       s.batchEvents,
			},
			{
				Method: http.MethodGet, Path: "/v1/events",
				Summary: "Follow the whole account",
				Description: "Every order and batch event of the key. Opens with the key's running orders only (missed " +
					"terminal events are not replayed: read GET /v1/orders/{id} after a gap). Never ends by itself; reconnect on drop.",
				StreamType:   "text/event-stream",
				StreamDoc:    sseFrames,
				StreamSchema: eventMessage{},
				Headers:      []Param{lastEventIDHeader},
				Errors:       []int{http.StatusTooManyRequests},
				Stream:       s.accountEvents,
			},
			{
				Method: http.MethodPost, Path: "/v1/ws-ticket",
				Summary: "Get a WebSocket ticket",
				Description: "A single-use ticket for GET /v1/ws, bound to the calling key and valid 60 seconds. " +
					"Counts as a write.",
				Response: wsTicketAnswer{},
				Handle:   s.issueWSTicket,
			},
			{
				Method: http.MethodGet, Path: "/v1/ws", Access: AccessPublic, Status: http.StatusSwitchingProtocols,
				Summary: "The event WebSocket",
				Description: "A WebSocket handshake with a ticket from POST /v1/ws-ticket (no API key: the ticket " +
					"authenticates). A used, unknown or expired ticket, or one whose key was rotated or revoked since, answers 401. " +
					"Rotating or revoking the key closes the connection (1008). The connection opens with the key's " +
					"running orders, then carries every order and batch event of the key as JSON text messages, and a " +
					"ping message (and a ping control frame) every 15 seconds. Spends no budget.",
				Query: []Param{{Name: "ticket", Required: true, Description: "from POST /v1/ws-ticket",
					Schema: Schema{"type": "string"}}},
				StreamType:   "application/octet-stream",
				StreamDoc:    "switching to the WebSocket protocol; every message is {\"type\", \"data\"} JSON text",
				StreamSchema: eventMessage{},
				Errors:       []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests},
				Stream:       s.serveWS,
			},
		}...)
		if rt, ok := ordersListRoute(s); ok {
			rs = append(rs, rt)
		}
	}
	return rs
}
