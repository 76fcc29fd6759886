package backendtest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// iopaintFields are the InpaintRequest fields of IOPaint's iopaint/schema.py; any
// other name is refused.
var iopaintFields = map[string]bool{
	"image": true, "mask": true, "ldm_steps": true, "ldm_sampler": true, "zits_wireframe": true,
	"hd_strategy": true, "hd_strategy_crop_trigger_size": true, "hd_strategy_crop_margin": true,
	"hd_strategy_resize_limit": true, "prompt": true, "negative_prompt": true, "use_croper": true,
	"croper_x": true, "croper_y": true, "croper_height": true, "croper_width": true, "use_extender": true,
	"extender_x": true, "extender_y": true, "extender_height": true, "extender_width": true,
	"sd_scale": true, "sd_mask_blur": true, "sd_strength": true, "sd_steps": true,
	"sd_guidance_scale": true, "sd_sampler": true, "sd_seed": true, "sd_match_histograms": true,
	"sd_outpainting_softness": true, "sd_outpainting_space": true, "sd_lcm_lora": true,
	"sd_keep_unmasked_area": true, "cv2_flag": true, "cv2_radius": true,
	"paint_by_example_example_image": true, "p2p_image_guidance_scale": true, "enable_controlnet": true,
	"controlnet_conditioning_scale": true, "controlnet_method": true, "enable_brushnet": true,
	"brushnet_method": true, "brushnet_conditioning_scale": true, "enable_powerpaint_v2": true,
	"powerpaint_task": true, "fitting_degree": true,
}

// IOPaint is a fake IOPaint server: POST /api/v1/inpaint and Socket.IO progress.
type IOPaint struct {
	*state
	Server *httptest.Server
	URL    string

	sockMu  sync.Mutex
	sockets map[*sioConn]bool
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

func (f *IOPaint) inpaint(w http.ResponseWriter, r *http.Request) {
	if f.attempt() {
		fastapiError(w, http.StatusServiceUnavailable, "HTTPException", "model is loading")
		return
	}
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		fastapiError(w, http.StatusUnprocessableEntity, "RequestValidationError", "body must be application/json")
		return
	}
	var fields map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&fields); err != nil {
		fastapiError(w, http.StatusUnprocessableEntity, "RequestValidationError", "body is not a JSON object: "+err.Error())
		return
	}
	var names []string
	for k := range fields {
		if !iopaintFields[k] {
			fastapiError(w, http.StatusUnprocessableEntity, "RequestValidationError", fmt.Sprintf("unknown field %q", k))
			return
		}
		names = append(names, k)
	}
	var req struct {
		Image, Mask, Prompt, NegativePrompt string
		Seed                                int64
		Steps                               int
		Strength, Guidance                  float64
	}
	req.Steps, req.Strength, req.Guidance, req.Seed = 50, 1, 7.5, 42 // the schema's defaults
	for _, d := range []struct {
		name string
		v    any
	}{{"image", &req.Image}, {"mask", &req.Mask}, {"prompt", &req.Prompt}, {"negative_prompt", &req.NegativePrompt},
		{"sd_seed", &req.Seed}, {"sd_steps", &req.Steps}, {"sd_strength", &req.Strength}, {"sd_guidance_scale", &req.Guidance}} {
		if raw, ok := fields[d.name]; ok {
			if err := json.Unmarshal(raw, d.v); err != nil {
				fastapiError(w, http.StatusUnprocessableEntity, "RequestValidationError", fmt.Sprintf("%s: %v", d.name, err))
				return
			}
		}
	}
	if req.Strength > 1 || req.Strength <= 0 || req.Steps <= 0 {
		fastapiError(w, http.StatusUnprocessableEntity, "RequestValidationError", "sd_strength must be in (0, 1] and sd_steps positive")
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
	mask, marked := grayMask(mm)
	if mask != nil && !marked {
		fastapiError(w, http.StatusBadRequest, "HTTPException", "mask marks nothing")
		return
	}
	sc := f.get()
	f.record(Job{Prompt: req.Prompt, Negative: req.NegativePrompt, Seed: req.Seed, Steps: req.Steps,
		Strength: req.Strength, Guidance: req.Guidance, Width: img.Bounds().Dx(), Height: img.Bounds().Dy(),
		Masked: mask != nil, Fields: names})
	if sc.Mode == ModeFail {
		st := sc.Status
		if st == 0 {
			st = http.StatusInternalServerError
		}
		fastapiError(w, st, "RuntimeError", "CUDA out of memory")
		return
	}
	for step := 0; step < sc.steps(); step++ {
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
		case <-r.Context().Done():
			f.cancel() // the client went away; IOPaint finishes and drops the image
			return
		case <-time.After(wait):
		}
	}
	f.broadcast(`42["diffusion_finish"]`)
	body := answer(sc.Mode, img, mask, req.Seed)
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("X-Seed", fmt.Sprint(req.Seed))
	if sc.Mode == ModeGarbage {
		w.Header().Set("Content-Type", "text/html")
	}
	w.Write(body)
}

func decodeB64Image(s string) (imageLike, error) {
	if s == "" {
		return nil, fmt.Errorf("missing")
	}
	if strings.HasPrefix(s, "data:") {
		return nil, fmt.Errorf("a data: URL is not plain base64")
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
