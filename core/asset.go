package core

import "time"

// AssetKind says where an asset came from.
type AssetKind string

const (
	AssetUpload AssetKind = "upload" // an image uploaded by a client
	AssetMask   AssetKind = "mask"   // an uploaded mask for the magic eraser
	AssetOutput AssetKind = "output" // the result of a completed order
	AssetExport AssetKind = "export" // a repackaging of a ready image
)

// AssetStatus is the ingest state of an asset.
type AssetStatus string

const (
	AssetPending    AssetStatus = "pending"
	AssetValidating AssetStatus = "validating"
	AssetProcessing AssetStatus = "processing"
	AssetReady      AssetStatus = "ready"
	AssetFailed     AssetStatus = "failed"
)

// Ingest failure codes (data.code of GET /v1/assets/:id/status).
const (
	CodeEmptyFile           = "empty_file"
	CodeContentTypeMismatch = "content_type_mismatch"
	CodeUnsupportedFormat   = "unsupported_format"
	CodeUnreadable          = "unreadable"
	CodeFileTooLarge        = "file_too_large"
	CodeResolutionTooLarge  = "resolution_too_large"
	// CodeUploadExpired: the upload address lapsed before the upload was confirmed.
	CodeUploadExpired = "upload_expired"
)

// ExportOptions are the request fields of POST /v1/assets/:id/exports.
type ExportOptions struct {
	Format  string `json:"format"`
	Quality int    `json:"quality"`
	MaxEdge int    `json:"max_edge,omitempty"`
}

// Asset is the stored record of an asset.
type Asset struct {
	ID          string         `json:"assetId"`
	Owner       string         `json:"owner"` // key uuid
	Kind        AssetKind      `json:"kind"`
	Filename    string         `json:"filename"`
	ContentType string         `json:"contentType"`
	Status      AssetStatus    `json:"status"`
	Code        string         `json:"code,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Format      string         `json:"format,omitempty"` // detected container: jpeg, png, webp, tiff, heic, raw
	Width       int            `json:"width,omitempty"`
	Height      int            `json:"height,omitempty"`
	Size        int64          `json:"size,omitempty"`
	SHA256      string         `json:"sha256,omitempty"` // content address of the stored bytes
	Source      string         `json:"source,omitempty"` // the asset an export was made from
	Export      *ExportOptions `json:"export,omitempty"`
	OrderID     string         `json:"orderId,omitempty"` // the order an output came from
	CreatedAt   time.Time      `json:"createdAt"`
	UpdatedAt   time.Time      `json:"updatedAt"`
}
