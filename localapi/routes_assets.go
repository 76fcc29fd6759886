package localapi

import (
	"net/http"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
)

// Assets: declaration, upload confirmation, ingest status, signed download
// addresses, exports and deletion, plus the signed /storage/ addresses the
// bytes travel through.
func init() { addRouteGroup("assets", (*Server).assetRoutes) }

type declareRequest struct {
	Filename    string `json:"filename" doc:"the name of the file being uploaded"`
	ContentType string `json:"contentType" doc:"its media type (image/jpeg, image/png, image/webp, image/tiff, image/heic, image/x-adobe-dng, ... or application/octet-stream for any accepted format); the PUT must send the same Content-Type"`
}

type declared struct {
	AssetID   string           `json:"assetId"`
	UploadURL string           `json:"uploadUrl" doc:"signed address: PUT the bytes here with the declared Content-Type and no API key"`
	ExpiresIn int              `json:"expiresIn" doc:"seconds until uploadUrl expires"`
	Status    core.AssetStatus `json:"status" enum:"pending"`
}

// assetStatus is an asset's state as the confirmation and export calls answer it.
type assetStatus struct {
	AssetID string           `json:"assetId"`
	Status  core.AssetStatus `json:"status" enum:"pending,validating,processing,ready,failed"`
	Code    string           `json:"code,omitempty" doc:"why ingest or the export failed: empty_file, content_type_mismatch, unsupported_format, unreadable, file_too_large, resolution_too_large, upload_expired (the upload address expired before the upload was confirmed)"`
	Reason  string           `json:"reason,omitempty" doc:"the failure explained for people"`
}

type ingestStatus struct {
	Status core.AssetStatus `json:"status" enum:"pending,validating,processing,ready,failed"`
	Code   string           `json:"code,omitempty" doc:"when failed: empty_file, content_type_mismatch, unsupported_format, unreadable, file_too_large, resolution_too_large, upload_expired (the upload address expired before the upload was confirmed)"`
	Reason string           `json:"reason,omitempty" doc:"when failed: the failure explained for people"`
}

// assetView is a ready asset with its signed download address.
type assetView struct {
	AssetID     string              `json:"assetId"`
	Kind        core.AssetKind      `json:"kind" enum:"upload,mask,output,export"`
	Filename    string              `json:"filename"`
	ContentType string              `json:"contentType"`
	Status      core.AssetStatus    `json:"status" enum:"ready"`
	Format      string              `json:"format,omitempty" doc:"detected container: jpeg, png, webp, tiff, heic, raw"`
	Width       int                 `json:"width,omitempty" doc:"pixels, after orientation"`
	Height      int                 `json:"height,omitempty"`
	Size        int64               `json:"size,omitempty" doc:"bytes"`
	SHA256      string              `json:"sha256,omitempty"`
	Source      string              `json:"source,omitempty" doc:"the asset an export was made from"`
	Export      *core.ExportOptions `json:"export,omitempty" doc:"the options an export was made with"`
	OrderID     string              `json:"orderId,omitempty" doc:"the order an output came from"`
	CreatedAt   time.Time           `json:"createdAt"`
	UpdatedAt   time.Time           `json:"updatedAt"`
	URL         string              `json:"url" doc:"signed download address; fetch it with no API key"`
	ExpiresIn   int                 `json:"expiresIn" doc:"seconds until url expires; ask again for a new one"`
}

// exportRequest keeps quality and max_edge as pointers so an explicit 0 is
// refused rather than taken for "omitted".
type exportRequest struct {
	Format  string `json:"format" enum:"jpeg,png,webp"`
	Quality *int   `json:"quality,omitempty" doc:"1 to 100, default 92; JPEG and WebP compression"`
	MaxEdge *int   `json:"max_edge,omitempty" doc:"16 to 10000 pixels; bounds the longest edge, keeps the aspect ratio, never enlarges"`
}

type exportAnswer struct {
	assetStatus
	Source  string             `json:"source" doc:"the asset exported"`
	Options core.ExportOptions `json:"options" doc:"the options after defaults"`
}

type deletedAsset struct {
	AssetID string `json:"assetId"`
	Deleted bool   `json:"deleted"`
}

