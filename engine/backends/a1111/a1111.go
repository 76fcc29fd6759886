// Package a1111 is the backend adapter for the AUTOMATIC1111 Stable Diffusion web UI
// (and API-compatible forks such as Forge): POST /sdapi/v1/img2img with init_images,
// mask, denoising_strength, prompt, seed, steps and sampler, answered with base64
// images.
//
// The web UI runs one job at a time under its queue lock, and its progress
// (/sdapi/v1/progress) and interrupt (/sdapi/v1/interrupt) are server-wide: on a
// server other clients use, they are someone else's job as often as ours. So each
// request carries a task id of ours (force_task_id) and POST /internal/progress
// {id_task} says whether that task waits, runs or is done: progress is read from it,
// and a cancelled job is interrupted only while it is the one running, when it
// starts if it still waits (the web UI does not notice a closed request). A server
// without /internal/progress (started with --nowebui) cannot say whose job runs: a
// job there reports progress only at the end, and a cancel leaves it to finish
// rather than stop someone else's.
//
// The web UI quietly runs its loaded checkpoint when the one named does not exist,
// and its default sampler for an unknown one, so every job first checks the
// configured names against /sdapi/v1/sd-models, /samplers and /schedulers.
package a1111

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
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
	// abandonPolls bounds how many times a cancelled task the server has not
	// heard of is looked for (it may still be on its way in).
	abandonPolls int
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
	b.abandonPolls = 20
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
	ForceTaskID           string         `json:"force_task_id"`
}

type img2imgAnswer struct {
	Images []string `json:"images"`
	Info   string   `json:"info"`
}

// taskAnswer is /internal/progress's answer for one task.
type taskAnswer struct {
	Active    bool     `json:"active"`
	Queued    bool     `json:"queued"`
	Completed bool     `json:"completed"`
	Progress  *float64 `json:"progress"`
}

// errNoTaskProgress: the server has no /internal/progress.
var errNoTaskProgress = errors.New("the server cannot say whose job runs (no /internal/progress: started with --nowebui?)")

// multiple8 rounds a size to the nearest multiple of 8 (the latent grid), at least 64.
func multiple8(v int) int { return max((v+4)/8*8, 64) }

// Edit runs one img2img (an inpaint when the request has a mask).
func (b *Backend) Edit(ctx context.Context, req backends.Request) (*imaging.Image, error) {
	if err := req.Validate(); err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.spec.Timeout)
	defer cancel()
	if err := b.checkNames(ctx); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	photo, err := backends.EncodePNG(req.Image)
	if err != nil {
		return nil, backends.Errorf(b, "prepare the request", "%v", err)
	}
	task := "porchlight-" + randomID()
	body := img2imgRequest{
		InitImages: []string{base64.StdEncoding.EncodeToString(photo)},
		MaskBlur:   b.maskBlur, InpaintingFill: b.inpaintingFill, InpaintFullRes: b.fullRes, InpaintFullResPadding: 32,
		DenoisingStrength: req.Strength, Prompt: req.Prompt, NegativePrompt: req.Negative, Seed: req.Seed,
		Steps: req.Steps, CFGScale: req.Guidance, Width: multiple8(req.Image.W()), Height: multiple8(req.Image.H()),
		SamplerName: b.sampler, Scheduler: b.scheduler, BatchSize: 1, NIter: 1, SendImages: true, ForceTaskID: task,
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
			b.pollProgress(pctx, task, func(f float64) {
				mu.Lock()
				defer mu.Unlock()
				req.Report(f)
			})
		}()
	}
	var ans img2imgAnswer
	err = b.call.JSON(ctx, backends.Call{Op: "img2img", Method: http.MethodPost, Path: "/sdapi/v1/img2img",
		Body: jb, ContentType: "application/json", Retry: backends.RetryUnsent}, &ans)
	stopPolling()
	polling.Wait()
	if err != nil {
		switch {
		case ctx.Err() != nil:
			b.abandon(ctx, task)
			return nil, ctx.Err()
		case errors.Is(err, backends.ErrMaybeStarted):
			b.abandon(ctx, task) // its answer is lost: it would only keep the GPU busy
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

func randomID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(errors.New("a1111: no randomness: " + err.Error()))
	}
	return hex.EncodeToString(b[:])
}

func stripDataURL(s string) string {
	if strings.HasPrefix(s, "data:") {
		if _, after, ok := strings.Cut(s, ","); ok {
			return after
		}
	}
	return s
}

// taskState asks where task is.
func (b *Backend) taskState(ctx context.Context, task string) (taskAnswer, error) {
	body, err := backends.JSONBody(map[string]any{"id_task": task, "id_live_preview": -1, "live_preview": false})
	if err != nil {
		return taskAnswer{}, err
	}
	var st taskAnswer
	err = b.call.JSON(ctx, backends.Call{Op: "read the task's progress", Method: http.MethodPost, Path: "/internal/progress",
		Body: body, ContentType: "application/json", Retry: backends.RetryNever}, &st)
	var se *backends.StatusError
	if errors.As(err, &se) && (se.Status == http.StatusNotFound || se.Status == http.StatusMethodNotAllowed) {
		return taskAnswer{}, errNoTaskProgress
	}
	return st, err
}

// pollProgress reports the progress of our task only: other clients' jobs that run
// before it are not ours to show.
func (b *Backend) pollProgress(ctx context.Context, task string, report func(float64)) {
	t := time.NewTicker(b.interval)
	defer t.Stop()
	last := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := b.taskState(ctx, task)
		if errors.Is(err, errNoTaskProgress) {
			return
		}
		if err != nil || !st.Active || st.Progress == nil {
			continue
		}
		if f := min(max(*st.Progress, 0), 1) * 0.95; f > last {
			last = f
			report(f)
		}
	}
}

// abandon stops our task on the server without touching anyone else's: it is
// interrupted only while it is the job running. One still waiting in the queue is
// watched in the background and interrupted when it starts; one the server has
// not heard of is looked for a while, since its request may still be on its way
// in.
func (b *Backend) abandon(ctx context.Context, task string) {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.spec.Timeout)
	stop, seen := b.abandonStep(actx, task)
	if stop {
		cancel()
		return
	}
	go func() {
		defer cancel()
		t := time.NewTicker(b.interval)
		defer t.Stop()
		unseen := 0
		for {
			if seen {
				unseen = 0
			} else if unseen++; unseen > b.abandonPolls {
				return
			}
			select {
			case <-actx.Done():
				return
			case <-t.C:
			}
			if stop, seen = b.abandonStep(actx, task); stop {
				return
			}
		}
	}()
}

// abandonStep looks at task once and interrupts it when it runs. stop says the
// watch is over; seen that the task waits in the server's queue.
func (b *Backend) abandonStep(ctx context.Context, task string) (stop, seen bool) {
	st, err := b.taskState(ctx, task)
	switch {
	case err != nil:
		return true, false
	case st.Active:
		// Right after the check: the web UI has no interrupt of one task.
		b.call.JSON(ctx, backends.Call{Op: "interrupt", Method: http.MethodPost, Path: "/sdapi/v1/interrupt", Retry: backends.RetryNever}, nil)
		return true, true
	case st.Completed:
		return true, true
	}
	return false, st.Queued
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
