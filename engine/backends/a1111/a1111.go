// Package a1111 is the backend adapter for the AUTOMATIC1111 Stable Diffusion web UI
// (and API-compatible forks such as Forge): POST /sdapi/v1/img2img with init_images,
// mask, denoising_strength, prompt, seed, steps and sampler, answered with base64
// images; GET /sdapi/v1/progress polled for progress while the request runs; POST
// /sdapi/v1/interrupt when the job is cancelled (the web UI runs one job at a time
// and does not notice a closed request).
package a1111

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/porchlight/porchlight/engine/backends"
	"github.com/porchlight/porchlight/engine/imaging"
)

// Type is the adapter's config type.
var Type = backends.Type{
	Name: "a1111",
	Keys: []string{"model", "sampler", "scheduler", "mask_blur", "inpainting_fill", "inpaint_full_res", "progress_interval"},
	New:  New,
}

// Backend is an AUTOMATIC1111 server.
type Backend struct {
	spec           backends.Spec
	call           *backends.Caller
	model          string
	sampler        string
	scheduler      string
	maskBlur       int
	inpaintingFill int
	fullRes        bool
	interval       time.Duration
}

// New builds the adapter from its config: model (a checkpoint title, applied per
// request through override_settings), sampler (default "DPM++ 2M"), scheduler
// (e.g. "Karras"; the web UI's default when empty), mask_blur (default 4),
// inpainting_fill (0 fill, 1 original, 2 latent noise, 3 latent nothing; default 1),
// inpaint_full_res (work on the masked area only, default false) and
// progress_interval (default 500ms).
func New(spec backends.Spec) (backends.Backend, error) {
	b := &Backend{spec: spec}
	var err error
	if b.model, err = spec.String("model", ""); err != nil {
		return nil, err
	}
	if b.sampler, err = spec.String("sampler", "DPM++ 2M"); err != nil {
		return nil, err
	}
	if b.scheduler, err = spec.String("scheduler", ""); err != nil {
		return nil, err
	}
	if b.maskBlur, err = spec.Int("mask_blur", 4); err != nil {
		return nil, err
	}
	if b.maskBlur < 0 || b.maskBlur > 64 {
		return nil, fmt.Errorf("%s: must be 0 to 64", spec.Field("mask_blur"))
	}
	if b.inpaintingFill, err = spec.Int("inpainting_fill", 1); err != nil {
		return nil, err
	}
	if b.inpaintingFill < 0 || b.inpaintingFill > 3 {
		return nil, fmt.Errorf("%s: must be 0 (fill), 1 (original), 2 (latent noise) or 3 (latent nothing)", spec.Field("inpainting_fill"))
	}
	if b.fullRes, err = spec.Bool("inpaint_full_res", false); err != nil {
		return nil, err
	}
	if b.interval, err = spec.Duration("progress_interval", 500*time.Millisecond); err != nil {
		return nil, err
	}
	b.call = backends.NewCaller(spec, spec.Name+" (a1111)")
	if spec.APIKey != "" {
		// The web UI's --api-auth is HTTP basic "user:password".
		user, pass, ok := strings.Cut(spec.APIKey, ":")
		if !ok {
			return nil, fmt.Errorf("%s: AUTOMATIC1111's --api-auth is user:password", spec.Field("api_key"))
		}
		b.call.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user+":"+pass)))
	}
	return b, nil
}

func (b *Backend) Name() string { return b.spec.Name }
func (b *Backend) Type() string { return Type.Name }

// img2imgRequest holds the StableDiffusionProcessingImg2Img fields this adapter sets.
type img2imgRequest struct {
	InitImages            []string       `json:"init_images"`
	Mask                  string         `json:"mask,omitempty"`
	MaskBlur              int            `json:"mask_blur"`
	InpaintingFill        int            `json:"inpainting_fill"`
	InpaintFullRes        bool           `json:"inpaint_full_res"`
	InpaintFullResPadding int            `json:"inpaint_full_res_padding"`
	InpaintingMaskInvert  int            `json:"inpainting_mask_invert"`
	ResizeMode            int            `json:"resize_mode"`
	DenoisingStrength     float64        `json:"denoising_strength"`
	Prompt                string         `json:"prompt"`
	NegativePrompt        string         `json:"negative_prompt"`
	Seed                  int64          `json:"seed"`
	Steps                 int            `json:"steps"`
	CFGScale              float64        `json:"cfg_scale"`
	Width                 int            `json:"width"`
	Height                int            `json:"height"`
	SamplerName           string         `json:"sampler_name"`
	Scheduler             string         `json:"scheduler,omitempty"`
	BatchSize             int            `json:"batch_size"`
	NIter                 int            `json:"n_iter"`
	SendImages            bool           `json:"send_images"`
	SaveImages            bool           `json:"save_images"`
	OverrideSettings      map[string]any `json:"override_settings,omitempty"`
	RestoreAfterwards     bool           `json:"override_settings_restore_afterwards"`
}

type img2imgAnswer struct {
	Images []string `json:"images"`
	Info   string   `json:"info"`
}

type progressAnswer struct {
	Progress float64 `json:"progress"`
	State    struct {
		JobCount    int  `json:"job_count"`
		Interrupted bool `json:"interrupted"`
	} `json:"state"`
}

// multiple8 rounds a size to the nearest multiple of 8 (the latent grid), at least 64.
func multiple8(v int) int { return max((v+4)/8*8, 64) }