// storageUploaded is what a PUT to a signed upload address answers.
type storageUploaded struct {
	AssetID string           `json:"assetId"`
	Size    int64            `json:"size"`
	SHA256  string           `json:"sha256"`
	Status  core.AssetStatus `json:"status" enum:"pending"`
}

var signedParams = []Param{
	{Name: "exp", Required: true, Description: "expiry, Unix seconds", Schema: Schema{"type": "string"}},
	{Name: "sig", Required: true, Description: "HMAC-SHA256 signature", Schema: Schema{"type": "string"}},
}

func (s *Server) assetRoutes() {
	a := s.deps.Assets
	if a == nil {
		return
	}
	s.handle(Route{
		Method: http.MethodPost, Path: "/v1/assets", Status: http.StatusCreated,
		Summary: "Declare an upload",
		Description: "Records a pending asset and answers a signed upload address. PUT the bytes there, " +
			"then confirm with POST /v1/assets/{id}/uploaded. An upload not confirmed by the time its address " +
			"expires fails with code upload_expired; POST /v1/assets/{id}/upload-url re-issues the address " +
			"of a pending asset.",
		Request:  declareRequest{},
		Response: declared{},
		Handle: func(r *http.Request) (int, any, error) {
			var req declareRequest
			if err := DecodeJSON(r, &req); err != nil {
				return 0, nil, err
			}
			asset, url, err := a.Declare(Owner(r), req.Filename, req.ContentType)
			if err != nil {
				return 0, nil, err
			}
			return 0, declared{AssetID: asset.ID, UploadURL: url,
				ExpiresIn: int(a.Config().UploadTTL / time.Second), Status: asset.Status}, nil
		},
	})
	s.handle(Route{
		Method: http.MethodPost, Path: "/v1/assets/{id}/upload-url",
		Summary: "Re-issue the upload address of a pending asset",
		Description: "Answers a new signed upload address, valid expiresIn seconds (15 minutes), and gives the " +
			"asset as long to live: a declared upload not confirmed by the time its address expires fails with " +
			"code upload_expired (a finished PUT also leaves 15 minutes to confirm). Only a pending upload " +
			"takes a new address; any other asset, an expired one included, answers 409. Spends an upload " +
			"token. An extension of the interface.",
		Response: declared{},
		Errors:   []int{http.StatusNotFound, http.StatusConflict},
		Handle: func(r *http.Request) (int, any, error) {
			id := PathVar(r, "id")
			url, err := a.UploadURL(Owner(r), id)
			if err != nil {
				return 0, nil, err
			}
			return 0, declared{AssetID: id, UploadURL: url,
				ExpiresIn: int(a.Config().UploadTTL / time.Second), Status: core.AssetPending}, nil
		},
	})
	s.handle(Route{
		Method: http.MethodPost, Path: "/v1/assets/{id}/uploaded", Status: http.StatusAccepted,
		Summary: "Confirm an upload",
		Description: "Tells the store the bytes are complete; ingest then validates and normalises them in the " +
			"background (poll GET /v1/assets/{id}/status). Confirming again answers the asset as it is, and so " +
			"does confirming after the upload address expired (failed, code upload_expired).",
		Response: assetStatus{},
		Errors:   []int{http.StatusNotFound, http.StatusConflict},
		Handle: func(r *http.Request) (int, any, error) {
			asset, err := a.Confirm(Owner(r), PathVar(r, "id"))
			if err != nil {
				return 0, nil, err
			}
			return 0, statusOf(asset), nil
		},
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/v1/assets/{id}/status",
		Summary:  "Ingest status of an asset",
		Response: ingestStatus{},
		Errors:   []int{http.StatusNotFound},
		Handle: func(r *http.Request) (int, any, error) {
			st, err := a.Status(Owner(r), PathVar(r, "id"))
			if err != nil {
				return 0, nil, err
			}
			return 0, ingestStatus(st), nil
		},
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/v1/assets/{id}",
		Summary: "An asset with its signed download address",
		Description: "Answers the record of a ready asset and a signed address that serves its bytes without " +
			"an API key until expiresIn seconds have passed. An asset that is not ready answers 409.",
		Response: assetView{},
		Errors:   []int{http.StatusNotFound, http.StatusConflict},
		Handle: func(r *http.Request) (int, any, error) {
			owner, id := Owner(r), PathVar(r, "id")
			url, ttl, err := a.DownloadURL(owner, id)
			if err != nil {
				return 0, nil, err
			}
			asset, err := a.Get(owner, id)
			if err != nil {
				return 0, nil, err
			}
			return 0, viewOf(asset, url, ttl), nil
		},
	})
	s.handle(Route{
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
		Handle: func(r *http.Request) (int, any, error) {
			var req exportRequest
			if err := DecodeJSON(r, &req); err != nil {
				return 0, nil, err
			}
			opt, err := req.options()
			if err != nil {
				return 0, nil, err
			}
			asset, created, err := a.Export(Owner(r), PathVar(r, "id"), opt)
			if err != nil {
				return 0, nil, err
			}
			ans := exportAnswer{assetStatus: statusOf(asset), Source: asset.Source}
			if asset.Export != nil {
				ans.Options = *asset.Export
			}
			if created {
				return http.StatusAccepted, ans, nil
			}
			return http.StatusOK, ans, nil
		},
	})
	s.handle(Route{
		Method: http.MethodDelete, Path: "/v1/assets/{id}",
		Summary: "Delete an asset",
		Description: "Removes the asset and its bytes (bytes other assets share stay). Orders still pending " +
			"that name it as an input expire; exports made from it stay.",
		Response: deletedAsset{},
		Errors:   []int{http.StatusNotFound},
		Handle: func(r *http.Request) (int, any, error) {
			id := PathVar(r, "id")
			if err := a.Delete(Owner(r), id); err != nil {
				return 0, nil, err
			}
			return 0, deletedAsset{AssetID: id, Deleted: true}, nil
		},
	})

	// The signed storage addresses: no key, no budget; the signature is the
	// authorisation. The store's handler parses the path itself.
	storage := a.StorageHandlerWith(assets.StorageOptions{
		UploadIdle: s.cfg.UploadIdleTimeout,
		Admit:      s.admitUpload,
		Logger:     s.log,
	})
	s.handle(Route{
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
	})
	s.handle(Route{
		Method: http.MethodGet, Path: "/storage/download/{id}", Access: AccessPublic,
		Summary: "Download the bytes of a ready asset (signed address)",
		Description: "Needs no API key and spends no budget; supports Range and ETag. A tampered or expired " +
			"address answers 403.",
		Query:      signedParams,
		StreamType: "image/*",
		StreamDoc:  "the image bytes",
		Errors:     []int{http.StatusNotFound, http.StatusConflict},
		Stream:     storage.ServeHTTP,
	})
}

