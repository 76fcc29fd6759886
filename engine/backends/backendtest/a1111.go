package backendtest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"net/http"
	"net/http/httptest"
	"path"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// A1111Checkpoints are the checkpoint files the fake AUTOMATIC1111 has, relative to
// its models folder; the first is loaded.
var A1111Checkpoints = []string{"juggernautXL_v9.safetensors", "realisticVision_v51.safetensors", "SDXL/sd_xl_base_1.0.safetensors"}

// A1111Samplers are the fake's samplers, in the web UI's order: the first is the
// default that replaces a name it does not know.
var A1111Samplers = []string{"DPM++ 2M", "DPM++ SDE", "DPM++ 2M SDE", "DPM++ 2S a", "Euler a", "Euler", "LMS", "Heun",
	"DPM2", "DPM2 a", "Restart", "DDIM", "PLMS", "UniPC", "LCM"}

// a1111Scheduler is one of modules/sd_schedulers.py's schedulers.
type a1111Scheduler struct {
	name, label string
	aliases     []string
}

var a1111Schedulers = []a1111Scheduler{{"automatic", "Automatic", nil}, {"uniform", "Uniform", nil}, {"karras", "Karras", nil},
	{"exponential", "Exponential", nil}, {"polyexponential", "Polyexponential", nil}, {"sgm_uniform", "SGM Uniform", []string{"SGMUniform"}},
	{"kl_optimal", "KL Optimal", nil}, {"align_your_steps", "Align Your Steps", nil}, {"simple", "Simple", nil}, {"normal", "Normal", nil}}

// a1111Checkpoint is a CheckpointInfo of modules/sd_models.py.
type a1111Checkpoint struct {
	name, nameForExtra, modelName, shorthash, sha256, title, filename string
}

func newA1111Checkpoint(name string) a1111Checkpoint {
	sum := sha256.Sum256([]byte(name))
	c := a1111Checkpoint{name: name, sha256: hex.EncodeToString(sum[:])}
	c.shorthash = c.sha256[:10]
	base := path.Base(name)
	c.nameForExtra = strings.TrimSuffix(base, path.Ext(base))
	c.modelName = strings.TrimSuffix(strings.ReplaceAll(name, "/", "_"), path.Ext(name))
	c.title = name + " [" + c.shorthash + "]"
	c.filename = "/srv/webui/models/Stable-diffusion/" + name
	return c
}

// ids are the checkpoint_aliases the web UI registers for it.
func (c a1111Checkpoint) ids() []string {
	return []string{c.modelName, c.title, c.name, c.nameForExtra, c.shorthash, c.sha256,
		c.name + " [" + c.shorthash + "]", c.nameForExtra + " [" + c.shorthash + "]"}
}

// A1111 is a fake AUTOMATIC1111 web UI started with --api: img2img behind the queue
// lock that runs one job at a time, the server-wide /sdapi/v1/progress and
// /sdapi/v1/interrupt, the per-task /internal/progress (force_task_id), the lists of
// checkpoints, samplers and schedulers, and the interrogator. It follows the web UI
// where it is lax: unknown request fields are ignored (pydantic's default), data:
// URLs are accepted, a checkpoint override that names no checkpoint runs the loaded
// one, and an unknown sampler or scheduler runs the default.
type A1111 struct {
	*state
	Server *httptest.Server
	URL    string

	mu             sync.Mutex
	caption        string // what the interrogator answers
	auth           string // --api-auth user:password, "" for none
	noTaskProgress bool   // an API-only server has no /internal/progress
	checkpoints    []a1111Checkpoint
	loaded         int // index of the checkpoint in memory
	current        *a1111Task
	pending        map[string]bool
	finished       []string
	tasks          int
	polls          int
	runLock        sync.Mutex // the web UI's queue lock: one job at a time
	closed         chan struct{}
	closeOnce      sync.Once
}

// a1111Task is one img2img request.
type a1111Task struct {
	id          string
	job         int
	step, steps int
	interrupted chan struct{}
	once        sync.Once
}

func (t *a1111Task) interrupt() { t.once.Do(func() { close(t.interrupted) }) }