// Edit runs one img2img (an inpaint when the request has a mask).
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	photo, err := backends.EncodePNG(req.Image)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	body := img2imgRequest{
		InitImages: []string{base64.StdEncoding.EncodeToString(photo)},
		MaskBlur:   b.maskBlur, InpaintingFill: b.inpaintingFill, InpaintFullRes: b.fullRes, InpaintFullResPadding: 32,
		DenoisingStrength: req.Strength, Prompt: req.Prompt, NegativePrompt: req.Negative, Seed: req.Seed,
		Steps: req.Steps, CFGScale: req.Guidance, Width: multiple8(req.Image.W()), Height: multiple8(req.Image.H()),
		SamplerName: b.sampler, Scheduler: b.scheduler, BatchSize: 1, NIter: 1, SendImages: true,
	}
	if req.Mask != nil {
		m, err := backends.EncodeMask(req.Mask, 0, 0, backends.MaskGray)
		if err != nil {
			return nil, backends.Errorf(b, "prepare the request", "%v", err)
		}
		body.Mask = base64.StdEncoding.EncodeToString(m)
	}
	if b.model != "" {
		body.OverrideSettings = map[string]any{"sd_model_checkpoint": b.model}
		body.RestoreAfterwards = true
	}
	jb, err := backends.JSONBody(body)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}

	// Progress is polled while the request runs.
	var mu sync.Mutex
	pctx, stopPolling := context.WithCancel(ctx)
	var polling sync.WaitGroup
	if req.Progress != nil {
		polling.Add(1)
		go func() {
			defer polling.Done()
			b.pollProgress(pctx, func(f float64) {
				mu.Lock()
				defer mu.Unlock()
				req.Report(f)
			})
		}()
	}
	var ans img2imgAnswer
	err = b.call.JSON(ctx, backends.Call{Op: "img2img", Method: http.MethodPost, Path: "/sdapi/v1/img2img",
		Body: jb, ContentType: "application/json", Retry: backends.RetrySafe}, &ans)
	stopPolling()
	polling.Wait()
	if err != nil {
		if ctx.Err() != nil {
			b.interrupt(ctx)
			return nil, ctx.Err()
		}
		return nil, err
	}
	if len(ans.Images) == 0 {
		return nil, backends.Errorf(b, "img2img", "the answer has no images (send_images was true)")
	}
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(stripDataURL(ans.Images[0])))
	if err != nil {
		return nil, backends.Errorf(b, "img2img", "the answer's image is not base64: %v", err)
	}
	img, err := backends.DecodeAnswer(data)
	if err != nil {
		return nil, backends.Errorf(b, "img2img", "%v", err)
	}
	mu.Lock()
	req.Report(1)
	mu.Unlock()
	return img, nil
}

func stripDataURL(s string) string {
	if strings.HasPrefix(s, "data:") {
		if _, after, ok := strings.Cut(s, ","); ok {
			return after
		}
	}
	return s
}

func (b *Backend) pollProgress(ctx context.Context, report func(float64)) {
	t := time.NewTicker(b.interval)
	defer t.Stop()
	last := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var p progressAnswer
		err := b.call.JSON(ctx, backends.Call{Op: "read progress", Method: http.MethodGet, Path: "/sdapi/v1/progress",
			Query: url.Values{"skip_current_image": {"true"}}, Retry: backends.RetryNever}, &p)
		if err != nil || p.State.JobCount == 0 {
			continue
		}
		if f := min(max(p.Progress, 0), 1) * 0.95; f > last {
			last = f
			report(f)
		}
	}
}

// interrupt stops the running job; the web UI answers the abandoned request with
// what it had, which nobody reads.
func (b *Backend) interrupt(ctx context.Context) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var p progressAnswer
	if err := b.call.JSON(cctx, backends.Call{Op: "read progress", Method: http.MethodGet, Path: "/sdapi/v1/progress",
		Query: url.Values{"skip_current_image": {"true"}}, Retry: backends.RetryNever}, &p); err != nil || p.State.JobCount == 0 {
		return
	}
	b.call.JSON(cctx, backends.Call{Op: "interrupt", Method: http.MethodPost, Path: "/sdapi/v1/interrupt", Retry: backends.RetryNever}, nil)
}

var _ backends.Backend = (*Backend)(nil)

// ClassifyRoom asks the web UI's interrogator (POST /sdapi/v1/interrogate, CLIP) for
// a caption of the photo and reads the room type from it.
func (b *Backend) ClassifyRoom(ctx context.Context, img *imaging.Image) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, min(b.spec.Timeout, 2*time.Minute))
	defer cancel()
	small := img
	if w, h := imaging.FitWithin(img.W(), img.H(), 512); w != img.W() || h != img.H() {
		small = imaging.Resize(img, w, h)
	}
	photo, err := backends.EncodePNG(small)
	if err != nil {
		return "", backends.Errorf(b, "interrogate", "%v", err)
	}
	body, err := backends.JSONBody(map[string]string{"image": base64.StdEncoding.EncodeToString(photo), "model": "clip"})
	if err != nil {
		return "", backends.Errorf(b, "interrogate", "%v", err)
	}
	var ans struct {
		Caption *string `json:"caption"`
	}
	if err := b.call.JSON(ctx, backends.Call{Op: "interrogate", Method: http.MethodPost, Path: "/sdapi/v1/interrogate",
		Body: body, ContentType: "application/json", Retry: backends.RetrySafe}, &ans); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	if ans.Caption == nil {
		return "", backends.Errorf(b, "interrogate", "the answer has no caption")
	}
	room := backends.RoomFromCaption(*ans.Caption)
	if room == "" {
		return "", backends.Errorf(b, "interrogate", "the caption %q names no room type", *ans.Caption)
	}
	return room, nil
}

var _ backends.RoomClassifier = (*Backend)(nil)
