package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/porchlight/porchlight/core"
)

// Declared is the answer of POST /v1/assets.
type Declared struct {
	AssetID   string           `json:"assetId"`
	UploadURL string           `json:"uploadUrl"`
	ExpiresIn int              `json:"expiresIn"`
	Status    core.AssetStatus `json:"status"`
}

// AssetStatus is an asset's state as confirmations and exports answer it.
type AssetStatus struct {
	AssetID string           `json:"assetId"`
	Status  core.AssetStatus `json:"status"`
	Code    string           `json:"code,omitempty"`
	Reason  string           `json:"reason,omitempty"`
}

// IngestStatus is the answer of GET /v1/assets/:id/status.
type IngestStatus struct {
	Status core.AssetStatus `json:"status"`
	Code   string           `json:"code,omitempty"`
	Reason string           `json:"reason,omitempty"`
}

// Asset is the answer of GET /v1/assets/:id: the record and a signed download
// address valid for ExpiresIn seconds.
type Asset struct {
	AssetID     string              `json:"assetId"`
	Kind        core.AssetKind      `json:"kind"`
	Filename    string              `json:"filename"`
	ContentType string              `json:"contentType"`
	Status      core.AssetStatus    `json:"status"`
	Format      string              `json:"format,omitempty"`
	Width       int                 `json:"width,omitempty"`
	Height      int                 `json:"height,omitempty"`
	Size        int64               `json:"size,omitempty"`
	SHA256      string              `json:"sha256,omitempty"`
	Source      string              `json:"source,omitempty"`
	Export      *core.ExportOptions `json:"export,omitempty"`
	OrderID     string              `json:"orderId,omitempty"`
	CreatedAt   time.Time           `json:"createdAt"`
	UpdatedAt   time.Time           `json:"updatedAt"`
	URL         string              `json:"url"`
	ExpiresIn   int                 `json:"expiresIn"`
}

// ExportOptions are the fields of POST /v1/assets/:id/exports; zero Quality and
// MaxEdge are left out (the server's defaults apply).
type ExportOptions struct {
	Format  string `json:"format"`
	Quality int    `json:"quality,omitempty"`
	MaxEdge int    `json:"max_edge,omitempty"`
}

// Export is the answer of an export request. Created says the server started a new
// packaging (202) rather than answering an existing one (200).
type Export struct {
	AssetStatus
	Source  string             `json:"source"`
	Options core.ExportOptions `json:"options"`
	Created bool               `json:"-"`
}

// IngestError is an upload that ingest refused (data.code and data.reason).
type IngestError struct {
	AssetID, Code, Reason string
}

func (e *IngestError) Error() string {
	return fmt.Sprintf("asset %s was refused: %s (%s)", e.AssetID, e.Reason, e.Code)
}

// DeclareAsset is POST /v1/assets.
func (c *Client) DeclareAsset(ctx context.Context, filename, contentType string) (Declared, error) {
	var d Declared
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/assets", retry: retryLimited,
		body: map[string]string{"filename": filename, "contentType": contentType}}, &d)
	return d, err
}

// ReissueUploadURL is POST /v1/assets/:id/upload-url: a new signed address for a
// pending upload, which also extends its life. Each call spends an upload token, so
// it is retried only when the server says it did nothing.
func (c *Client) ReissueUploadURL(ctx context.Context, id string) (Declared, error) {
	var d Declared
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/assets/" + escape(id) + "/upload-url",
		retry: retryLimited}, &d)
	return d, err
}

// PutUpload sends the bytes to a signed upload address (no API key). It is safe to
// repeat, so it is retried like a read.
func (c *Client) PutUpload(ctx context.Context, uploadURL, contentType string, data []byte) error {
	u, err := url.Parse(uploadURL)
	if err != nil {
		return fmt.Errorf("upload address: %w", err)
	}
	_, err = c.call(ctx, request{method: http.MethodPut, path: u.Path, absolute: uploadURL, raw: data,
		rawType: contentType, noKey: true, retry: retrySafe}, nil)
	return err
}

// ConfirmUpload is POST /v1/assets/:id/uploaded. Confirming again answers the asset
// as it is, so it is retried like a read.
func (c *Client) ConfirmUpload(ctx context.Context, id string) (AssetStatus, error) {
	var s AssetStatus
	_, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/assets/" + escape(id) + "/uploaded", retry: retrySafe}, &s)
	return s, err
}

// AssetStatus is GET /v1/assets/:id/status.
func (c *Client) AssetStatus(ctx context.Context, id string) (IngestStatus, error) {
	var s IngestStatus
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/assets/" + escape(id) + "/status"}, &s)
	return s, err
}