func (req exportRequest) options() (core.ExportOptions, error) {
	opt := core.ExportOptions{Format: req.Format}
	if req.Quality != nil {
		if q := *req.Quality; q < 1 || q > 100 {
			return opt, core.Invalid("quality", "%d is outside 1 to 100", q)
		}
		opt.Quality = *req.Quality
	}
	if req.MaxEdge != nil {
		if e := *req.MaxEdge; e < assets.MinExportEdge || e > assets.MaxExportEdge {
			return opt, core.Invalid("max_edge", "%d is outside %d to %d pixels", e, assets.MinExportEdge, assets.MaxExportEdge)
		}
		opt.MaxEdge = *req.MaxEdge
	}
	return opt, nil
}

func statusOf(a core.Asset) assetStatus {
	st := assetStatus{AssetID: a.ID, Status: a.Status}
	if a.Status == core.AssetFailed {
		st.Code, st.Reason = a.Code, a.Reason
	}
	return st
}

func viewOf(a core.Asset, url string, ttl int) assetView {
	return assetView{
		AssetID: a.ID, Kind: a.Kind, Filename: a.Filename, ContentType: a.ContentType, Status: a.Status,
		Format: a.Format, Width: a.Width, Height: a.Height, Size: a.Size, SHA256: a.SHA256,
		Source: a.Source, Export: a.Export, OrderID: a.OrderID,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, URL: url, ExpiresIn: ttl,
	}
}