// NewA1111 starts a fake AUTOMATIC1111 server on 127.0.0.1.
func NewA1111(t testing.TB) *A1111 {
	f := &A1111{state: newState(), pending: map[string]bool{}, closed: make(chan struct{})}
	for _, n := range A1111Checkpoints {
		f.checkpoints = append(f.checkpoints, newA1111Checkpoint(n))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /sdapi/v1/img2img", f.api(f.img2img))
	mux.HandleFunc("GET /sdapi/v1/progress", f.api(f.progress))
	mux.HandleFunc("POST /sdapi/v1/interrupt", f.api(f.interrupt))
	mux.HandleFunc("POST /sdapi/v1/interrogate", f.api(f.interrogate))
	mux.HandleFunc("GET /sdapi/v1/sd-models", f.api(f.sdModels))
	mux.HandleFunc("GET /sdapi/v1/samplers", f.api(f.samplers))
	mux.HandleFunc("GET /sdapi/v1/schedulers", f.api(f.schedulers))
	mux.HandleFunc("GET /sdapi/v1/options", f.api(f.options))
	mux.HandleFunc("POST /internal/progress", f.taskProgress)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL
	t.Cleanup(f.Close)
	return f
}

// SetAuth makes the API require HTTP basic "user:password" (--api-auth).
func (f *A1111) SetAuth(userPassword string) {
	f.mu.Lock()
	f.auth = userPassword
	f.mu.Unlock()
}

// DropTaskProgress makes /internal/progress answer 404, as on a server started with
// --nowebui, where only the API's routes exist.
func (f *A1111) DropTaskProgress() {
	f.mu.Lock()
	f.noTaskProgress = true
	f.mu.Unlock()
}

// Loaded is the title of the checkpoint in memory.
func (f *A1111) Loaded() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.checkpoints[f.loaded].title
}

// Polls is how many times progress was read (either route).
func (f *A1111) Polls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.polls
}

// WaitPolls waits until progress was read n times, or d passed.
func (f *A1111) WaitPolls(n int, d time.Duration) bool {
	return f.WaitJobs(d, func([]Job) bool { return f.Polls() >= n })
}

func (f *A1111) polled() {
	f.mu.Lock()
	f.polls++
	f.mu.Unlock()
	f.state.mu.Lock()
	f.state.cond.Broadcast()
	f.state.mu.Unlock()
}

// Close stops the server, interrupting the job that runs.
func (f *A1111) Close() {
	f.closeOnce.Do(func() { close(f.closed) })
	f.mu.Lock()
	if f.current != nil {
		f.current.interrupt()
	}
	f.mu.Unlock()
	f.Server.Close()
}

// api wraps a /sdapi route in the web UI's --api-auth check.
func (f *A1111) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		auth := f.auth
		f.mu.Unlock()
		if auth != "" {
			user, pass, ok := r.BasicAuth()
			wantUser, wantPass, _ := strings.Cut(auth, ":")
			if !ok {
				w.Header().Set("WWW-Authenticate", "Basic")
				fastapiError(w, http.StatusUnauthorized, "HTTPException", "Not authenticated")
				return
			}
			if user != wantUser || subtle.ConstantTimeCompare([]byte(pass), []byte(wantPass)) != 1 {
				w.Header().Set("WWW-Authenticate", "Basic")
				fastapiError(w, http.StatusUnauthorized, "HTTPException", "Incorrect username or password")
				return
			}
		}
		h(w, r)
	}
}

// validationError answers FastAPI's 422 for a request that does not fit its model.
func validationError(w http.ResponseWriter, field, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	json.NewEncoder(w).Encode(map[string]any{"detail": []any{map[string]any{"loc": []any{"body", field}, "msg": msg, "type": "type_error"}}})
}

