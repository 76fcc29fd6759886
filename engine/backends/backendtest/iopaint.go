package backendtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// IOPaintSamplers are the sd_sampler values of IOPaint's SDSampler.
var IOPaintSamplers = []string{"DPM++ 2M", "DPM++ 2M Karras", "DPM++ 2M SDE", "DPM++ 2M SDE Karras", "DPM++ SDE",
	"DPM++ SDE Karras", "DPM2", "DPM2 Karras", "DPM2 a", "DPM2 a Karras", "Euler", "Euler a", "Heun", "LMS", "LMS Karras",
	"DDIM", "PNDM", "UniPC", "LCM"}

// DiffusionSteps is the number of sampler steps diffusers' inpainting pipeline runs
// for sd_steps and sd_strength (get_timesteps: int(steps × strength)); second-order
// samplers (Heun, DPM2) take two model calls a step but the first, and the progress
// callback comes after each.
func DiffusionSteps(steps int, strength float64, sampler string) int {
	n := min(int(float64(steps)*strength), steps)
	if n < 1 {
		return 0
	}
	if strings.HasPrefix(sampler, "Heun") || strings.HasPrefix(sampler, "DPM2") {
		return 2*n - 1
	}
	return n
}

// IOPaint is a fake IOPaint server running a diffusion inpainting model: POST
// /api/v1/inpaint, the Socket.IO "diffusion_progress" events that go to every
// connected client, and the server config with its samplers. Like IOPaint it runs
// requests side by side, ignores request fields it does not know and accepts data:
// URLs; an unknown sampler fails the job with the model's ValueError.
type IOPaint struct {
	*state
	Server *httptest.Server
	URL    string

	sockMu  sync.Mutex
	sockets map[*sioConn]bool

	runMu         sync.Mutex
	running, most int
}

// MostAtOnce is the largest number of jobs that ran at the same time.
func (f *IOPaint) MostAtOnce() int {
	f.runMu.Lock()
	defer f.runMu.Unlock()
	return f.most
}

func (f *IOPaint) begin() func() {
	f.runMu.Lock()
	f.running++
	f.most = max(f.most, f.running)
	f.runMu.Unlock()
	return func() {
		f.runMu.Lock()
		f.running--
		f.runMu.Unlock()
	}
}

type sioConn struct {
	mu sync.Mutex
	c  *websocket.Conn
}

func (s *sioConn) send(msg string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c.WriteMessage(websocket.TextMessage, []byte(msg))
}

// NewIOPaint starts a fake IOPaint server on 127.0.0.1; the test's cleanup stops it.
func NewIOPaint(t testing.TB) *IOPaint {
	f := &IOPaint{state: newState(), sockets: map[*sioConn]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v1/inpaint", f.inpaint)
	mux.HandleFunc("GET /socket.io/", f.socketIO)
	mux.HandleFunc("GET /api/v1/server-config", f.serverConfig)
	mux.HandleFunc("GET /api/v1/samplers", f.samplers)
	mux.HandleFunc("GET /api/v1/model", f.model)
	f.Server = httptest.NewServer(mux)
	f.URL = f.Server.URL
	t.Cleanup(f.Close)
	return f
}

// Close stops the server and its sockets.
func (f *IOPaint) Close() {
	f.sockMu.Lock()
	for s := range f.sockets {
		s.c.Close()
	}
	f.sockMu.Unlock()
	f.Server.Close()
}

// fastapiError answers the error body of IOPaint's exception middleware.
func fastapiError(w http.ResponseWriter, status int, kind, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": kind, "detail": detail, "body": "", "errors": detail})
}

// iopaintValidation answers FastAPI's 422 (pydantic 2) for a field that does not fit.
func iopaintValidation(w http.ResponseWriter, field, typ, msg string, input any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusUnprocessableEntity)
	json.NewEncoder(w).Encode(map[string]any{"detail": []any{map[string]any{"type": typ, "loc": []any{"body", field}, "msg": msg, "input": input}}})
}

