// Package remote is the backend adapter that hands a generative edit to another
// Porchlight server (a studio machine with a GPU, say) through its /v1 interface:
// the photo (and mask) are uploaded, an order with the same gen_edit options is
// submitted, followed by its event stream, and its output downloaded. The remote
// server runs its own recipe on its own backends; the order's options, not the
// prompt, travel. Cancelling cancels the remote order; the assets it needed are
// deleted from the remote server afterwards.
package remote

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/porchlight/porchlight/core"
	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
	"github.com/porchlight/porchlight/localapi/client"
)

// Type is the adapter's config type.
var Type = backends.Type{
	Name: "remote",
	Keys: []string{"keep_assets", "poll_interval"},
	New:  New,
}

// Backend is a remote Porchlight server.
type Backend struct {
	spec   backends.Spec
	client *client.Client
	keep   bool
}

// New builds the adapter from its config: api_key (a standard key of the remote
// server, required), keep_assets (leave the uploaded photo and the output on the
// remote server, default false) and poll_interval (when its event stream cannot be
// followed, default 1s).
func New(spec backends.Spec) (backends.Backend, error) {
	if spec.APIKey == "" {
		return nil, fmt.Errorf("%s: the remote server needs an API key (an sk- key issued by it)", spec.Field("api_key"))
	}
	b := &Backend{spec: spec}
	var err error
	if b.keep, err = spec.Bool("keep_assets", false); err != nil {
		return nil, err
	}
	poll, err := spec.Duration("poll_interval", time.Second)
	if err != nil {
		return nil, err
	}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout: 10 * time.Second,
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     90 * time.Second,
	}
	b.client, err = client.New(spec.URL.String(), spec.APIKey, client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithRetries(spec.Retries, max(spec.Backoff, time.Millisecond)), client.WithPollInterval(poll))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Field("url"), err)
	}
	return b, nil
}

func (b *Backend) Name() string { return b.spec.Name }
func (b *Backend) Type() string { return Type.Name }

// FullResolution: the remote server fits the photo to its own model itself.
func (b *Backend) FullResolution() bool { return true }

// genEdit is the gen_edit value of each feature.
var genEdit = map[string]string{
	backends.FeatureIndoorStaging:  "indoor_staging",
	backends.FeatureOutdoorStaging: "outdoor_staging",
	backends.FeatureMessCleaner:    "mess_cleaner",
	backends.FeatureDeclutter:      "declutter_local",
	backends.FeatureMagicEraser:    "magic_eraser",
}

// Options are the remote order's options for a feature: its gen_edit, the feature's
// own options as resolved here, and a lossless delivery.
func Options(feature string, r core.Resolved) core.Options {
	str := func(s string) *string { return &s }
	o := core.Options{GenEdit: str(genEdit[feature]), Format: str("png")}
	switch feature {
	case backends.FeatureIndoorStaging:
		o.GenQuality, o.StagingStyle, o.RoomType = str(r.GenQuality), str(r.StagingStyle), str(r.RoomType)
		o.FloorFinish, o.WallColor = str(r.FloorFinish), str(r.WallColor)
		if strings.TrimSpace(r.StyleClause) != "" {
			o.StyleClause = str(r.StyleClause)
		}
	case backends.FeatureOutdoorStaging, backends.FeatureMessCleaner:
		o.GenQuality = str(r.GenQuality)
	}
	return o
}

// Edit runs the feature as an order on the remote server.
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	if req.Feature == backends.FeatureMagicEraser && req.Mask == nil {
		return nil, backends.Errorf(b, "prepare the request", "the magic eraser needs a mask")
	}
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	photo, err := backends.EncodePNG(req.Image)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	var created []string
	defer func() { b.cleanup(ctx, created) }()

	in, err := b.client.Upload(ctx, "porchlight-"+req.Feature+".png", "image/png", photo)
	if err != nil {
		return nil, b.fail(ctx, "upload the photo", err)
	}
	created = append(created, in.AssetID)
	opts := Options(req.Feature, req.Options)
	var maskPNG []byte
	if req.Feature == backends.FeatureMagicEraser {
		if maskPNG, err = backends.EncodeMask(req.Mask, 0, 0, backends.MaskWhiteOnTransparent); err != nil {
			return nil, backends.Errorf(b, "prepare the request", "%v", err)
		}
		m, err := b.client.Upload(ctx, "porchlight-mask.png", "image/png", maskPNG)
		if err != nil {
			return nil, b.fail(ctx, "upload the mask", err)
		}
		created = append(created, m.AssetID)
		opts.Mask = &m.AssetID
	}
	// The client gives the submission a fresh Idempotency-Key and sends it again with
	// the same key after a 5xx or a lost connection, so a retry never runs it twice.
	order, err := b.client.SubmitOrder(ctx, client.OrderRequest{Inputs: []string{in.AssetID}, Options: opts}, "")
	if err != nil {
		return nil, b.fail(ctx, "submit the order", err)
	}
	done, err := b.client.WaitOrder(ctx, order.OrderID, func(s core.OrderSummary) {
		if s.Status == core.OrderRunning {
			req.Report(s.ProgressPercent / 100 * 0.95)
		}
	})
	if err != nil {
		if ctx.Err() != nil {
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			b.client.CancelOrder(cctx, order.OrderID)
			stop()
			return nil, ctx.Err()
		}
		return nil, b.fail(ctx, "follow the order", err)
	}
	switch done.Status {
	case core.OrderCompleted:
	case core.OrderFailed:
		msg := done.Error
		if done.ErrorCode != "" {
			msg += " (" + done.ErrorCode + ")"
		}
		return nil, backends.Errorf(b, "run the order", "the remote order %s failed: %s", order.OrderID, msg)
	default:
		return nil, backends.Errorf(b, "run the order", "the remote order %s ended %s", order.OrderID, done.Status)
	}
	created = append(created, done.OutputAssetID)
	data, _, err := b.client.DownloadBytes(ctx, done.OutputAssetID)
	if err != nil {
		return nil, b.fail(ctx, "download the output", err)
	}
	img, err := backends.DecodeAnswer(data)
	if err != nil {
		return nil, backends.Errorf(b, "download the output", "%v", err)
	}
	req.Report(1)
	return img, nil
}

// fail turns a client error into the backend's, or ctx's error once ctx is done.
func (b *Backend) fail(ctx context.Context, op string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return &backends.Error{Backend: backends.Label(b), Op: op, Status: client.StatusOf(err), Err: err}
}

// cleanup deletes what the job left on the remote server.
func (b *Backend) cleanup(ctx context.Context, ids []string) {
	if b.keep || len(ids) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	for _, id := range ids {
		b.client.DeleteAsset(cctx, id)
	}
}

var (
	_ backends.Backend        = (*Backend)(nil)
	_ backends.FullResolution = (*Backend)(nil)
)
