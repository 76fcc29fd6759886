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
//
// IOPaint sends every step to every connected client, with nothing to say whose
// job it is. So by default one job at a time goes to each IOPaint server from this
// process (max_in_flight allows more), and a job counts only the steps it expects:
// the diffusers pipeline runs int(sd_steps × sd_strength) of them (twice that, less
// one, for second-order samplers). Steps of another client's job that fit the count
// cannot be told apart; progress never goes back.
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
	Keys: []string{"sampler", "progress", "hd_strategy", "max_in_flight"},
	New:  New,
}

// Backend is an IOPaint server.
type Backend struct {
	spec       backends.Spec
	call       *backends.Caller
	sampler    string
	hdStrategy string
	progress   bool
	inFlight   int
	slots      *slots
}

// slots bounds the jobs in flight to one server, shared by every backend of this
// process that names its address.
type slots struct {
	mu   sync.Mutex
	busy int
	free chan struct{} // closed and replaced when a job ends
}

var servers sync.Map // base URL -> *slots

func (s *slots) acquire(ctx context.Context, limit int) error {
	for {
		s.mu.Lock()
		if s.busy < limit {
			s.busy++
			s.mu.Unlock()
			return nil
		}
		free := s.free
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-free:
		}
	}
}

func (s *slots) release() {
	s.mu.Lock()
	s.busy--
	close(s.free)
	s.free = make(chan struct{})
	s.mu.Unlock()
}

// New builds the adapter from its config: sampler (sd_sampler, e.g. "DPM++ 2M";
// IOPaint's default when empty), hd_strategy (Crop, Resize or Original; IOPaint's
// default when empty), progress (listen to Socket.IO, default true) and
// max_in_flight (jobs sent to the server at once, default 1).
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
	if b.inFlight, err = spec.Int("max_in_flight", 1); err != nil {
		return nil, err
	}
	if b.inFlight < 1 || b.inFlight > 64 {
		return nil, fmt.Errorf("%s: must be 1 to 64", spec.Field("max_in_flight"))
	}
	sl, _ := servers.LoadOrStore(spec.URL.String(), &slots{free: make(chan struct{})})
	b.slots = sl.(*slots)
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

	if err := b.slots.acquire(ctx, b.inFlight); err != nil {
		return nil, err
	}
	defer b.slots.release()
	var mu sync.Mutex // keeps the listener's reports and the final one apart
	var listener *progressListener
	if b.progress && req.Progress != nil {
		steps := expectedSteps(req.Steps, req.Strength, b.sampler)
		last := 0.0
		listener = listenProgress(ctx, b.spec.URL, b.call.Header, func(step int) {
			if step >= steps {
				return // another client's job: ours has fewer steps
			}
			mu.Lock()
			defer mu.Unlock()
			if f := float64(step+1) / float64(steps) * 0.98; f > last {
				last = f
				req.Report(f)
			}
		})
	}
	stopListening := sync.OnceFunc(listener.close)
	defer stopListening()
	res, err := b.call.Do(ctx, backends.Call{
		Op: "inpaint", Method: http.MethodPost, Path: "/api/v1/inpaint",
		Body: body, ContentType: "application/json", Retry: backends.RetryUnsent,
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
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

// expectedSteps is how many progress events IOPaint sends for a job: diffusers'
// inpainting pipeline runs min(int(steps × strength), steps) sampler steps, and
// IOPaint's default sampler (UniPC) is first-order.
func expectedSteps(steps int, strength float64, sampler string) int {
	n := min(int(float64(steps)*strength), steps)
	if strings.HasPrefix(sampler, "Heun") || strings.HasPrefix(sampler, "DPM2") {
		n = 2*n - 1 // second-order: a callback after each of the two model calls but the first
	}
	return max(n, 1)
}

var _ backends.Backend = (*Backend)(nil)
