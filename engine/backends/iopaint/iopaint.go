// Package iopaint is the backend adapter for IOPaint (github.com/Sanster/IOPaint):
// POST /api/v1/inpaint with a JSON InpaintRequest (base64 image and mask, prompt,
// sd_* sampler settings) answered with the image's bytes, and the Socket.IO
// "diffusion_progress" events for progress.
//
// IOPaint always needs a mask: the magic eraser sends its own, features without one
// send a mask over the whole frame, which suits the diffusion models IOPaint serves
// (an erase-only model such as LaMa is for the magic eraser). IOPaint has no way to
// cancel a running inpaint; cancelling closes the request, and the server finishes
// the image it is on and discards it.
package iopaint

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Type is the adapter's config type.
var Type = backends.Type{
	Name: "iopaint",
	Keys: []string{"sampler", "progress", "hd_strategy"},
	New:  New,
}

// Backend is an IOPaint server.
type Backend struct {
	spec       backends.Spec
	call       *backends.Caller
	sampler    string
	hdStrategy string
	progress   bool
}

// New builds the adapter from its config: sampler (sd_sampler, e.g. "DPM++ 2M";
// IOPaint's default when empty), hd_strategy (Crop, Resize or Original; IOPaint's
// default when empty) and progress (listen to Socket.IO, default true).
func New(spec backends.Spec) (backends.Backend, error) {
	b := &Backend{spec: spec}
	var err error
	if b.sampler, err = spec.String("sampler", ""); err != nil {
		return nil, err
	}
	if b.hdStrategy, err = spec.String("hd_strategy", ""); err != nil {
		return nil, err
	}
	switch b.hdStrategy {
	case "", "Crop", "Resize", "Original":
	default:
		return nil, fmt.Errorf("%s: %q is not Crop, Resize or Original", spec.Field("hd_strategy"), b.hdStrategy)
	}
	if b.progress, err = spec.Bool("progress", true); err != nil {
		return nil, err
	}
	b.call = backends.NewCaller(spec, spec.Name+" (iopaint)")
	if spec.APIKey != "" {
		b.call.Header.Set("Authorization", "Bearer "+spec.APIKey) // for a proxy in front of IOPaint
	}
	return b, nil
}

func (b *Backend) Name() string { return b.spec.Name }
func (b *Backend) Type() string { return Type.Name }

// inpaintRequest holds the InpaintRequest fields this adapter sets.
type inpaintRequest struct {
	Image              string  `json:"image"`
	Mask               string  `json:"mask"`
	Prompt             string  `json:"prompt"`
	NegativePrompt     string  `json:"negative_prompt"`
	SDSeed             int64   `json:"sd_seed"`
	SDSteps            int     `json:"sd_steps"`
	SDStrength         float64 `json:"sd_strength"`
	SDGuidanceScale    float64 `json:"sd_guidance_scale"`
	SDSampler          string  `json:"sd_sampler,omitempty"`
	SDKeepUnmaskedArea bool    `json:"sd_keep_unmasked_area"`
	HDStrategy         string  `json:"hd_strategy,omitempty"`
}

// Edit sends one inpaint.
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	img, err := backends.EncodePNG(req.Image)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	mask, err := backends.EncodeMask(req.Mask, req.Image.W(), req.Image.H(), backends.MaskGray)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	body, err := backends.JSONBody(inpaintRequest{
		Image:              base64.StdEncoding.EncodeToString(img),
		Mask:               base64.StdEncoding.EncodeToString(mask),
		Prompt:             req.Prompt,
		NegativePrompt:     req.Negative,
		SDSeed:             req.Seed,
		SDSteps:            req.Steps,
		SDStrength:         req.Strength,
		SDGuidanceScale:    req.Guidance,
		SDSampler:          b.sampler,
		SDKeepUnmaskedArea: req.Mask != nil,
		HDStrategy:         b.hdStrategy,
	})
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}

	var mu sync.Mutex // keeps the listener's reports and the final one apart
	var listener *progressListener
	if b.progress && req.Progress != nil {
		steps := max(req.Steps, 1)
		listener = listenProgress(ctx, b.spec.URL, b.call.Header, func(step int) {
			mu.Lock()
			defer mu.Unlock()
			req.Report(float64(step+1) / float64(steps) * 0.98)
		})
	}
	stopListening := sync.OnceFunc(listener.close)
	defer stopListening()
	res, err := b.call.Do(ctx, backends.Call{
		Op: "inpaint", Method: http.MethodPost, Path: "/api/v1/inpaint",
		Body: body, ContentType: "application/json", Retry: backends.RetrySafe,
	})
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	data, err := backends.ReadAll(res.Body)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, backends.Errorf(b, "read the inpainted image", "%v", err)
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "image/") {
		return nil, backends.Errorf(b, "inpaint", "the answer is %q, not an image: %s", ct, backends.Snippet(data[:min(len(data), 300)]))
	}
	out, err := backends.DecodeAnswer(data)
	if err != nil {
		return nil, backends.Errorf(b, "inpaint", "%v", err)
	}
	stopListening()
	mu.Lock()
	req.Report(1)
	mu.Unlock()
	return out, nil
}

var _ backends.Backend = (*Backend)(nil)
