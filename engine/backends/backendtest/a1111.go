package backendtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// a1111Fields are the fields of the web UI's StableDiffusionImg2ImgProcessingAPI
// model (modules/api/models.py over StableDiffusionProcessingImg2Img); any other name
// is refused as FastAPI would with extra="forbid".
var a1111Fields = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`prompt negative_prompt styles seed subseed subseed_strength
		seed_resize_from_h seed_resize_from_w sampler_name scheduler batch_size n_iter steps cfg_scale
		distilled_cfg_scale width height restore_faces tiling do_not_save_samples do_not_save_grid eta
		denoising_strength s_min_uncond s_churn s_tmax s_tmin s_noise override_settings
		override_settings_restore_afterwards refiner_checkpoint refiner_switch_at disable_extra_networks
		firstpass_image comments init_images resize_mode image_cfg_scale mask mask_blur_x mask_blur_y
		mask_blur mask_round inpainting_fill inpaint_full_res inpaint_full_res_padding
		inpainting_mask_invert initial_noise_multiplier latent_mask sampler_index include_init_images
		script_name script_args send_images save_images alwayson_scripts force_task_id infotext`) {
		a1111Fields[f] = true
	}
}

// A1111 is a fake AUTOMATIC1111 API: img2img, progress and interrupt.
type A1111 struct {
	*state
	Server *httptest.Server
	URL    string

	caption string // what the interrogator answers

	mu          sync.Mutex
	jobRunning  bool
	step, steps int
	interrupted chan struct{}
	runLock     sync.Mutex // the web UI's queue lock: one job at a time
}