// decodeA1111Image is decode_base64_to_image: plain base64 or a data:image/ URL.
func decodeA1111Image(s string) (image.Image, error) {
	if strings.HasPrefix(s, "data:image/") {
		if _, rest, ok := strings.Cut(s, ";"); ok {
			if _, b64, ok := strings.Cut(rest, ","); ok {
				s = b64
			}
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, err
	}
	return decodeImage(b)
}

// samplerAndScheduler is sd_samplers.get_sampler_and_scheduler: a scheduler named at
// the end of the sampler ("DPM++ 2M Karras") is split off, and names it does not
// know become the defaults.
func samplerAndScheduler(sampler, scheduler string) (string, string) {
	found := a1111Schedulers[0]
	for _, s := range a1111Schedulers {
		if scheduler == s.name || scheduler == s.label {
			found = s
		}
	}
	name := sampler
	if name == "" {
		name = A1111Samplers[0]
	}
	for _, s := range a1111Schedulers {
		for _, opt := range append([]string{s.label, s.name}, s.aliases...) {
			if strings.HasSuffix(name, " "+opt) {
				found = s
				name = name[:len(name)-len(opt)-1]
				break
			}
		}
	}
	for _, s := range A1111Samplers {
		if s == name {
			return s, found.label
		}
	}
	return A1111Samplers[0], found.label
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
		names = append(names, k) // pydantic ignores names it does not know
	}
	sort.Strings(names)
	var req struct {
		InitImages  []string       `json:"init_images"`
		Mask        *string        `json:"mask"`
		Prompt      string         `json:"prompt"`
		Negative    string         `json:"negative_prompt"`
		Seed        int64          `json:"seed"`
		Steps       int            `json:"steps"`
		CFG         float64        `json:"cfg_scale"`
		Denoise     *float64       `json:"denoising_strength"`
		Width       int            `json:"width"`
		Height      int            `json:"height"`
		SamplerName string         `json:"sampler_name"`
		Scheduler   string         `json:"scheduler"`
		Override    map[string]any `json:"override_settings"`
		TaskID      *string        `json:"force_task_id"`
	}
	req.Steps, req.CFG, req.Width, req.Height, req.Seed = 50, 7, 512, 512, -1
	for k, v := range fields {
		one, _ := json.Marshal(map[string]json.RawMessage{k: v})
		if err := json.Unmarshal(one, &req); err != nil {
			validationError(w, k, err.Error())
			return
		}
	}
	if len(req.InitImages) == 0 {
		fastapiError(w, http.StatusNotFound, "HTTPException", "Init image not found")
		return
	}
	var mask *image.Gray
	if req.Mask != nil && *req.Mask != "" {
		mm, err := decodeA1111Image(*req.Mask)
		if err != nil {
			fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
			return
		}
		mask, _ = grayMask(mm)
	}
	sampler, scheduler := samplerAndScheduler(req.SamplerName, req.Scheduler)
	src, err := decodeA1111Image(req.InitImages[0])
	if err != nil {
		fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
		return
	}
	if mask != nil && mask.Bounds().Size() != src.Bounds().Size() {
		fastapiError(w, http.StatusInternalServerError, "ValueError", "images do not match")
		return
	}
	sc := f.get()
	f.mu.Lock()
	f.tasks++
	id := fmt.Sprintf("task(img2img-%07d)", f.tasks)
	if req.TaskID != nil && *req.TaskID != "" {
		id = *req.TaskID
	}
	// An override that names no checkpoint is dropped: the loaded one runs.
	override := -1
	if name, ok := req.Override["sd_model_checkpoint"].(string); ok {
		for i, c := range f.checkpoints {
			for _, a := range c.ids() {
				if a == name {
					override = i
				}
			}
		}
	}
	f.pending[id] = true
	f.mu.Unlock()
	job := f.record(Job{Prompt: req.Prompt, Negative: req.Negative, Seed: req.Seed, Steps: req.Steps, Strength: deref(req.Denoise, 0.75),
		Guidance: req.CFG, Width: req.Width, Height: req.Height, Masked: mask != nil, Sampler: sampler, Scheduler: scheduler, Fields: names},
		OutcomeWaiting)
	if sc.DropAnswer {
		// The connection goes; the handler, as the web UI's does, runs on.
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		w = discardWriter{}
	}

	f.runLock.Lock()
	defer f.runLock.Unlock()
	task := &a1111Task{id: id, job: job, steps: max(req.Steps, 1), interrupted: make(chan struct{})}
	if sc.Steps > 0 {
		task.steps = sc.Steps
	}
	f.mu.Lock()
	delete(f.pending, id)
	f.current = task
	restore := f.loaded
	if override >= 0 {
		f.loaded = override
	}
	model := f.checkpoints[f.loaded].title
	f.mu.Unlock()
	f.update(job, func(j *Job) { j.Model, j.Outcome = model, OutcomeRunning })
	select {
	case <-f.closed:
		task.interrupt()
	default:
	}
	if sc.Mode == ModeFail {
		// finish_task is skipped on an exception: the task stays the current one.
		f.end(job, OutcomeFailed)
		st := sc.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		fastapiError(w, st, "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")
		return
	}
	for i := 1; i <= task.steps; i++ {
		f.mu.Lock()
		task.step = i
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
		case <-task.interrupted:
			i = task.steps // the web UI stops sampling and answers what it has
			f.end(job, OutcomeInterrupted)
		case <-time.After(wait):
		}
	}
	f.mu.Lock()
	if f.current == task {
		f.current = nil
	}
	f.finished = append(f.finished, id)
	if len(f.finished) > 16 {
		f.finished = f.finished[1:]
	}
	if override >= 0 {
		f.loaded = restore // override_settings_restore_afterwards
	}
	f.mu.Unlock()
	f.end(job, OutcomeDone)
	var out []byte
	if sc.Mode == ModeGarbage {
		out = []byte("definitely not an image")
	} else {
		out = answer(sc.Mode, stretch(src, req.Width, req.Height), stretchMask(mask, req.Width, req.Height), req.Seed)
	}
	info, _ := json.Marshal(map[string]any{"prompt": req.Prompt, "seed": req.Seed, "steps": req.Steps, "sampler_name": sampler})
	writeJSON(w, map[string]any{"images": []string{base64.StdEncoding.EncodeToString(out)}, "parameters": fields, "info": string(info)})
}