func (f *IOPaint) inpaint(w http.ResponseWriter, r *http.Request) {
	if f.attempt() {
		fastapiError(w, http.StatusServiceUnavailable, "HTTPException", "model is loading")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&fields); err != nil {
		iopaintValidation(w, "body", "json_invalid", "JSON decode error", nil)
		return
	}
	var names []string
	for k := range fields {
		names = append(names, k) // pydantic ignores fields the schema does not have
	}
	sort.Strings(names)
	var req struct {
		Image, Mask, Prompt, NegativePrompt, Sampler string
		Seed                                         int64
		Steps                                        int
		Strength, Guidance                           float64
	}
	req.Steps, req.Strength, req.Guidance, req.Seed, req.Sampler = 50, 1, 7.5, 42, "UniPC" // the schema's defaults
	for _, d := range []struct {
		name string
		v    any
	}{{"image", &req.Image}, {"mask", &req.Mask}, {"prompt", &req.Prompt}, {"negative_prompt", &req.NegativePrompt},
		{"sd_seed", &req.Seed}, {"sd_steps", &req.Steps}, {"sd_strength", &req.Strength}, {"sd_guidance_scale", &req.Guidance},
		{"sd_sampler", &req.Sampler}} {
		if raw, ok := fields[d.name]; ok {
			if err := json.Unmarshal(raw, d.v); err != nil {
				iopaintValidation(w, d.name, "parsing", err.Error(), string(raw))
				return
			}
		}
	}
	if req.Strength > 1 {
		iopaintValidation(w, "sd_strength", "less_than_equal", "Input should be less than or equal to 1", req.Strength)
		return
	}
	img, err := decodeB64Image(req.Image)
	if err != nil {
		fastapiError(w, http.StatusInternalServerError, "TypeError", "image: "+err.Error())
		return
	}
	mm, err := decodeB64Image(req.Mask)
	if err != nil {
		fastapiError(w, http.StatusInternalServerError, "TypeError", "mask: "+err.Error())
		return
	}
	if mm.Bounds().Size() != img.Bounds().Size() {
		fastapiError(w, http.StatusBadRequest, "HTTPException",
			fmt.Sprintf("Image size(%v) and mask size(%v) not match.", img.Bounds().Size(), mm.Bounds().Size()))
		return
	}
	if !slices.Contains(IOPaintSamplers, req.Sampler) {
		fastapiError(w, http.StatusInternalServerError, "ValueError", req.Sampler)
		return
	}
	steps := DiffusionSteps(req.Steps, req.Strength, req.Sampler)
	if steps < 1 {
		fastapiError(w, http.StatusInternalServerError, "ValueError", fmt.Sprintf("After adjusting the num_inference_steps by strength parameter: %g, the number of pipeline steps is 0 which is < 1 and not appropriate for this pipeline.", req.Strength))
		return
	}
	mask, _ := grayMask(mm)
	sc := f.get()
	job := f.record(Job{Prompt: req.Prompt, Negative: req.NegativePrompt, Seed: req.Seed, Steps: req.Steps,
		Strength: req.Strength, Guidance: req.Guidance, Width: img.Bounds().Dx(), Height: img.Bounds().Dy(),
		Masked: mask != nil, Sampler: req.Sampler, Fields: names}, OutcomeRunning)
	defer f.begin()()
	gone := r.Context().Done()
	if sc.DropAnswer {
		// The connection goes; IOPaint's handler runs on.
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
		w, gone = discardWriter{}, nil
	}
	if sc.Mode == ModeFail {
		f.end(job, OutcomeFailed)
		st := sc.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		fastapiError(w, st, "RuntimeError", "CUDA out of memory")
		return
	}
	for step := 0; step < steps; step++ {
		f.broadcast(fmt.Sprintf(`42["diffusion_progress",{"step":%d}]`, step))
		if sc.Mode == ModeDrop {
			f.Server.CloseClientConnections()
			f.Server.Listener.Close()
			return
		}
		wait := sc.delay()
		if sc.Mode == ModeHang && step == 0 {
			wait = time.Hour
		}
		select {
		case <-gone:
			f.end(job, OutcomeAbandoned) // the client went away; IOPaint finishes and drops the image
			return
		case <-time.After(wait):
		}
	}
	f.broadcast(`42["diffusion_finish"]`)
	f.end(job, OutcomeDone)
	body := answer(sc.Mode, img, mask, req.Seed)
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("X-Seed", fmt.Sprint(req.Seed))
	if sc.Mode == ModeGarbage {
		w.Header().Set("Content-Type", "text/html")
	}
	w.Write(body)
}

func (f *IOPaint) serverConfig(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, map[string]any{"plugins": []any{}, "modelInfos": []any{iopaintModel}, "removeBGModel": "briaai/RMBG-1.4",
		"enableFileManager": false, "enableAutoSaving": false, "enableControlnet": false, "disableModelSwitch": false,
		"isDesktop": false, "samplers": IOPaintSamplers})
}

func (f *IOPaint) samplers(w http.ResponseWriter, r *http.Request) { writeJSON(w, IOPaintSamplers) }

func (f *IOPaint) model(w http.ResponseWriter, r *http.Request) { writeJSON(w, iopaintModel) }

var iopaintModel = map[string]any{"name": "runwayml/stable-diffusion-inpainting", "path": "runwayml/stable-diffusion-inpainting",
	"model_type": "diffusers_sd_inpaint", "support_strength": true, "support_outpainting": true, "need_prompt": true}

// decodeB64Image is IOPaint's decode_base64_to_image: plain base64 or a data: URL.
func decodeB64Image(s string) (imageLike, error) {
	if s == "" {
		return nil, fmt.Errorf("missing")
	}
	if strings.HasPrefix(s, "data:image/") || strings.HasPrefix(s, "data:application/octet-stream;base64,") {
		if _, rest, ok := strings.Cut(s, ";"); ok {
			if _, b64, ok := strings.Cut(rest, ","); ok {
				s = b64
			}
		}
	}
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("not base64: %v", err)
	}
	return decodeImage(b)
}

func (f *IOPaint) broadcast(msg string) {
	f.sockMu.Lock()
	defer f.sockMu.Unlock()
	for s := range f.sockets {
		s.send(msg)
	}
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

// socketIO speaks Engine.IO 4 over the WebSocket transport: open packet, namespace
// connect ("40"), server pings ("2") that the client must answer ("3").
func (f *IOPaint) socketIO(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("EIO") != "4" || q.Get("transport") != "websocket" {
		http.Error(w, `{"code":0,"message":"Transport unknown"}`, http.StatusBadRequest)
		return
	}
	c, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	s := &sioConn{c: c}
	defer c.Close()
	s.send(`0{"sid":"fake-sid","upgrades":[],"pingInterval":25000,"pingTimeout":20000,"maxPayload":1000000}`)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, msg, err := c.ReadMessage()
	if err != nil || string(msg) != "40" {
		return
	}
	f.sockMu.Lock()
	f.sockets[s] = true
	f.sockMu.Unlock()
	defer func() {
		f.sockMu.Lock()
		delete(f.sockets, s)
		f.sockMu.Unlock()
	}()
	s.send(`40{"sid":"fake-namespace-sid"}`)
	s.send("2")
	_, msg, err = c.ReadMessage()
	if err != nil || string(msg) != "3" {
		return // a client that does not answer pings is dropped, as python-socketio does
	}
	c.SetReadDeadline(time.Time{})
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			return
		}
	}
}