// NewA1111 starts a fake AUTOMATIC1111 server on 127.0.0.1.
func NewA1111(t testing.TB) *A1111 {
	f := &A1111{state: newState()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sdapi/v1/img2img", f.img2img)
	mux.HandleFunc("GET /sdapi/v1/progress", f.progress)
	mux.HandleFunc("POST /sdapi/v1/interrupt", f.interrupt)
	mux.HandleFunc("POST /sdapi/v1/interrogate", f.interrogate)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL
	t.Cleanup(f.Close)
	return f
}

// Close stops the server, interrupting a job that waits.
func (f *A1111) Close() {
	f.mu.Lock()
	if f.interrupted != nil {
		select {
		case <-f.interrupted:
		default:
			close(f.interrupted)
		}
	}
	f.mu.Unlock()
	f.Server.Close()
}

func validationError(w http.ResponseWriter, field, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	json.NewEncoder(w).Encode(map[string]any{"detail": []any{map[string]any{"loc": []any{"body", field}, "msg": msg, "type": "value_error"}}})
}

func (f *A1111) img2img(w http.ResponseWriter, r *http.Request) {
	if f.attempt() {
		fastapiError(w, http.StatusServiceUnavailable, "HTTPException", "Service Unavailable")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&fields); err != nil {
		validationError(w, "body", "not a JSON object")
		return
	}
	var names []string
	for k := range fields {
		if !a1111Fields[k] {
			validationError(w, k, "extra fields not permitted")
			return
		}
		names = append(names, k)
	}
	sort.Strings(names)
	var req struct {
		InitImages     []string       `json:"init_images"`
		Mask           *string        `json:"mask"`
		Prompt         string         `json:"prompt"`
		Negative       string         `json:"negative_prompt"`
		Seed           int64          `json:"seed"`
		Steps          int            `json:"steps"`
		CFG            float64        `json:"cfg_scale"`
		Denoise        *float64       `json:"denoising_strength"`
		Width          int            `json:"width"`
		Height         int            `json:"height"`
		InpaintingFill *int           `json:"inpainting_fill"`
		Override       map[string]any `json:"override_settings"`
		SendImages     *bool          `json:"send_images"`
	}
	req.Steps, req.CFG, req.Width, req.Height, req.Seed = 50, 7, 512, 512, -1
	raw, _ := json.Marshal(fields)
	if err := json.Unmarshal(raw, &req); err != nil {
		validationError(w, "body", err.Error())
		return
	}
	if len(req.InitImages) == 0 {
		validationError(w, "init_images", "none is not an allowed value")
		return
	}
	if req.Denoise != nil && (*req.Denoise < 0 || *req.Denoise > 1) {
		validationError(w, "denoising_strength", "must be 0 to 1")
		return
	}
	if req.InpaintingFill != nil && (*req.InpaintingFill < 0 || *req.InpaintingFill > 3) {
		validationError(w, "inpainting_fill", "must be 0 to 3")
		return
	}
	if req.Width%8 != 0 || req.Height%8 != 0 || req.Width < 64 || req.Height < 64 {
		validationError(w, "width", "width and height must be multiples of 8, at least 64")
		return
	}
	b, err := base64.StdEncoding.DecodeString(req.InitImages[0])
	if err != nil {
		fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
		return
	}
	src, err := decodeImage(b)
	if err != nil {
		fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
		return
	}
	var mask *image.Gray
	if req.Mask != nil {
		mb, err := base64.StdEncoding.DecodeString(*req.Mask)
		if err != nil {
			fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded mask")
			return
		}
		mm, err := decodeImage(mb)
		if err != nil || mm.Bounds().Size() != src.Bounds().Size() {
			fastapiError(w, http.StatusInternalServerError, "HTTPException", "mask must be an image of the init image's size")
			return
		}
		mask, _ = grayMask(mm)
	}
	// resize_mode 0: the init image (and mask) are stretched to width x height.
	src = stretch(src, req.Width, req.Height)
	if mask != nil {
		mask = stretchGray(mask, req.Width, req.Height)
	}
	model, _ := req.Override["sd_model_checkpoint"].(string)
	sc := f.get()
	f.record(Job{Prompt: req.Prompt, Negative: req.Negative, Seed: req.Seed, Steps: req.Steps, Strength: deref(req.Denoise, 0.75),
		Guidance: req.CFG, Width: req.Width, Height: req.Height, Masked: mask != nil, Model: model, Fields: names})

	f.runLock.Lock()
	defer f.runLock.Unlock()
	f.mu.Lock()
	f.jobRunning, f.step, f.steps = true, 0, max(req.Steps, 1)
	if sc.Steps > 0 {
		f.steps = sc.Steps
	}
	f.interrupted = make(chan struct{})
	intr := f.interrupted
	steps := f.steps
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.jobRunning = false
		f.mu.Unlock()
	}()
	if sc.Mode == ModeFail {
		st := sc.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		fastapiError(w, st, "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")
		return
	}
	for i := 1; i <= steps; i++ {
		f.mu.Lock()
		f.step = i
		f.mu.Unlock()
		if sc.Mode == ModeDrop {
			f.Server.CloseClientConnections()
			f.Server.Listener.Close()
			return
		}
		wait := sc.delay()
		if sc.Mode == ModeHang {
			wait = time.Hour
		}
		select {
		case <-intr:
			i = steps // the web UI stops sampling and answers what it has
		case <-time.After(wait):
		}
	}
	var out []byte
	if sc.Mode == ModeGarbage {
		out = []byte("definitely not an image")
	} else {
		out = answer(sc.Mode, src, mask, req.Seed)
	}
	info, _ := json.Marshal(map[string]any{"prompt": req.Prompt, "seed": req.Seed, "steps": req.Steps})
	writeJSON(w, map[string]any{"images": []string{base64.StdEncoding.EncodeToString(out)}, "parameters": fields, "info": string(info)})
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

func (f *A1111) progress(w http.ResponseWriter, r *http.Request) {
	for k := range r.URL.Query() {
		if k != "skip_current_image" {
			validationError(w, k, "extra fields not permitted")
			return
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p, jobs := 0.0, 0
	if f.jobRunning {
		jobs = 1
		p = float64(f.step) / float64(max(f.steps, 1))
	}
	interrupted := false
	if f.interrupted != nil {
		select {
		case <-f.interrupted:
			interrupted = true
		default:
		}
	}
	writeJSON(w, map[string]any{"progress": p, "eta_relative": 1.5,
		"state": map[string]any{"skipped": false, "interrupted": interrupted, "job": fmt.Sprintf("job %d", jobs),
			"job_count": jobs, "job_timestamp": "20250101000000", "job_no": 0, "sampling_step": f.step, "sampling_steps": f.steps},
		"current_image": nil, "textinfo": nil})
}

func (f *A1111) interrupt(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.jobRunning && f.interrupted != nil {
		select {
		case <-f.interrupted:
		default:
			close(f.interrupted)
			f.cancel()
		}
	}
	f.mu.Unlock()
	writeJSON(w, map[string]any{})
}

// interrogate is POST /sdapi/v1/interrogate {image, model}: a caption of the image.
func (f *A1111) interrogate(w http.ResponseWriter, r *http.Request) {
	var req map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		validationError(w, "body", "not a JSON object")
		return
	}
	for k := range req {
		if k != "image" && k != "model" {
			validationError(w, k, "extra fields not permitted")
			return
		}
	}
	var img, model string
	json.Unmarshal(req["image"], &img)
	json.Unmarshal(req["model"], &model)
	if model != "clip" && model != "deepdanbooru" {
		fastapiError(w, http.StatusNotFound, "HTTPException", "Model not found: "+model)
		return
	}
	b, err := base64.StdEncoding.DecodeString(img)
	if err != nil {
		fastapiError(w, http.StatusNotFound, "HTTPException", "Image not found")
		return
	}
	if _, err := decodeImage(b); err != nil {
		fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
		return
	}
	f.mu.Lock()
	caption := f.caption
	f.mu.Unlock()
	writeJSON(w, map[string]any{"caption": caption})
}

// SetCaption sets what the interrogator answers.
func (f *A1111) SetCaption(c string) {
	f.mu.Lock()
	f.caption = c
	f.mu.Unlock()
}

// stretch resizes m to w×h by nearest neighbour.
func stretch(m image.Image, w, h int) image.Image {
	in := toNRGBA(m)
	sw, sh := in.Rect.Dx(), in.Rect.Dy()
	if sw == w && sh == h {
		return in
	}
	out := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		sy := y * sh / h
		for x := 0; x < w; x++ {
			sx := x * sw / w
			copy(out.Pix[y*out.Stride+4*x:y*out.Stride+4*x+4], in.Pix[sy*in.Stride+4*sx:])
		}
	}
	return out
}

func stretchGray(m *image.Gray, w, h int) *image.Gray {
	b := m.Bounds()
	out := image.NewGray(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			out.SetGray(x, y, m.GrayAt(b.Min.X+x*b.Dx()/w, b.Min.Y+y*b.Dy()/h))
		}
	}
	return out
}