// discardWriter stands in for a connection that is gone.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}

func stretchMask(m *image.Gray, w, h int) *image.Gray {
	if m == nil {
		return nil
	}
	return stretchGray(m, w, h)
}

func deref(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

// progress is GET /sdapi/v1/progress: the server's state, whoever's job it is.
func (f *A1111) progress(w http.ResponseWriter, r *http.Request) {
	defer f.polled()
	f.mu.Lock()
	defer f.mu.Unlock()
	p, jobs, step, steps := 0.0, 0, 0, 0
	if t := f.current; t != nil {
		jobs, step, steps = 1, t.step, t.steps
		p = 0.01 + float64(step)/float64(max(steps, 1))
	}
	writeJSON(w, map[string]any{"progress": min(p, 1), "eta_relative": 1.5,
		"state": map[string]any{"skipped": false, "interrupted": false, "job": "scripts_img2img",
			"job_count": jobs, "job_timestamp": "20250101000000", "job_no": 0, "sampling_step": step, "sampling_steps": steps},
		"current_image": nil, "textinfo": nil, "current_task": nil})
}

// taskProgress is POST /internal/progress {id_task}: where one task is.
func (f *A1111) taskProgress(w http.ResponseWriter, r *http.Request) {
	defer f.polled()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.noTaskProgress {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"detail":"Not Found"}`))
		return
	}
	var req struct {
		IDTask *string `json:"id_task"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		validationError(w, "body", "not a JSON object")
		return
	}
	id := ""
	if req.IDTask != nil {
		id = *req.IDTask
	}
	active := f.current != nil && f.current.id == id
	completed := false
	for _, d := range f.finished {
		completed = completed || d == id
	}
	out := map[string]any{"active": active, "queued": f.pending[id], "completed": completed, "progress": nil, "eta": nil,
		"live_preview": nil, "id_live_preview": -1, "textinfo": "Waiting..."}
	if f.pending[id] {
		out["textinfo"] = "In queue..."
	}
	if active {
		out["progress"] = float64(f.current.step) / float64(max(f.current.steps, 1))
		out["textinfo"] = nil
	}
	writeJSON(w, out)
}

// interrupt is POST /sdapi/v1/interrupt: it stops whatever job runs.
func (f *A1111) interrupt(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	if f.current != nil {
		f.current.interrupt()
	}
	f.mu.Unlock()
	writeJSON(w, map[string]any{})
}

func (f *A1111) sdModels(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []any{}
	for _, c := range f.checkpoints {
		out = append(out, map[string]any{"title": c.title, "model_name": c.modelName, "hash": c.shorthash, "sha256": c.sha256,
			"filename": c.filename, "config": nil})
	}
	writeJSON(w, out)
}

func (f *A1111) samplers(w http.ResponseWriter, r *http.Request) {
	out := []any{}
	for _, s := range A1111Samplers {
		alias := "k_" + strings.NewReplacer(" ", "_", "+", "p").Replace(strings.ToLower(s))
		out = append(out, map[string]any{"name": s, "aliases": []string{alias}, "options": map[string]any{}})
	}
	writeJSON(w, out)
}

func (f *A1111) schedulers(w http.ResponseWriter, r *http.Request) {
	out := []any{}
	for _, s := range a1111Schedulers {
		out = append(out, map[string]any{"name": s.name, "label": s.label, "aliases": s.aliases, "default_rho": -1, "need_inner_model": false})
	}
	writeJSON(w, out)
}

func (f *A1111) options(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"sd_model_checkpoint": f.Loaded(), "samples_format": "png"})
}

// interrogate is POST /sdapi/v1/interrogate {image, model}: a caption of the image.
func (f *A1111) interrogate(w http.ResponseWriter, r *http.Request) {
	var req map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		validationError(w, "body", "not a JSON object")
		return
	}
	var img, model string
	json.Unmarshal(req["image"], &img)
	json.Unmarshal(req["model"], &model)
	if img == "" {
		fastapiError(w, http.StatusNotFound, "HTTPException", "Image not found")
		return
	}
	if _, err := decodeA1111Image(img); err != nil {
		fastapiError(w, http.StatusInternalServerError, "HTTPException", "Invalid encoded image")
		return
	}
	if model != "clip" && model != "deepdanbooru" {
		fastapiError(w, http.StatusNotFound, "HTTPException", "Model not found")
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