// Asset is GET /v1/assets/:id: the record with a fresh signed download address.
func (c *Client) Asset(ctx context.Context, id string) (Asset, error) {
	var a Asset
	_, err := c.call(ctx, request{method: http.MethodGet, path: "/v1/assets/" + escape(id)}, &a)
	return a, err
}

// Export is POST /v1/assets/:id/exports. Repeating it with the same options answers
// the same export, so it is retried like a read.
func (c *Client) Export(ctx context.Context, id string, opt ExportOptions) (Export, error) {
	var e Export
	st, err := c.call(ctx, request{method: http.MethodPost, path: "/v1/assets/" + escape(id) + "/exports", body: opt, retry: retrySafe}, &e)
	e.Created = st == http.StatusAccepted
	return e, err
}

// DeleteAsset is DELETE /v1/assets/:id.
func (c *Client) DeleteAsset(ctx context.Context, id string) error {
	_, err := c.call(ctx, request{method: http.MethodDelete, path: "/v1/assets/" + escape(id), retry: retryLimited}, nil)
	return err
}

// Upload runs the whole upload flow: declare, PUT the bytes to the signed address,
// confirm, and wait until ingest made the asset ready. A refused file is an
// *IngestError with the server's code and reason.
func (c *Client) Upload(ctx context.Context, filename, contentType string, data []byte) (Asset, error) {
	d, err := c.DeclareAsset(ctx, filename, contentType)
	if err != nil {
		return Asset{}, err
	}
	if err := c.PutUpload(ctx, d.UploadURL, contentType, data); err != nil {
		return Asset{}, err
	}
	if _, err := c.ConfirmUpload(ctx, d.AssetID); err != nil {
		return Asset{}, err
	}
	if _, err := c.WaitAsset(ctx, d.AssetID); err != nil {
		return Asset{}, err
	}
	return c.Asset(ctx, d.AssetID)
}

// WaitAsset polls an asset's ingest status until it is ready (or failed: an
// *IngestError), backing off from 50ms to the poll interval.
func (c *Client) WaitAsset(ctx context.Context, id string) (IngestStatus, error) {
	wait := 50 * time.Millisecond
	for {
		s, err := c.AssetStatus(ctx, id)
		if err != nil {
			return s, err
		}
		switch s.Status {
		case core.AssetReady:
			return s, nil
		case core.AssetFailed:
			return s, &IngestError{AssetID: id, Code: s.Code, Reason: s.Reason}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return s, err
		}
		wait = min(wait*2, c.poll)
	}
}

// WaitExport repeats an export request until the export is ready, and fails with
// its code and reason when it failed.
func (c *Client) WaitExport(ctx context.Context, id string, opt ExportOptions) (Export, error) {
	wait := 50 * time.Millisecond
	for {
		e, err := c.Export(ctx, id, opt)
		if err != nil {
			return e, err
		}
		switch e.Status {
		case core.AssetReady:
			return e, nil
		case core.AssetFailed:
			return e, &IngestError{AssetID: e.AssetID, Code: e.Code, Reason: e.Reason}
		}
		if err := c.sleep(ctx, wait); err != nil {
			return e, err
		}
		wait = min(wait*2, c.poll)
	}
}

// Download writes a ready asset's bytes to w through its signed address (no API
// key). An address that expired in between (403) is asked for again once.
func (c *Client) Download(ctx context.Context, id string, w io.Writer) (Asset, error) {
	for attempt := 0; ; attempt++ {
		a, err := c.Asset(ctx, id)
		if err != nil {
			return a, err
		}
		u, err := url.Parse(a.URL)
		if err != nil {
			return a, fmt.Errorf("download address of %s: %w", id, err)
		}
		res, err := c.send(ctx, request{method: http.MethodGet, path: u.Path, absolute: a.URL, noKey: true, retry: retrySafe})
		if err != nil {
			if StatusOf(err) == http.StatusForbidden && attempt == 0 {
				continue
			}
			return a, err
		}
		_, err = io.Copy(w, res.Body)
		res.Body.Close()
		if err != nil {
			return a, fmt.Errorf("download %s: %w", id, err)
		}
		return a, nil
	}
}

// DownloadBytes is Download into memory.
func (c *Client) DownloadBytes(ctx context.Context, id string) ([]byte, Asset, error) {
	var b bytes.Buffer
	a, err := c.Download(ctx, id, &b)
	return b.Bytes(), a, err
}
