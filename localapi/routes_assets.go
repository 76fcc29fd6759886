package localapi

import (
	"net/http"
	"time"

	"github.com/porchlight/porchlight/assets"
	"github.com/porchlight/porchlight/core"
)

// Handlers of the asset routes: declaration, upload confirmation, ingest status,
// signed download addresses, exports and deletion (their rows, and those of the
// signed /storage/ addresses the bytes travel through, are in routes.go).

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

func (s *Server) declareAsset(r *http.Request) (int, any, error) {
	a := s.deps.Assets
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
}

func (s *Server) reissueUploadURL(r *http.Request) (int, any, error) {
	a := s.deps.Assets
	id := PathVar(r, "id")
	url, err := a.UploadURL(Owner(r), id)
	if err != nil {
		return 0, nil, err
	}
	return 0, declared{AssetID: id, UploadURL: url,
		ExpiresIn: int(a.Config().UploadTTL / time.Second), Status: core.AssetPending}, nil
}

func (s *Server) confirmUpload(r *http.Request) (int, any, error) {
	asset, err := s.deps.Assets.Confirm(Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, statusOf(asset), nil
}

func (s *Server) assetIngestStatus(r *http.Request) (int, any, error) {
	st, err := s.deps.Assets.Status(Owner(r), PathVar(r, "id"))
	if err != nil {
		return 0, nil, err
	}
	return 0, ingestStatus(st), nil
}

func (s *Server) showAsset(r *http.Request) (int, any, error) {
	a := s.deps.Assets
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
}

func (s *Server) exportAsset(r *http.Request) (int, any, error) {
	var req exportRequest
	if err := DecodeJSON(r, &req); err != nil {
		return 0, nil, err
	}
	opt, err := req.options()
	if err != nil {
		return 0, nil, err
	}
	asset, created, err := s.deps.Assets.Export(Owner(r), PathVar(r, "id"), opt)
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
}

func (s *Server) deleteAsset(r *http.Request) (int, any, error) {
	id := PathVar(r, "id")
	if err := s.deps.Assets.Delete(Owner(r), id); err != nil {
		return 0, nil, err
	}
	return 0, deletedAsset{AssetID: id, Deleted: true}, nil
}

// storage serves the signed storage addresses: no key, no budget; the signature
// is the authorisation. The store's handler parses the path itself.
func (s *Server) storage() http.Handler {
	return s.deps.Assets.StorageHandlerWith(assets.StorageOptions{
		UploadIdle: s.cfg.UploadIdleTimeout,
		Admit:      s.admitUpload,
		Logger:     s.log,
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
